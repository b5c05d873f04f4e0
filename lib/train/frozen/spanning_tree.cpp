#include "train/frozen/spanning_tree.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace kglm::train::frozen {

namespace {

constexpr double kAbsent = -std::numeric_limits<double>::infinity();

// Chu-Liu/Edmonds on a dense graph of m nodes (node 0 the root): w[d · m + h] the score of the
// edge h → d (kAbsent when there is none). Returns the head of every node (head[0] = -1).
std::vector<int64_t> arborescence(const std::vector<double>& w, int64_t m) {
  std::vector<int64_t> head(static_cast<size_t>(m), -1);
  for (int64_t d = 1; d < m; ++d) {
    int64_t best = -1;
    for (int64_t h = 0; h < m; ++h)
      if (h != d && w[d * m + h] != kAbsent && (best < 0 || w[d * m + h] > w[d * m + best])) best = h;
    if (best < 0) throw Error("maximum_spanning_tree: a word can take no head");
    head[d] = best;
  }
  // A cycle among the best incoming edges, if any.
  std::vector<int64_t> mark(static_cast<size_t>(m), -1);
  std::vector<int64_t> cycle;
  for (int64_t start = 1; start < m && cycle.empty(); ++start) {
    int64_t v = start;
    while (v > 0 && mark[v] < 0) {
      mark[v] = start;
      v = head[v];
    }
    if (v > 0 && mark[v] == start) {  // v lies on a cycle found from this start
      for (int64_t u = head[v]; u != v; u = head[u]) cycle.push_back(u);
      cycle.push_back(v);
    }
  }
  if (cycle.empty()) return head;

  // Contract the cycle into one node c: the others keep their order, c comes last.
  std::vector<char> in_cycle(static_cast<size_t>(m), 0);
  for (int64_t v : cycle) in_cycle[v] = 1;
  std::vector<int64_t> index(static_cast<size_t>(m), -1), node;  // old → new, new → old (outside the cycle)
  for (int64_t v = 0; v < m; ++v)
    if (!in_cycle[v]) {
      index[v] = static_cast<int64_t>(node.size());
      node.push_back(v);
    }
  const auto k = static_cast<int64_t>(node.size()) + 1, c = k - 1;
  std::vector<double> cw(static_cast<size_t>(k * k), kAbsent);
  std::vector<int64_t> enter(static_cast<size_t>(k), -1);  // for an edge u → c: the cycle node it enters
  std::vector<int64_t> leave(static_cast<size_t>(k), -1);  // for an edge c → d: the cycle node it leaves
  for (int64_t d = 0; d < m; ++d)
    for (int64_t h = 0; h < m; ++h) {
      const double s = w[d * m + h];
      if (h == d || s == kAbsent || (in_cycle[d] && in_cycle[h])) continue;
      if (in_cycle[d]) {  // entering the cycle: the gain over the cycle edge it replaces
        const double gain = s - w[d * m + head[d]];
        double& to = cw[c * k + index[h]];
        if (gain > to) to = gain, enter[index[h]] = d;
      } else if (in_cycle[h]) {  // leaving the cycle
        double& to = cw[index[d] * k + c];
        if (s > to) to = s, leave[index[d]] = h;
      } else {
        cw[index[d] * k + index[h]] = s;
      }
    }
  const std::vector<int64_t> ch = arborescence(cw, k);
  // Expand: the cycle keeps its edges except at the node the chosen entering edge reaches.
  std::vector<int64_t> out(head);
  for (int64_t i = 1; i < k - 1; ++i) {
    const int64_t d = node[i];
    out[d] = ch[i] == c ? leave[i] : node[ch[i]];
  }
  out[enter[ch[c]]] = node[ch[c]];
  return out;
}

}  // namespace

std::vector<int32_t> maximum_spanning_tree(std::span<const double> scores, int64_t n) {
  const int64_t m = n + 1;
  if (static_cast<int64_t>(scores.size()) != m * m) throw Error("maximum_spanning_tree: the scores are not (n+1)²");
  if (n == 0) return {};
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (int64_t d = 1; d < m; ++d)
    for (int64_t h = 0; h < m; ++h)
      if (h != d) {
        const double s = scores[d * m + h];
        if (!std::isfinite(s)) throw Error("maximum_spanning_tree: a score is not finite");
        low = std::min(low, s), high = std::max(high, s);
      }
  // Any two trees differ by less than n · (high − low): a larger penalty per root edge makes one
  // root edge always better than two.
  const double penalty = static_cast<double>(n) * (high - low) + 1;
  std::vector<double> w(scores.begin(), scores.end());
  for (int64_t d = 1; d < m; ++d) {
    w[d * m + d] = kAbsent;
    w[d * m] -= penalty;
  }
  for (int64_t h = 0; h < m; ++h) w[h] = kAbsent;  // nothing enters the root
  const std::vector<int64_t> head = arborescence(w, m);
  return std::vector<int32_t>(head.begin() + 1, head.end());
}

double tree_score(std::span<const double> scores, std::span<const int32_t> heads) {
  const auto m = static_cast<int64_t>(heads.size()) + 1;
  double s = 0;
  for (int64_t d = 1; d < m; ++d) s += scores[d * m + heads[static_cast<size_t>(d - 1)]];
  return s;
}

}  // namespace kglm::train::frozen
