#include "kg/kg_cycles.hpp"

#include <algorithm>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"
#include "core/ordered_pipeline.hpp"
#include "core/provenance.hpp"
#include "core/rng.hpp"
#include "h5/h5.hpp"
#include "kg/cycles.hpp"
#include "kg/kg_store.hpp"

namespace kglm::kg {

namespace {

constexpr uint32_t kRanksPerTask = 2048;
constexpr uint32_t kNone = UINT32_MAX;
constexpr uint8_t kNoDirection = 255;

// A cycle with one relation chosen per edge.
struct LabelledCycle {
  Cycle cycle;
  std::array<uint32_t, 5> relation{kNone, kNone, kNone, kNone, kNone};
  std::array<uint8_t, 5> direction{kNoDirection, kNoDirection, kNoDirection, kNoDirection, kNoDirection};
  uint64_t key = 0;  // of the node set: keys the RNG and the sample
};

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t node_set_key(const Cycle& c) {
  std::array<uint32_t, 4> nodes = c.nodes;  // a triangle's unused fourth node is UINT32_MAX: sorts last
  std::sort(nodes.begin(), nodes.end());
  uint64_t key = c.kind;
  for (size_t i = 0; i < c.kind; ++i) key = mix(key ^ (static_cast<uint64_t>(nodes[i]) + 0x9e3779b97f4a7c15ULL));
  return key;
}

// The node pair each listed edge joins.
std::pair<uint32_t, uint32_t> edge_ends(const Cycle& c, size_t e) {
  auto [a, b] = cycle_edge_ends(c.kind, e);
  return {c.nodes[a], c.nodes[b]};
}

LabelledCycle label(const CycleGraph& g, const Cycle& c, uint64_t seed) {
  LabelledCycle out;
  out.cycle = c;
  out.key = node_set_key(c);
  Rng rng(seed, out.key);
  for (size_t e = 0; e < c.edge_count(); ++e) {
    uint32_t p = c.pairs[e];
    uint32_t first = g.relations_begin(p), count = g.relations_end(p) - first;
    uint32_t pick = first + (count > 1 ? static_cast<uint32_t>(rng.below(count)) : 0);
    out.relation[e] = g.relation(pick);
    // direction 0: the edge's first listed node is the subject.
    bool first_is_u = edge_ends(c, e).first == g.pair_u(p);
    bool u_is_subject = g.direction(pick) == 0;
    out.direction[e] = first_is_u == u_is_subject ? 0 : 1;
  }
  return out;
}

struct Task {
  bool diamonds = false;
  uint32_t first = 0, last = 0;
};

struct TaskResult {
  std::vector<LabelledCycle> cycles;
  int64_t two_diagonals = 0;
};

// Node sets to drop, from a file of node names (entity ids; one cycle per line).
std::set<std::vector<uint32_t>> read_exclusions(const std::string& path, const std::vector<std::string>& names) {
  std::set<std::vector<uint32_t>> out;
  if (path.empty()) return out;
  std::unordered_map<std::string, uint32_t> row;
  for (uint32_t i = 0; i < names.size(); ++i) row.emplace(names[i], i);
  for_each_data_line(path, [&](uint64_t line, std::string_view text) {
    std::vector<uint32_t> nodes;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find_first_of(" \t", pos);
      if (end == std::string_view::npos) end = text.size();
      if (end > pos) {
        auto it = row.find(std::string(text.substr(pos, end - pos)));
        if (it == row.end())
          throw Error(location(path, line) + "'" + std::string(text.substr(pos, end - pos)) +
                      "' is not a node of the graph");
        nodes.push_back(it->second);
      }
      pos = end + 1;
    }
    if (nodes.size() != 3 && nodes.size() != 4) throw Error(location(path, line) + "a cycle has 3 or 4 entities");
    std::sort(nodes.begin(), nodes.end());
    out.insert(nodes);
  });
  return out;
}

class CycleTableWriter {
 public:
  CycleTableWriter(const h5::Group& g) : kind_(g, "kind"), two_diagonals_(g, "two_diagonals") {
    for (int i = 0; i < 4; ++i) nodes_.emplace_back(g, "node" + std::to_string(i));
    for (int i = 0; i < 5; ++i) {
      relations_.emplace_back(g, "relation" + std::to_string(i));
      directions_.emplace_back(g, "direction" + std::to_string(i));
    }
  }
  void append(const LabelledCycle& c) {
    kind_.append(c.cycle.kind);
    two_diagonals_.append(c.cycle.two_diagonals ? 1 : 0);
    for (size_t i = 0; i < 4; ++i) nodes_[i].append(i < c.cycle.kind ? c.cycle.nodes[i] : kNone);
    for (size_t i = 0; i < 5; ++i) {
      relations_[i].append(c.relation[i]);
      directions_[i].append(c.direction[i]);
    }
  }
  void finish() {
    kind_.finish();
    two_diagonals_.finish();
    for (auto& w : nodes_) w.finish();
    for (auto& w : relations_) w.finish();
    for (auto& w : directions_) w.finish();
  }

 private:
  h5::ColumnWriter<uint8_t> kind_, two_diagonals_;
  std::vector<h5::ColumnWriter<uint32_t>> nodes_, relations_;
  std::vector<h5::ColumnWriter<uint8_t>> directions_;
};

}  // namespace

Stats find_cycles(const CyclesOptions& options) {
  Stats stats;
  std::vector<std::string> names, relation_names;
  CycleGraph graph;
  if (options.edges.empty()) {
    KgStore store(options.kg);
    graph = CycleGraph::from_store(store, options.graph, stats);
    if (!options.exclude.empty()) names = store.entity_ids();
  } else {
    graph = CycleGraph::from_edge_list(options.edges, options.graph.max_degree, stats, names, relation_names);
  }
  CycleFinder finder(graph);
  const auto exclusions = read_exclusions(options.exclude, names);

  h5::set_compression(std::max(1u, options.threads), options.compression_level);
  AtomicPath atomic(options.output);
  h5::File file = h5::File::create(atomic.temp());
  const h5::Group& root = file.root();
  root.set_attribute("format", "kglm-cycles");
  root.set_attribute("format_version", int64_t{1});
  const std::string& input = options.edges.empty() ? options.kg : options.edges;
  h5::write_provenance(root, make_provenance("kg-cycles", options.command_line, {input}, options.seed));
  root.set_attribute("nodes", options.edges.empty() ? "kg" : "edges");
  h5::Group cycles_group = root.create_group("cycles");
  CycleTableWriter table(cycles_group);

  // Consumer-side selection, in enumeration order (identical for any --threads).
  std::vector<uint32_t> per_node(options.max_per_node > 0 ? graph.node_count() : 0, 0);
  struct Sampled {
    uint64_t priority, sequence;
    LabelledCycle cycle;
    bool operator<(const Sampled& o) const { return priority < o.priority; }
  };
  std::priority_queue<Sampled> sample;  // the `sample` smallest priorities
  uint64_t sequence = 0, written = 0, triangles = 0, cycles4 = 0, two_diagonals = 0;
  auto keep = [&](const LabelledCycle& c) {
    const Cycle& cy = c.cycle;
    if (!exclusions.empty()) {
      std::vector<uint32_t> nodes(cy.nodes.begin(), cy.nodes.begin() + cy.kind);
      std::sort(nodes.begin(), nodes.end());
      if (exclusions.count(nodes)) return stats.add("excluded_cycles");
    }
    if (!per_node.empty()) {
      for (size_t i = 0; i < cy.kind; ++i)
        if (per_node[cy.nodes[i]] >= options.max_per_node) return stats.add("skipped_node_cap");
      for (size_t i = 0; i < cy.kind; ++i) ++per_node[cy.nodes[i]];
    }
    if (options.sample > 0) {  // a bottom-k sample by a seeded hash of the node set
      uint64_t priority = mix(c.key ^ mix(options.seed + 1));
      if (sample.size() < options.sample) {
        sample.push({priority, sequence, c});
      } else if (priority < sample.top().priority) {
        sample.pop();
        sample.push({priority, sequence, c});
      }
      ++sequence;
      return;
    }
    if (options.max_cycles > 0 && written >= options.max_cycles) return stats.add("skipped_max_cycles");
    table.append(c);
    ++written;
  };

  uint32_t next_rank = 0;
  bool diamonds = false;
  const unsigned workers = std::max(1u, options.threads);
  std::vector<CycleFinder::Scratch> scratch(workers);
  run_ordered_pipeline<Task, TaskResult>(
      workers, 2 * workers + 2,
      [&](Task& task) {
        if (!options.triangles && !diamonds) diamonds = true;
        if (next_rank >= finder.node_count()) {
          if (diamonds || !options.quads) return false;
          diamonds = true;
          next_rank = 0;
          if (finder.node_count() == 0) return false;
        }
        task = {diamonds, next_rank, std::min(finder.node_count(), next_rank + kRanksPerTask)};
        next_rank = task.last;
        return true;
      },
      [&](unsigned w, Task& task, TaskResult& result) {
        auto collect = [&](const Cycle& c) {
          result.cycles.push_back(label(graph, c, options.seed));
          result.two_diagonals += c.two_diagonals;
        };
        if (task.diamonds)
          finder.diamonds(task.first, task.last, scratch[w], collect);
        else
          finder.triangles(task.first, task.last, scratch[w], collect);
      },
      [&](TaskResult& result) {
        for (const LabelledCycle& c : result.cycles) {
          (c.cycle.kind == 3 ? triangles : cycles4) += 1;
          keep(c);
        }
        two_diagonals += static_cast<uint64_t>(result.two_diagonals);
      });
  if (options.sample > 0) {
    std::vector<Sampled> kept;
    while (!sample.empty()) {
      kept.push_back(sample.top());
      sample.pop();
    }
    std::sort(kept.begin(), kept.end(), [](const Sampled& a, const Sampled& b) { return a.sequence < b.sequence; });
    for (const Sampled& s : kept) table.append(s.cycle);
    written = kept.size();
  }
  table.finish();
  stats.set("triangles", static_cast<int64_t>(triangles));
  stats.set("cycles4", static_cast<int64_t>(cycles4));
  stats.set("cycles4_two_diagonals", static_cast<int64_t>(two_diagonals));
  stats.set("written", static_cast<int64_t>(written));
  for (const auto& [key, value] : stats.values()) root.set_attribute(key, value);
  file.close();
  atomic.commit();
  return stats;
}

}  // namespace kglm::kg
