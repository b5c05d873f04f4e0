// Silver named-entity data from Wikipedia links, as WikiANN built it (Pan et al. 2017): each link of
// a wiki-extract document is resolved to its KG item through the wiki's sitelinks, the item typed
// through P31/P279 (EntityTyper), and the sentence's words tagged BIO with those types. Unlinked
// later mentions of a typed anchor, or of the article's own title, in the same article take the
// anchor's type (Nothman et al. 2013: Wikipedia links only an entity's first mention). Written in
// XTREME's PAN-X format, LANG:word<TAB>tag, a blank line after each sentence. The tool in bin/
// (kg-align ner) only parses options and calls generate_silver_ner().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cli.hpp"
#include "core/stats.hpp"
#include "gen/entity_types.hpp"

namespace kglm::gen {

struct SilverNerOptions : RunOptions {
  std::string kg;
  std::string redirects;    // wiki-extract --redirects table (optional)
  std::string lang = "en";  // the documents' language: PAN-X prefix, sentence and word rules
  std::string site;         // sitelinks to resolve titles with; "" = LANG + "wiki"
  std::vector<TypeRoot> types = default_type_roots();
  uint32_t max_depth = 10;  // P279 steps from a root
  uint32_t min_entities = 1;
  uint32_t max_words = 128;
  bool propagate = true;
  // Documents (or sentences) dealt to DIR/train.panx, dev.panx, test.panx by a seeded hash of
  // their id (and number).
  std::string split_dir;
  double dev_share = 0.1, test_share = 0.1;
  bool split_sentences = false;
};

Stats generate_silver_ner(const SilverNerOptions& options);

}  // namespace kglm::gen
