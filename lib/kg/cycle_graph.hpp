// The KG's item triples as an undirected simple graph for cycle search (KMLM §3.2): self-loops
// dropped, each unordered pair once with its list of (relation, direction), hub nodes above a
// degree cap left out or their edges sampled, adjacency in CSR form sorted by node.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/stats.hpp"
#include "kg/kg_store.hpp"

namespace kglm::kg {

// GraphOptions::hub_edges: K = max(kMinAutoHubEdges, sqrt(2 x the graph's pairs)), so that the
// hubs' share of the graph does not vanish as the graph grows.
inline constexpr uint64_t kHubEdgesAuto = UINT64_MAX;
inline constexpr uint64_t kMinAutoHubEdges = 1000;

struct GraphOptions {
  const std::unordered_set<uint64_t>* allow_relations = nullptr;  // P numbers; nullptr: all
  const std::unordered_set<uint64_t>* deny_relations = nullptr;
  uint64_t max_degree = 0;  // nodes with more neighbours are left out; 0: no cap
  // A node with d > hub_edges neighbours keeps about hub_edges of them: those whose seeded node hash
  // is in the lowest hub_edges / d of the range; 0: keep all; kHubEdgesAuto: scaled to the graph.
  uint64_t hub_edges = 0;
  uint64_t seed = 0;
};

// One directed labelled edge of the input.
struct GraphEdge {
  uint32_t subject, object, relation;
};

class CycleGraph {
 public:
  // nodes: node ids are 0..nodes-1 (entity rows).
  // Frees edges as it goes (a full Wikidata's item triples are 10 GB).
  static CycleGraph build(uint32_t nodes, std::vector<GraphEdge> edges, const GraphOptions& options, Stats& stats);
  // The store's item triples with options' relation filters.
  static CycleGraph from_store(const KgStore& store, const GraphOptions& options, Stats& stats);
  // A TSV edge list, "subject<TAB>object" or "subject<TAB>relation<TAB>object" per line ('#' lines
  // skipped); node and relation names are numbered in order of first appearance into names and
  // relation_names. Throws Error with file:line on a malformed line.
  static CycleGraph from_edge_list(const std::string& path, const GraphOptions& options, Stats& stats,
                                   std::vector<std::string>& names, std::vector<std::string>& relation_names);

  uint32_t node_count() const { return static_cast<uint32_t>(offsets_.size() - 1); }
  uint64_t pair_count() const { return pair_u_.size(); }
  // Neighbours of u (sorted ascending) and, in parallel, the pair index of each edge.
  const uint32_t* neighbors_begin(uint32_t u) const { return neighbors_.data() + offsets_[u]; }
  const uint32_t* neighbors_end(uint32_t u) const { return neighbors_.data() + offsets_[u + 1]; }
  const uint32_t* pairs_begin(uint32_t u) const { return pair_of_.data() + offsets_[u]; }
  uint32_t degree(uint32_t u) const { return static_cast<uint32_t>(offsets_[u + 1] - offsets_[u]); }
  // The pair index of {u, v}, or UINT32_MAX when they are not adjacent (binary search).
  uint32_t pair(uint32_t u, uint32_t v) const;
  // Pair p = {u, v} with u < v; its relations [first, last) with relation() and direction()
  // (0: u is the subject, 1: v is the subject).
  uint32_t pair_u(uint32_t p) const { return pair_u_[p]; }
  uint32_t pair_v(uint32_t p) const { return pair_v_[p]; }
  uint32_t relations_begin(uint32_t p) const { return relation_offsets_[p]; }
  uint32_t relations_end(uint32_t p) const { return relation_offsets_[p + 1]; }
  uint32_t relation(uint32_t i) const { return relations_[i]; }
  uint8_t direction(uint32_t i) const { return directions_[i]; }

 private:
  std::vector<uint64_t> offsets_{0};
  std::vector<uint32_t> neighbors_, pair_of_;
  std::vector<uint32_t> pair_u_, pair_v_, relation_offsets_{0}, relations_;
  std::vector<uint8_t> directions_;
};

}  // namespace kglm::kg
