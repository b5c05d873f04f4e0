#include "text/wikitext_markup.hpp"

#include <algorithm>
#include <string>

#include "text/unicode.hpp"

namespace kglm::text {

LinkNamespaces LinkNamespaces::english() {
  LinkNamespaces ns;
  ns.dropped = {"file", "image", "category"};
  for (const char* name : {"media",
                           "special",
                           "talk",
                           "user",
                           "user talk",
                           "wikipedia",
                           "wikipedia talk",
                           "wp",
                           "project",
                           "file talk",
                           "image talk",
                           "mediawiki",
                           "mediawiki talk",
                           "template",
                           "template talk",
                           "help",
                           "help talk",
                           "category talk",
                           "portal",
                           "portal talk",
                           "book",
                           "book talk",
                           "draft",
                           "draft talk",
                           "education program",
                           "education program talk",
                           "timedtext",
                           "timedtext talk",
                           "module",
                           "module talk",
                           "gadget",
                           "gadget talk",
                           "gadget definition",
                           "gadget definition talk",
                           "topic",
                           "mos",
                           "wt",
                           "t",
                           "h",
                           "cat",
                           "p"})
    ns.other.insert(name);
  // Interwiki prefixes of the sister projects: inline links shown as text.
  for (const char* name :
       {"w",     "wikt",          "wiktionary", "wikipedia",  "commons", "c",           "s",         "wikisource",
        "q",     "wikiquote",     "b",          "wikibooks",  "n",       "wikinews",    "v",         "wikiversity",
        "voy",   "wikivoyage",    "d",          "wikidata",   "species", "wikispecies", "meta",      "m",
        "mw",    "mediawikiwiki", "phab",       "foundation", "wmf",     "outreach",    "incubator", "doi",
        "arxiv", "google",        "imdb",       "oclc"})
    ns.other.insert(name);
  return ns;
}

void LinkNamespaces::add(int key, std::string_view name) {
  std::string lower = ascii_lower(trim(name));
  std::replace(lower.begin(), lower.end(), '_', ' ');
  if (lower.empty()) return;
  if (key == 6 || key == 14)
    dropped.insert(lower);
  else
    other.insert(lower);
}

bool is_language_prefix(std::string_view lower) {
  if (lower == "simple") return true;
  // ISO 639 codes of two or three letters, optionally with subtags: "de", "zh-min-nan", "be-tarask".
  size_t i = 0;
  while (i < lower.size() && lower[i] >= 'a' && lower[i] <= 'z') ++i;
  if (i < 2 || i > 3) return false;
  while (i < lower.size()) {
    if (lower[i] != '-') return false;
    size_t start = ++i;
    while (i < lower.size() && lower[i] >= 'a' && lower[i] <= 'z') ++i;
    if (i == start || i - start > 8) return false;
  }
  return true;
}

}  // namespace kglm::text
