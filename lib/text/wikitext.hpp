// Wikitext -> plain text with link spans and sections, following how MediaWiki renders a page:
// templates, tables, references, comments and media are removed, internal links become their
// anchor text with a span to the normalised target. No C/C++ library implements MediaWiki's
// markup, so this cleaner is written by hand; see man 1 wiki-extract for the exact rules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "text/document.hpp"
#include "text/wikitext_markup.hpp"

namespace kglm::text {

// Fills doc.text, links, sections and root_end (doc.id and doc.title are left as they are).
void clean_wikitext(std::string_view wikitext, const CleanOptions& options, Document& doc,
                    CleanReport* report = nullptr);

// The target of a "#REDIRECT [[Target]]" page (normalised), or "" when the text is no redirect.
std::string redirect_target(std::string_view wikitext);

// MediaWiki's title normalisation: character references and %XX decoded, underscores to spaces,
// runs of spaces collapsed, trimmed, "#fragment" dropped, first letter upper-cased.
std::string normalize_title(std::string_view raw);

}  // namespace kglm::text
