// The maximum spanning tree with one word under ROOT, against every head assignment of sentences
// of 1 to 6 words (random scores): the same best score, always a tree, always one root; and a
// case where the greedy heads form a cycle and where they put two words under ROOT.
#include "train/frozen/spanning_tree.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace kglm::train::frozen {
namespace {

bool is_tree_with_one_root(const std::vector<int32_t>& heads) {
  const auto n = static_cast<int32_t>(heads.size());
  int roots = 0;
  for (int32_t d = 1; d <= n; ++d) {
    roots += heads[static_cast<size_t>(d - 1)] == 0;
    int32_t v = d;
    for (int32_t steps = 0; v != 0; ++steps) {
      if (steps > n) return false;  // a cycle
      v = heads[static_cast<size_t>(v - 1)];
      if (v < 0 || v > n) return false;
    }
  }
  return roots == 1;
}

// The best score over every assignment that is a tree with one root.
double brute_force(const std::vector<double>& w, int32_t n) {
  std::vector<int32_t> heads(static_cast<size_t>(n), 0);
  double best = -std::numeric_limits<double>::infinity();
  std::function<void(int32_t)> assign = [&](int32_t d) {
    if (d > n) {
      if (is_tree_with_one_root(heads)) best = std::max(best, tree_score(w, heads));
      return;
    }
    for (int32_t h = 0; h <= n; ++h) {
      if (h == d) continue;
      heads[static_cast<size_t>(d - 1)] = h;
      assign(d + 1);
    }
  };
  assign(1);
  return best;
}

TEST(SpanningTree, MatchesEveryTreeOfSmallSentences) {
  for (int32_t n = 1; n <= 6; ++n)
    for (uint64_t trial = 0; trial < (n <= 4 ? 60u : 12u); ++trial) {
      Rng rng(static_cast<uint64_t>(n), trial);
      const int32_t m = n + 1;
      std::vector<double> w(static_cast<size_t>(m * m));
      for (double& v : w) v = std::log(rng.uniform() + 1e-9);  // log-probability-like scores
      const std::vector<int32_t> heads = maximum_spanning_tree(w, n);
      ASSERT_EQ(heads.size(), static_cast<size_t>(n));
      EXPECT_TRUE(is_tree_with_one_root(heads)) << "n " << n << " trial " << trial;
      EXPECT_NEAR(tree_score(w, heads), brute_force(w, n), 1e-9) << "n " << n << " trial " << trial;
    }
}

TEST(SpanningTree, BreaksCyclesAndExtraRoots) {
  // Words 1 and 2 prefer each other (a cycle); word 3 prefers ROOT, as does word 4.
  const int32_t n = 4, m = 5;
  std::vector<double> w(static_cast<size_t>(m * m), -10);
  auto set = [&](int32_t d, int32_t h, double v) { w[static_cast<size_t>(d * m + h)] = v; };
  set(1, 2, -0.1), set(2, 1, -0.1), set(1, 3, -1), set(2, 3, -2);
  set(3, 0, -0.1), set(4, 0, -0.2), set(4, 3, -0.5);
  const std::vector<int32_t> heads = maximum_spanning_tree(w, n);
  EXPECT_EQ(heads, (std::vector<int32_t>{3, 1, 0, 3}));
  EXPECT_TRUE(is_tree_with_one_root(heads));
  EXPECT_THROW(maximum_spanning_tree(std::vector<double>(3), 1), Error);
}

}  // namespace
}  // namespace kglm::train::frozen
