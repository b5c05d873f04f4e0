// Wikipedia page title -> KG entity: the sitelink of the wiki (enwiki unless told), then through
// wiki-extract's redirects table, then with the first letter capitalised (MediaWiki's first-letter
// rule). EntityCS resolves link targets with it, kg-align article titles, kg-align ner links.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/stats.hpp"
#include "core/string_hash.hpp"
#include "kg/kg_store.hpp"

namespace kglm::gen {

class TitleResolver {
 public:
  // Throws Error when the store has no sitelinks of `site`; redirects may be "" (none).
  TitleResolver(const kg::KgStore& store, const std::string& kg_path, const std::string& redirects,
                const std::string& site = "enwiki");
  // The entity row, or -1; counts "<counter>_via_redirect" / "<counter>_via_capitalisation".
  int64_t resolve(std::string_view title, Stats& stats, const std::string& counter) const;
  size_t redirect_count() const { return redirects_.size(); }

 private:
  int64_t direct(std::string_view title) const;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> titles_;
  std::unordered_map<std::string, std::string, StringHash, std::equal_to<>> redirects_;
};

}  // namespace kglm::gen
