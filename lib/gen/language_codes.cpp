#include "gen/language_codes.hpp"

#include <unicode/uloc.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <set>

#include "core/error.hpp"

namespace kglm::gen {

namespace {

// Wikimedia's codes that are not BCP-47 tags with an ICU-known language (wikis and label
// languages of Wikidata); written by hand: no library lists them.
constexpr std::array<std::string_view, 18> kWikimediaCodes = {
    "simple",  "als",      "bat-smg",      "be-x-old",   "be-tarask", "cbk-zam", "fiu-vro", "map-bms", "nds-nl",
    "roa-rup", "roa-tara", "zh-classical", "zh-min-nan", "zh-yue",    "eml",     "nrm",     "mo",      "bh"};

// Codes ISO withdrew, which ICU no longer lists.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kDeprecated = {
    {{"iw", "he"}, {"in", "id"}, {"ji", "yi"}, {"jw", "jv"}}};

const std::set<std::string, std::less<>>& iso_languages() {
  static const auto* set = [] {
    auto* s = new std::set<std::string, std::less<>>();
    for (const char* const* l = uloc_getISOLanguages(); *l != nullptr; ++l) s->insert(*l);
    return s;
  }();
  return *set;
}

// ICU's ISO list leaves out some codes it has display names for (tl, Tagalog).
bool icu_knows(std::string_view language) {
  if (iso_languages().count(language) > 0) return true;
  const std::string code(language);
  UChar name[64];
  UErrorCode status = U_ZERO_ERROR;
  int32_t n = uloc_getDisplayLanguage(code.c_str(), "en", name, 64, &status);
  return status == U_ZERO_ERROR && n > 0 && code != "und";
}

bool is_country(std::string_view code) {
  for (const char* const* c = uloc_getISOCountries(); *c != nullptr; ++c) {
    if (code.size() == 2 && std::tolower(static_cast<unsigned char>((*c)[0])) == code[0] &&
        std::tolower(static_cast<unsigned char>((*c)[1])) == code[1])
      return true;
  }
  return false;
}

// The language most likely spoken in a country ("jp" -> "ja"), from CLDR's likely subtags.
std::string likely_language_of_country(std::string_view country) {
  std::string tag = "und_" + std::string(country);
  std::transform(tag.begin() + 4, tag.end(), tag.begin() + 4, [](unsigned char c) { return std::toupper(c); });
  char maximal[ULOC_FULLNAME_CAPACITY];
  UErrorCode status = U_ZERO_ERROR;
  uloc_addLikelySubtags(tag.c_str(), maximal, sizeof maximal, &status);
  if (U_FAILURE(status)) return "";
  char language[ULOC_LANG_CAPACITY];
  status = U_ZERO_ERROR;
  uloc_getLanguage(maximal, language, sizeof language, &status);
  return U_FAILURE(status) || std::strcmp(language, "und") == 0 ? "" : language;
}

// The two-letter code whose ISO 639-2 code is `three` ("deu" -> "de").
std::string two_letter_for(std::string_view three) {
  for (const std::string& l : iso_languages()) {
    if (l.size() != 2) continue;
    if (three == uloc_getISO3Language(l.c_str())) return l;
  }
  return "";
}

std::string suggestion(std::string_view primary) {
  for (const auto& [old_code, new_code] : kDeprecated)
    if (primary == old_code) return std::string(new_code);
  if (primary.size() == 3) return two_letter_for(primary);
  if (primary.size() == 2 && is_country(primary)) return likely_language_of_country(primary);
  return "";
}

bool well_formed_subtag(std::string_view s) {
  return !s.empty() && s.size() <= 8 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

}  // namespace

std::string language_code_problem(std::string_view code) {
  if (std::find(kWikimediaCodes.begin(), kWikimediaCodes.end(), code) != kWikimediaCodes.end()) return "";
  const std::string shown = "'" + std::string(code) + "'";
  if (code.empty()) return "an empty language code";
  std::string lower(code);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower != code) return shown + " is not a language code: Wikidata's are lower case ('" + lower + "')";
  std::string_view primary = code.substr(0, code.find_first_of("-_"));
  std::string_view rest = code.substr(primary.size());
  while (!rest.empty()) {
    if (rest[0] == '_') return shown + " is not a language code: subtags are joined with '-'";
    rest.remove_prefix(1);
    std::string_view subtag = rest.substr(0, rest.find('-'));
    if (!well_formed_subtag(subtag)) return shown + " is not a well-formed BCP-47 language tag";
    rest.remove_prefix(subtag.size());
  }
  const bool deprecated =
      std::any_of(kDeprecated.begin(), kDeprecated.end(), [&](const auto& pair) { return pair.first == primary; });
  const bool letters =
      !deprecated && std::all_of(primary.begin(), primary.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  if (letters && (primary.size() == 2 || primary.size() == 3) && icu_knows(primary) &&
      (primary.size() == 2 || two_letter_for(primary).empty()))
    return "";
  std::string message = shown + " is not a language code";
  if (std::string better = suggestion(primary); !better.empty()) {
    message += ": did you mean '" + better + std::string(code.substr(primary.size())) + "'?";
  } else {
    message += " (ISO 639 as Wikidata uses it: en, fr, zh-hant, yue, ...)";
  }
  return message;
}

void validate_language_codes(const std::vector<std::string>& codes, std::string_view option) {
  std::string problems;
  for (const std::string& code : codes) {
    std::string problem = language_code_problem(code);
    if (problem.empty()) continue;
    problems += problems.empty() ? "" : "; ";
    problems += problem;
  }
  if (!problems.empty()) throw UsageError(std::string(option) + ": " + problems);
}

}  // namespace kglm::gen
