#include "kg/cycle_graph.hpp"

#include <absl/container/flat_hash_map.h>
#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/error.hpp"
#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"
#include "core/rng.hpp"
#include "core/string_hash.hpp"

namespace kglm::kg {

CycleGraph CycleGraph::build(uint32_t nodes, std::vector<GraphEdge> edges, const GraphOptions& options, Stats& stats) {
  const uint64_t max_degree = options.max_degree;
  struct Directed {
    uint32_t u, v, relation;
    uint8_t direction;
  };
  std::vector<Directed> all;
  all.reserve(edges.size());
  for (const GraphEdge& e : edges) {
    if (e.subject == e.object) {
      stats.add("self_loops");
      continue;
    }
    bool forward = e.subject < e.object;
    all.push_back({forward ? e.subject : e.object, forward ? e.object : e.subject, e.relation,
                   static_cast<uint8_t>(forward ? 0 : 1)});
  }
  std::vector<GraphEdge>().swap(edges);
  std::sort(all.begin(), all.end(), [](const Directed& a, const Directed& b) {
    return std::tie(a.u, a.v, a.relation, a.direction) < std::tie(b.u, b.v, b.relation, b.direction);
  });
  all.erase(std::unique(all.begin(), all.end(),
                        [](const Directed& a, const Directed& b) {
                          return a.u == b.u && a.v == b.v && a.relation == b.relation && a.direction == b.direction;
                        }),
            all.end());
  // Degrees over distinct pairs, then the hub cap.
  std::vector<uint32_t> degree(nodes, 0);
  for (size_t i = 0; i < all.size(); ++i) {
    if (i > 0 && all[i].u == all[i - 1].u && all[i].v == all[i - 1].v) continue;
    ++degree[all[i].u];
    ++degree[all[i].v];
  }
  std::vector<bool> excluded(nodes, false);
  if (max_degree > 0) {
    for (uint32_t u = 0; u < nodes; ++u) {
      if (degree[u] > max_degree) {
        excluded[u] = true;
        stats.add("excluded_hubs");
      }
    }
  }
  // Hub sampling: a hub of degree d > K keeps the neighbours whose seeded node hash falls in the
  // lowest K/d of the range, so it keeps about K of them, and its work and the cycles through it stay
  // bounded while it remains in the graph (a degree cap removes it with every cycle through it). The
  // hash is the neighbour's, the same for every hub, so the neighbours two hubs keep overlap as much
  // as they can and a cycle through several hubs survives with the smallest of their rates, not
  // their product.
  uint64_t hub_edges = options.hub_edges;
  if (hub_edges == kHubEdgesAuto) {
    uint64_t pairs = 0;
    for (size_t i = 0; i < all.size(); ++i) pairs += i == 0 || all[i].u != all[i - 1].u || all[i].v != all[i - 1].v;
    hub_edges = std::max<uint64_t>(kMinAutoHubEdges, static_cast<uint64_t>(std::ceil(std::sqrt(2.0 * pairs))));
  }
  std::vector<uint64_t> keep_below;
  if (hub_edges > 0) {
    stats.set("hub_edges", static_cast<int64_t>(hub_edges));
    keep_below.assign(nodes, UINT64_MAX);
    for (uint32_t u = 0; u < nodes; ++u) {
      if (excluded[u] || degree[u] <= hub_edges) continue;
      keep_below[u] = static_cast<uint64_t>(static_cast<long double>(hub_edges) / degree[u] * 0x1p64L);
      stats.add("sampled_hubs");
    }
  }
  const uint64_t node_seed = mix64(options.seed ^ 0x6b67637963686262ULL);
  auto node_hash = [&](uint32_t x) { return mix64(node_seed ^ x); };
  CycleGraph g;
  std::vector<uint32_t> kept_degree(nodes, 0);
  int64_t dropped = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const Directed& d = all[i];
    if (excluded[d.u] || excluded[d.v]) continue;
    if (!keep_below.empty() && ((keep_below[d.u] != UINT64_MAX && node_hash(d.v) >= keep_below[d.u]) ||
                                (keep_below[d.v] != UINT64_MAX && node_hash(d.u) >= keep_below[d.v]))) {
      dropped += i == 0 || all[i - 1].u != d.u || all[i - 1].v != d.v;
      continue;
    }
    if (g.pair_u_.empty() || g.pair_u_.back() != d.u || g.pair_v_.back() != d.v) {
      if (!g.pair_u_.empty()) g.relation_offsets_.push_back(static_cast<uint32_t>(g.relations_.size()));
      g.pair_u_.push_back(d.u);
      g.pair_v_.push_back(d.v);
      ++kept_degree[d.u];
      ++kept_degree[d.v];
    }
    g.relations_.push_back(d.relation);
    g.directions_.push_back(d.direction);
  }
  if (!g.pair_u_.empty()) g.relation_offsets_.push_back(static_cast<uint32_t>(g.relations_.size()));
  // CSR adjacency, both directions; pairs are sorted by (u, v), so each list comes out sorted
  // when the smaller-endpoint entries are placed before the larger-endpoint ones per node.
  g.offsets_.assign(static_cast<size_t>(nodes) + 1, 0);
  for (uint32_t u = 0; u < nodes; ++u) g.offsets_[u + 1] = g.offsets_[u] + kept_degree[u];
  g.neighbors_.resize(g.offsets_.back());
  g.pair_of_.resize(g.offsets_.back());
  std::vector<uint64_t> fill(g.offsets_.begin(), g.offsets_.end() - 1);
  for (uint32_t p = 0; p < g.pair_u_.size(); ++p) {  // neighbours smaller than the node: v's lists
    uint64_t at = fill[g.pair_v_[p]]++;
    g.neighbors_[at] = g.pair_u_[p];
    g.pair_of_[at] = p;
  }
  for (uint32_t p = 0; p < g.pair_u_.size(); ++p) {  // then the larger ones: u's lists
    uint64_t at = fill[g.pair_u_[p]]++;
    g.neighbors_[at] = g.pair_v_[p];
    g.pair_of_[at] = p;
  }
  int64_t multi = 0;
  for (uint32_t p = 0; p < g.pair_u_.size(); ++p) multi += g.relations_end(p) - g.relations_begin(p) > 1;
  stats.set("graph_nodes", std::count_if(kept_degree.begin(), kept_degree.end(), [](uint32_t d) { return d > 0; }));
  stats.set("graph_edges", static_cast<int64_t>(g.pair_u_.size()));
  stats.set("multi_relation_pairs", multi);
  if (hub_edges > 0) stats.set("hub_edges_dropped", dropped);
  return g;
}

CycleGraph CycleGraph::from_store(const KgStore& store, const GraphOptions& options, Stats& stats) {
  std::vector<GraphEdge> edges;
  {
    TripleTable t = store.triples();
    std::vector<uint64_t> numbers = store.relation_numbers();
    edges.reserve(t.subject.size());
    for (size_t i = 0; i < t.subject.size(); ++i) {
      uint64_t p = numbers[t.relation[i]];
      if (options.allow_relations && !options.allow_relations->count(p)) continue;
      if (options.deny_relations && options.deny_relations->count(p)) continue;
      edges.push_back({t.subject[i], t.object[i], t.relation[i]});
    }
  }
  stats.set("triples_used", static_cast<int64_t>(edges.size()));
  return build(static_cast<uint32_t>(store.entity_count()), std::move(edges), options, stats);
}

CycleGraph CycleGraph::from_edge_list(const std::string& path, const GraphOptions& options, Stats& stats,
                                      std::vector<std::string>& names, std::vector<std::string>& relation_names) {
  // A flat table: a million names' lookups are the bulk of reading a large edge list.
  absl::flat_hash_map<std::string, uint32_t, StringHash, std::equal_to<>> node_ids, relation_ids;
  auto number = [](auto& ids, std::vector<std::string>& list, std::string_view name) {
    auto it = ids.find(name);
    if (it != ids.end()) return it->second;
    uint32_t id = static_cast<uint32_t>(list.size());
    list.emplace_back(name);
    ids.emplace(std::string(name), id);
    return id;
  };
  std::vector<GraphEdge> edges;
  for_each_data_line(path, [&](uint64_t line, std::string_view text) {
    std::string_view fields[3];
    size_t n = 0, pos = 0;
    while (n < 3) {
      size_t tab = text.find('\t', pos);
      fields[n++] = text.substr(pos, tab == std::string_view::npos ? std::string_view::npos : tab - pos);
      if (tab == std::string_view::npos) break;
      pos = tab + 1;
    }
    if (n < 2 || fields[0].empty() || fields[n - 1].empty())
      throw Error(location(path, line) + "expected subject<TAB>object or subject<TAB>relation<TAB>object");
    uint32_t relation = n == 3 ? number(relation_ids, relation_names, fields[1]) : 0;
    edges.push_back({number(node_ids, names, fields[0]), number(node_ids, names, fields[n - 1]), relation});
  });
  if (relation_names.empty()) relation_names.emplace_back("");
  stats.set("edges_read", static_cast<int64_t>(edges.size()));
  return build(static_cast<uint32_t>(names.size()), std::move(edges), options, stats);
}

uint32_t CycleGraph::pair(uint32_t u, uint32_t v) const {
  const uint32_t* begin = neighbors_begin(u);
  const uint32_t* end = neighbors_end(u);
  const uint32_t* it = std::lower_bound(begin, end, v);
  if (it == end || *it != v) return UINT32_MAX;
  return pair_of_[offsets_[u] + static_cast<uint64_t>(it - begin)];
}

}  // namespace kglm::kg
