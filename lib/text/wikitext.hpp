// Wikitext -> plain text with link spans and sections, following how MediaWiki renders a page:
// templates, tables, references, comments and media are removed, internal links become their
// anchor text with a span to the normalised target. No C/C++ library implements MediaWiki's
// markup, so this cleaner is written by hand; see man 1 wiki-extract for the exact rules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/string_hash.hpp"
#include "text/document.hpp"

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

// Fills doc.text, links, sections and root_end (doc.id and doc.title are left as they are).
void clean_wikitext(std::string_view wikitext, const CleanOptions& options, Document& doc,
                    CleanReport* report = nullptr);

// The target of a "#REDIRECT [[Target]]" page (normalised), or "" when the text is no redirect.
std::string redirect_target(std::string_view wikitext);

// MediaWiki's title normalisation: character references and %XX decoded, underscores to spaces,
// runs of spaces collapsed, trimmed, "#fragment" dropped, first letter upper-cased.
std::string normalize_title(std::string_view raw);

// Interlanguage prefixes ("de", "zh-min-nan", "simple").
bool is_language_prefix(std::string_view lower);

}  // namespace kglm::text
