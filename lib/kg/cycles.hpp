// Enumerating the cycles KMLM's reasoning data is made of: every triangle, and every 4-node set
// whose induced subgraph holds a 4-cycle with at least one diagonal (a "diamond", or K4), each
// exactly once by node set. Degree ordering (edges point from lower to higher rank) keeps the
// triangle work near O(m^1.5); diamonds come from the common neighbours of each edge.
// Hand-written: the algorithms are textbook (Chiba-Nishizeki forward orientation), but no C/C++
// library lists diamonds with edge labels.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "kg/cycle_graph.hpp"

namespace kglm::kg {

struct Cycle {
  uint8_t kind = 3;            // 3 or 4
  bool two_diagonals = false;  // a K4: the other diagonal n0-n2 exists too (not listed)
  // Cycle order n0-n1-n2(-n3)-n0; for 4-cycles n1-n3 is the diagonal.
  std::array<uint32_t, 4> nodes{};
  // Pair indexes of the edges: (n0n1, n1n2, n2n0) or (n0n1, n1n2, n2n3, n3n0, n1n3).
  std::array<uint32_t, 5> pairs{};
  size_t edge_count() const { return kind == 3 ? 3 : 5; }
};

// Which positions of Cycle::nodes edge e joins: (0,1) (1,2) (2,0) for triangles; (0,1) (1,2)
// (2,3) (3,0) and the diagonal (1,3) for 4-cycles (man 5 kglm-cycles).
std::pair<int, int> cycle_edge_ends(uint8_t kind, size_t e);

class CycleFinder {
 public:
  explicit CycleFinder(const CycleGraph& graph);

  uint32_t node_count() const { return static_cast<uint32_t>(order_.size()); }
  // The node's place in the degree ordering the enumeration follows.
  uint32_t rank(uint32_t node) const { return rank_[node]; }
  // Per-thread working memory.
  struct Scratch {
    std::vector<uint32_t> mark;
    std::vector<std::array<uint32_t, 3>> common;  // (node, pair to x, pair to y)
  };
  // Triangles whose lowest-ranked node has rank in [first, last).
  void triangles(uint32_t first, uint32_t last, Scratch& scratch, const std::function<void(const Cycle&)>& fn) const;
  // Diamonds and K4s whose (canonical) diagonal's lower-ranked end has rank in [first, last).
  void diamonds(uint32_t first, uint32_t last, Scratch& scratch, const std::function<void(const Cycle&)>& fn) const;

 private:
  const CycleGraph& g_;
  std::vector<uint32_t> order_;  // nodes by (degree, id)
  std::vector<uint32_t> rank_;
  std::vector<uint64_t> out_offsets_;
  std::vector<uint32_t> out_nodes_, out_pairs_;  // neighbours of higher rank
};

}  // namespace kglm::kg
