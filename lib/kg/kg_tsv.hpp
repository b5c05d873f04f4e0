// TSV tables of a KG store (wd-extract --tsv DIR), one '#'-headed file per table.
#pragma once

#include <string>

namespace kglm::kg {

// Writes entities, labels, descriptions, aliases, sitelinks, triples, literals and qualifiers
// .tsv files into dir (created if missing). Tabs, newlines and backslashes in text are escaped
// as \t, \n, \r and \\.
void export_tsv(const std::string& store_path, const std::string& dir);

}  // namespace kglm::kg
