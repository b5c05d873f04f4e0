#include "gen/entity_types.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "core/error.hpp"
#include "kg/entity.hpp"
#include "kg/entity_parser.hpp"

namespace kglm::gen {

namespace {

constexpr uint64_t kInstanceOf = 31, kSubclassOf = 279;
constexpr uint8_t kUnreached = std::numeric_limits<uint8_t>::max();

// Rows grouped by key: for each key k, rows[first[k], first[k + 1]).
struct Adjacency {
  std::vector<uint64_t> first;
  std::vector<uint32_t> rows;
};

Adjacency group(size_t keys, const std::vector<std::pair<uint32_t, uint32_t>>& edges) {
  Adjacency a;
  a.first.assign(keys + 1, 0);
  for (const auto& [key, row] : edges) ++a.first[key + 1];
  for (size_t k = 0; k < keys; ++k) a.first[k + 1] += a.first[k];
  a.rows.resize(edges.size());
  std::vector<uint64_t> next(a.first.begin(), a.first.end() - 1);
  for (const auto& [key, row] : edges) a.rows[next[key]++] = row;
  return a;
}

}  // namespace

TypeRoot parse_type_root(const std::string& spec) {
  const size_t eq = spec.find('=');
  TypeRoot root;
  root.tag = spec.substr(0, eq);
  const bool tag_ok = !root.tag.empty() && std::all_of(root.tag.begin(), root.tag.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (eq == std::string::npos || !tag_ok)
    throw UsageError("--type takes TAG=Q1,Q2,... (TAG of letters, digits, _), not '" + spec + "'");
  for (size_t begin = eq + 1; begin <= spec.size();) {
    const size_t comma = std::min(spec.find(',', begin), spec.size());
    kg::EntityType type;
    uint64_t number = 0;
    if (!kg::parse_entity_id(std::string_view(spec).substr(begin, comma - begin), type, number) ||
        type != kg::EntityType::item)
      throw UsageError("--type " + spec + ": '" + spec.substr(begin, comma - begin) + "' is not an item id (Q...)");
    root.classes.push_back(number);
    begin = comma + 1;
  }
  return root;
}

std::vector<TypeRoot> default_type_roots() {
  // Beside the three abstract roots, the common direct classes: a short path then decides for
  // items that Wikidata's hierarchy also files under another root (a city is a municipality,
  // which some chains lead to "organization").
  return {
      {"PER", {5}},                                                    // human
      {"ORG", {43229, 4830453, 783794, 2385804, 3918, 7278, 476028}},  // organization, business, company,
                                                                       // educational institution, university,
                                                                       // political party, football club
      {"LOC", {17334923, 2221906, 618123, 56061, 6256, 3624078, 515, 486972, 35657, 82794, 7930989}},
      // location, geographic location, geographical feature, administrative territorial entity,
      // country, sovereign state, city, human settlement, U.S. state, geographic region, city/town
  };
}

EntityTyper::EntityTyper(const kg::KgStore& store, std::vector<TypeRoot> roots, uint32_t max_depth)
    : roots_(std::move(roots)) {
  if (roots_.empty() || roots_.size() > 64) throw UsageError("give between 1 and 64 entity types");
  const size_t n = store.entity_count();
  const std::vector<uint8_t> kinds = store.entity_types();
  const std::vector<uint64_t> numbers = store.entity_numbers();
  std::unordered_map<uint64_t, uint32_t> item_rows;
  for (const TypeRoot& r : roots_)
    for (uint64_t q : r.classes) item_rows.emplace(q, UINT32_MAX);
  for (uint32_t row = 0; row < n; ++row)
    if (kinds[row] == static_cast<uint8_t>(kg::EntityType::item))
      if (auto it = item_rows.find(numbers[row]); it != item_rows.end()) it->second = row;

  // The P31 and (reversed) P279 edges of the item triples.
  const kg::TripleTable t = store.triples();
  const std::vector<uint64_t> relation_numbers = store.relation_numbers();
  std::vector<std::pair<uint32_t, uint32_t>> instance_of, subclasses;  // (item, class), (class, subclass)
  for (size_t i = 0; i < t.subject.size(); ++i) {
    if (t.rank[i] == 0) continue;
    const uint64_t p = relation_numbers[t.relation[i]];
    if (p == kInstanceOf) instance_of.emplace_back(t.subject[i], t.object[i]);
    if (p == kSubclassOf) subclasses.emplace_back(t.object[i], t.subject[i]);
  }
  const Adjacency down = group(n, subclasses);

  // Each tag's distance to every class: a breadth-first walk down from its roots.
  std::vector<std::vector<uint8_t>> distance(roots_.size());
  std::vector<uint32_t> frontier, next;
  for (size_t tag = 0; tag < roots_.size(); ++tag) {
    std::vector<uint8_t>& d = distance[tag];
    d.assign(n, kUnreached);
    frontier.clear();
    for (uint64_t q : roots_[tag].classes) {
      const uint32_t row = item_rows.at(q);
      if (row == UINT32_MAX) {
        missing_.push_back(roots_[tag].tag + ":" + kg::entity_id(kg::EntityType::item, q));
        continue;
      }
      d[row] = 0;
      frontier.push_back(row);
    }
    const uint32_t depth_cap = std::min<uint32_t>(max_depth, kUnreached - 1);
    for (uint32_t depth = 1; depth <= depth_cap && !frontier.empty(); ++depth) {
      next.clear();
      for (uint32_t c : frontier)
        for (uint64_t k = down.first[c]; k < down.first[c + 1]; ++k)
          if (d[down.rows[k]] == kUnreached) {
            d[down.rows[k]] = static_cast<uint8_t>(depth);
            next.push_back(down.rows[k]);
          }
      frontier.swap(next);
    }
  }

  // An item's distance to a tag: the least over its classes; the nearest tag wins.
  types_.assign(n, -1);
  typed_.assign(roots_.size(), 0);
  std::vector<uint8_t> best(roots_.size());
  const Adjacency classes = group(n, instance_of);
  for (uint32_t row = 0; row < n; ++row) {
    if (classes.first[row] == classes.first[row + 1]) continue;
    std::fill(best.begin(), best.end(), kUnreached);
    for (uint64_t k = classes.first[row]; k < classes.first[row + 1]; ++k)
      for (size_t tag = 0; tag < roots_.size(); ++tag) best[tag] = std::min(best[tag], distance[tag][classes.rows[k]]);
    const auto nearest = std::min_element(best.begin(), best.end());
    if (*nearest == kUnreached) continue;
    types_[row] = static_cast<int8_t>(nearest - best.begin());
    ++typed_[static_cast<size_t>(types_[row])];
    if (std::count_if(best.begin(), best.end(), [](uint8_t d) { return d != kUnreached; }) > 1) ++ambiguous_;
  }
}

}  // namespace kglm::gen
