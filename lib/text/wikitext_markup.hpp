// What the wikitext cleaner (wikitext.hpp) and its removal passes (wikitext_strip.hpp) share: the
// link namespaces, the options, the report of recoverable problems and the error of a page that
// cannot be cleaned.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "core/string_hash.hpp"

namespace kglm::text {

// How link prefixes are treated: links into `dropped` namespaces (File, Image, Category and their
// local names) are removed with their text unless written with a leading colon; links into the
// other namespaces and interwiki prefixes keep their text but get no span.
struct LinkNamespaces {
  StringSet dropped;  // lower-case names
  StringSet other;    // lower-case names
  // English Wikipedia's namespace names and aliases.
  static LinkNamespaces english();
  // Adds a namespace from a dump's <siteinfo> (key 6 = File, 14 = Category are dropped).
  void add(int key, std::string_view name);
};

struct CleanOptions {
  unsigned max_depth = 100;                    // deepest nesting of templates, tables or links before a page fails
  const LinkNamespaces* namespaces = nullptr;  // nullptr: LinkNamespaces::english()
};

// Counters of recoverable markup problems, summed into the tool's statistics.
struct CleanReport {
  uint64_t unterminated = 0;   // templates, tables, tags, comments or links left open
  uint64_t stray_closers = 0;  // }} or ]] without an opener
};

// A page that cannot be cleaned (nesting deeper than max_depth, text too large for the offsets).
class WikitextError : public Error {
 public:
  using Error::Error;
};

// Interlanguage prefixes ("de", "zh-min-nan", "simple").
bool is_language_prefix(std::string_view lower);

}  // namespace kglm::text
