// Cycle enumeration against brute force on hundreds of random small graphs: every triangle and
// every 4-node set with a 4-cycle and a diagonal (>= 5 of its 6 pairs adjacent) exactly once,
// with multi-relation pairs, self-loops, duplicate triples, K4s and hub caps.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/rng.hpp"
#include "kg/cycles.hpp"

using namespace kglm;
using namespace kglm::kg;

namespace {

using NodeSet = std::vector<uint32_t>;

struct Found {
  std::multiset<NodeSet> triangles, quads;
};

Found enumerate(const CycleGraph& g, uint32_t chunk) {
  CycleFinder finder(g);
  CycleFinder::Scratch scratch;
  Found found;
  for (uint32_t first = 0; first < finder.node_count(); first += chunk) {
    uint32_t last = std::min(finder.node_count(), first + chunk);
    auto record = [&](const Cycle& c) {
      NodeSet nodes(c.nodes.begin(), c.nodes.begin() + c.kind);
      // The listed edges are the cycle's: pair p joins the two nodes it is listed between.
      for (size_t e = 0; e < c.edge_count(); ++e) {
        auto [i, j] = cycle_edge_ends(c.kind, e);
        EXPECT_EQ(g.pair(c.nodes[i], c.nodes[j]), c.pairs[e]);
      }
      if (c.kind == 4) {
        EXPECT_EQ(c.two_diagonals, g.pair(c.nodes[0], c.nodes[2]) != UINT32_MAX);
      }
      std::sort(nodes.begin(), nodes.end());
      (c.kind == 3 ? found.triangles : found.quads).insert(nodes);
    };
    finder.triangles(first, last, scratch, record);
    finder.diamonds(first, last, scratch, record);
  }
  return found;
}

Found brute_force(uint32_t n, const std::set<std::pair<uint32_t, uint32_t>>& adjacent) {
  auto adj = [&](uint32_t a, uint32_t b) { return adjacent.count({std::min(a, b), std::max(a, b)}) > 0; };
  Found f;
  for (uint32_t a = 0; a < n; ++a)
    for (uint32_t b = a + 1; b < n; ++b)
      for (uint32_t c = b + 1; c < n; ++c) {
        if (adj(a, b) && adj(b, c) && adj(a, c)) f.triangles.insert({a, b, c});
        for (uint32_t d = c + 1; d < n; ++d) {
          int edges = adj(a, b) + adj(a, c) + adj(a, d) + adj(b, c) + adj(b, d) + adj(c, d);
          if (edges >= 5) f.quads.insert({a, b, c, d});
        }
      }
  return f;
}

}  // namespace

TEST(Cycles, AgreeWithBruteForceOnRandomGraphs) {
  uint64_t triangles = 0, quads = 0, k4 = 0;
  for (uint64_t trial = 0; trial < 400; ++trial) {
    Rng rng(11, trial);
    uint32_t n = 4 + static_cast<uint32_t>(rng.below(11));
    double density = 0.2 + 0.7 * rng.uniform();
    uint64_t max_degree = trial % 4 == 3 ? 2 + rng.below(4) : 0;
    std::vector<GraphEdge> edges;
    for (uint32_t a = 0; a < n; ++a)
      for (uint32_t b = 0; b < n; ++b) {
        if (a == b ? rng.below(10) != 0 : rng.uniform() > density / 2) continue;  // a few self-loops
        uint32_t relations = 1 + static_cast<uint32_t>(rng.below(3));             // multi-relation pairs
        for (uint32_t r = 0; r < relations; ++r) edges.push_back({a, b, static_cast<uint32_t>(rng.below(4))});
        if (rng.below(5) == 0) edges.push_back(edges.back());  // duplicate triples
      }
    Stats stats;
    CycleGraph g = CycleGraph::build(n, edges, {.max_degree = max_degree}, stats);
    // The brute force sees the same simple graph: distinct neighbours, hubs removed.
    std::vector<std::set<uint32_t>> neighbours(n);
    for (const GraphEdge& e : edges)
      if (e.subject != e.object) {
        neighbours[e.subject].insert(e.object);
        neighbours[e.object].insert(e.subject);
      }
    std::set<std::pair<uint32_t, uint32_t>> adjacent;
    for (const GraphEdge& e : edges) {
      if (e.subject == e.object) continue;
      if (max_degree && (neighbours[e.subject].size() > max_degree || neighbours[e.object].size() > max_degree))
        continue;
      adjacent.insert({std::min(e.subject, e.object), std::max(e.subject, e.object)});
    }
    ASSERT_EQ(g.pair_count(), adjacent.size()) << "trial " << trial;
    Found expected = brute_force(n, adjacent);
    Found got = enumerate(g, 1 + static_cast<uint32_t>(trial % 5));
    ASSERT_EQ(got.triangles, expected.triangles) << "trial " << trial;
    ASSERT_EQ(got.quads, expected.quads) << "trial " << trial;
    triangles += expected.triangles.size();
    quads += expected.quads.size();
    for (const NodeSet& q : expected.quads) {
      int edges6 = 0;
      for (size_t i = 0; i < 4; ++i)
        for (size_t j = i + 1; j < 4; ++j) edges6 += adjacent.count({q[i], q[j]});
      k4 += edges6 == 6;
    }
  }
  // The trials cover the cases that matter.
  EXPECT_GT(triangles, 1000u);
  EXPECT_GT(quads, 1000u);
  EXPECT_GT(k4, 100u);
}

// Hub sampling keeps about hub_edges of a hub's edges, every edge between two small nodes, and
// the same edges for the same seed.
TEST(Cycles, HubSamplingKeepsAboutHubEdgesOfAHub) {
  std::vector<GraphEdge> edges;
  for (uint32_t v = 1; v <= 4000; ++v) edges.push_back({0, v, 0});        // node 0: a hub of degree 4000
  for (uint32_t v = 1; v < 4000; v += 2) edges.push_back({v, v + 1, 1});  // 2000 edges between small nodes
  auto kept_of_hub = [&](uint64_t seed, Stats& stats) {
    CycleGraph g = CycleGraph::build(4001, edges, {.hub_edges = 200, .seed = seed}, stats);
    EXPECT_EQ(g.pair_count(), 2000u + g.degree(0));
    std::vector<uint32_t> kept(g.neighbors_begin(0), g.neighbors_end(0));
    return kept;
  };
  Stats a, b, c;
  const auto first = kept_of_hub(1, a), again = kept_of_hub(1, b), other = kept_of_hub(2, c);
  EXPECT_GT(first.size(), 150u);
  EXPECT_LT(first.size(), 250u);
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);
  EXPECT_EQ(a.get("sampled_hubs"), 1);
  EXPECT_EQ(a.get("hub_edges_dropped"), static_cast<int64_t>(4000 - first.size()));
}

TEST(Cycles, GraphKeepsEveryRelationOfAPair) {
  Stats stats;
  CycleGraph g = CycleGraph::build(3, {{0, 1, 5}, {1, 0, 6}, {0, 1, 5}, {2, 2, 1}, {1, 2, 7}}, {}, stats);
  ASSERT_EQ(g.pair_count(), 2u);
  uint32_t p = g.pair(1, 0);
  ASSERT_EQ(g.relations_end(p) - g.relations_begin(p), 2u);
  EXPECT_EQ(g.relation(g.relations_begin(p)), 5u);
  EXPECT_EQ(g.direction(g.relations_begin(p)), 0);  // 0 -> 1: the smaller node is the subject
  EXPECT_EQ(g.relation(g.relations_begin(p) + 1), 6u);
  EXPECT_EQ(g.direction(g.relations_begin(p) + 1), 1);
  EXPECT_EQ(stats.get("self_loops"), 1);
  EXPECT_EQ(stats.get("multi_relation_pairs"), 1);
  EXPECT_EQ(g.pair(0, 2), UINT32_MAX);
}
