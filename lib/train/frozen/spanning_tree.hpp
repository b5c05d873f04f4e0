// The highest-scoring dependency tree of a sentence: the maximum spanning arborescence rooted at
// ROOT (Chu & Liu 1965; Edmonds 1967), with exactly one word attached to ROOT — every edge from
// ROOT is lowered by a constant larger than any difference of tree scores, so a tree with one root
// edge beats every tree with more, and among those the best one wins. Written here: the graph is
// dense and tiny (a sentence), and no library we use has it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kglm::train::frozen {

// scores[d · (n + 1) + h]: the score of word d (1..n) taking head h (0 = ROOT, 1..n); row 0 and
// the diagonal are ignored; finite values. Returns the head of words 1..n (index 0 is word 1).
std::vector<int32_t> maximum_spanning_tree(std::span<const double> scores, int64_t n);

// The score of a head assignment (heads of words 1..n) under the same matrix.
double tree_score(std::span<const double> scores, std::span<const int32_t> heads);

}  // namespace kglm::train::frozen
