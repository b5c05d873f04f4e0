#include "kg/cycles.hpp"

#include <algorithm>
#include <numeric>

namespace kglm::kg {

std::pair<int, int> cycle_edge_ends(uint8_t kind, size_t e) {
  static const int kTriangle[3][2] = {{0, 1}, {1, 2}, {2, 0}};
  static const int kQuad[5][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {1, 3}};
  const int* ends = kind == 3 ? kTriangle[e] : kQuad[e];
  return {ends[0], ends[1]};
}

CycleFinder::CycleFinder(const CycleGraph& graph) : g_(graph) {
  const uint32_t n = g_.node_count();
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0u);
  std::sort(order_.begin(), order_.end(),
            [&](uint32_t a, uint32_t b) { return g_.degree(a) != g_.degree(b) ? g_.degree(a) < g_.degree(b) : a < b; });
  rank_.resize(n);
  for (uint32_t i = 0; i < n; ++i) rank_[order_[i]] = i;
  out_offsets_.assign(static_cast<size_t>(n) + 1, 0);
  for (uint32_t u = 0; u < n; ++u) {
    uint64_t higher = 0;
    for (const uint32_t* v = g_.neighbors_begin(u); v != g_.neighbors_end(u); ++v) higher += rank_[*v] > rank_[u];
    out_offsets_[u + 1] = out_offsets_[u] + higher;
  }
  out_nodes_.resize(out_offsets_.back());
  out_pairs_.resize(out_offsets_.back());
  for (uint32_t u = 0; u < n; ++u) {
    uint64_t at = out_offsets_[u];
    const uint32_t* p = g_.pairs_begin(u);
    for (const uint32_t* v = g_.neighbors_begin(u); v != g_.neighbors_end(u); ++v, ++p) {
      if (rank_[*v] <= rank_[u]) continue;
      out_nodes_[at] = *v;
      out_pairs_[at++] = *p;
    }
  }
}

void CycleFinder::triangles(uint32_t first, uint32_t last, Scratch& scratch,
                            const std::function<void(const Cycle&)>& fn) const {
  // Pair index + 1 of the edge u-w, 0 = unmarked; every mark is cleared again before returning.
  if (scratch.mark.size() != g_.node_count()) scratch.mark.assign(g_.node_count(), 0);
  Cycle c;
  c.kind = 3;
  for (uint32_t r = first; r < last; ++r) {
    const uint32_t u = order_[r];
    const uint64_t begin = out_offsets_[u], end = out_offsets_[u + 1];
    if (end - begin < 2) continue;
    for (uint64_t i = begin; i < end; ++i) scratch.mark[out_nodes_[i]] = out_pairs_[i] + 1;
    for (uint64_t i = begin; i < end; ++i) {
      const uint32_t v = out_nodes_[i];
      for (uint64_t j = out_offsets_[v]; j < out_offsets_[v + 1]; ++j) {
        const uint32_t w = out_nodes_[j];
        if (scratch.mark[w] == 0) continue;
        c.nodes = {u, v, w, UINT32_MAX};
        c.pairs = {out_pairs_[i], out_pairs_[j], scratch.mark[w] - 1, UINT32_MAX, UINT32_MAX};
        fn(c);
      }
    }
    for (uint64_t i = begin; i < end; ++i) scratch.mark[out_nodes_[i]] = 0;
  }
}

void CycleFinder::diamonds(uint32_t first, uint32_t last, Scratch& scratch,
                           const std::function<void(const Cycle&)>& fn) const {
  Cycle c;
  c.kind = 4;
  for (uint32_t r = first; r < last; ++r) {
    const uint32_t x = order_[r];
    for (uint64_t e = out_offsets_[x]; e < out_offsets_[x + 1]; ++e) {
      const uint32_t y = out_nodes_[e], p_xy = out_pairs_[e];
      // Common neighbours of x and y: a merge of the two sorted lists.
      auto& common = scratch.common;
      common.clear();
      const uint32_t *a = g_.neighbors_begin(x), *a_end = g_.neighbors_end(x), *pa = g_.pairs_begin(x);
      const uint32_t *b = g_.neighbors_begin(y), *b_end = g_.neighbors_end(y), *pb = g_.pairs_begin(y);
      while (a != a_end && b != b_end) {
        if (*a < *b) {
          ++a, ++pa;
        } else if (*b < *a) {
          ++b, ++pb;
        } else {
          common.push_back({*a, *pa, *pb});
          ++a, ++pa, ++b, ++pb;
        }
      }
      for (size_t i = 0; i < common.size(); ++i) {
        for (size_t j = i + 1; j < common.size(); ++j) {
          const auto& [na, p_xa, p_ya] = common[i];
          const auto& [nb, p_xb, p_yb] = common[j];
          const uint32_t p_ab = g_.pair(na, nb);
          c.two_diagonals = p_ab != UINT32_MAX;
          // A K4 is found from each of its 6 edges: keep it for the smallest pair only.
          if (c.two_diagonals && std::min({p_xa, p_ya, p_xb, p_yb, p_ab}) < p_xy) continue;
          c.nodes = {na, x, nb, y};
          c.pairs = {p_xa, p_xb, p_yb, p_ya, p_xy};
          fn(c);
        }
      }
    }
  }
}

}  // namespace kglm::kg
