// Is "xx" a language? --langs values are checked before any work starts, so that a typo does
// not produce a corpus of records labelled "xx" holding English text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kglm::gen {

// Empty when `code` is a language code that Wikidata labels can carry: a BCP-47 tag whose primary
// language subtag is an ISO 639 code known to ICU (zh-hant, pt-br, sr-el, yue, ...), or one of
// Wikimedia's own codes (simple, be-x-old, zh-min-nan, ...). Otherwise the reason, with a
// suggestion where one is likely: a country code (jp -> ja, cn -> zh, gr -> el), a deprecated
// code (iw -> he), a three-letter code of a language Wikidata writes with two (deu -> de).
std::string language_code_problem(std::string_view code);

// UsageError naming the option and every bad code, with the suggestions.
void validate_language_codes(const std::vector<std::string>& codes, std::string_view option);

}  // namespace kglm::gen
