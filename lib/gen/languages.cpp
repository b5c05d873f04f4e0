#include "gen/languages.hpp"

#include <algorithm>
#include <sstream>

#include "core/error.hpp"
#include "gen/language_codes.hpp"

namespace kglm::gen {

const std::vector<std::string>& xlmr_languages() {
  // Conneau et al. 2020, Table 6 (CC-100), mapped to Wikidata codes: "no" is Norwegian Bokmål
  // ("nb" in Wikidata), Traditional Chinese is "zh-hant".
  static const std::vector<std::string> langs = {
      "af", "am", "ar", "as", "az", "be", "bg", "bn", "br", "bs", "ca", "cs", "cy", "da",     "de", "el",
      "en", "eo", "es", "et", "eu", "fa", "fi", "fr", "fy", "ga", "gd", "gl", "gu", "ha",     "he", "hi",
      "hr", "hu", "hy", "id", "is", "it", "ja", "jv", "ka", "kk", "km", "kn", "ko", "ku",     "ky", "la",
      "lo", "lt", "lv", "mg", "mk", "ml", "mn", "mr", "ms", "my", "ne", "nl", "nb", "om",     "or", "pa",
      "pl", "ps", "pt", "ro", "ru", "sa", "sd", "si", "sk", "sl", "so", "sq", "sr", "su",     "sv", "sw",
      "ta", "te", "th", "tl", "tr", "ug", "uk", "ur", "uz", "vi", "xh", "yi", "zh", "zh-hant"};
  return langs;
}

std::vector<std::string> parse_language_list(const std::string& list) {
  if (list == "xlmr") return xlmr_languages();
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) throw UsageError("empty language in list '" + list + "'");
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  if (out.empty()) throw UsageError("empty language list");
  validate_language_codes(out, "--langs");
  return out;
}

std::vector<std::string> english_then(const std::vector<std::string>& targets) {
  std::vector<std::string> langs = {"en"};
  for (const std::string& l : targets)
    if (l != "en") langs.push_back(l);
  return langs;
}

}  // namespace kglm::gen
