// Language lists shared by the generators.
#pragma once

#include <string>
#include <vector>

namespace kglm::gen {

// The languages of XLM-R's CC-100 corpus as Wikidata language codes, without the romanized and
// Zawgyi variants (which have no Wikidata labels). EntityCS code-switches into these by default.
const std::vector<std::string>& xlmr_languages();

// "en,fr,de" -> {"en","fr","de"}; "xlmr" -> xlmr_languages(); duplicates removed, order kept.
// Throws UsageError on an empty list, an empty item or a code that is not a language
// (language_codes.hpp).
std::vector<std::string> parse_language_list(const std::string& list);

// {"en"} followed by targets without "en": the label-index order the generators use (English,
// the source language, at index 0).
std::vector<std::string> english_then(const std::vector<std::string>& targets);

}  // namespace kglm::gen
