#include "kg/kg_cycles.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <queue>
#include <set>
#include <tuple>
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
constexpr uint64_t kCyclesPerChunk = 8192;  // enumerated cycles per chunk passed to the writer
constexpr uint64_t kReadBlock = 65536;      // rows per read of a part in the merge
constexpr uint32_t kNone = UINT32_MAX;
constexpr uint8_t kNoDirection = 255;

// A cycle with one relation chosen per edge.
struct LabelledCycle {
  Cycle cycle;
  std::array<uint32_t, 5> relation{kNone, kNone, kNone, kNone, kNone};
  std::array<uint8_t, 5> direction{kNoDirection, kNoDirection, kNoDirection, kNoDirection, kNoDirection};
  uint64_t key = 0;          // of the node set: keys the RNG and the sample
  uint32_t origin_rank = 0;  // the rank its enumeration started from: orders the parts in a merge
  uint64_t index = 0;        // its place among its task's cycles
};

// Sorts a cycle's 3 or 4 nodes (by hand: std::sort on 3 elements trips GCC 12's -Warray-bounds).
void sort_nodes(std::array<uint32_t, 4>& nodes, size_t kind) {
  for (size_t i = 1; i < kind; ++i)
    for (size_t j = i; j > 0 && nodes[j] < nodes[j - 1]; --j) std::swap(nodes[j], nodes[j - 1]);
}

uint64_t node_set_key(uint8_t kind, std::array<uint32_t, 4> nodes) {
  sort_nodes(nodes, kind);
  uint64_t key = kind;
  for (size_t i = 0; i < kind; ++i) key = mix64(key ^ (static_cast<uint64_t>(nodes[i]) + 0x9e3779b97f4a7c15ULL));
  return key;
}

uint64_t sample_priority(uint64_t key, uint64_t seed) { return mix64(key ^ mix64(seed + 1)); }

// The order of --sample: a seeded hash of the node set, ties (distinct sets of one hash) broken by
// the sorted nodes, so that the sample is the same whatever order the cycles come in.
struct SampleOrder {
  uint64_t priority = 0;
  std::array<uint32_t, 4> sorted{};
  static SampleOrder of(uint8_t kind, const std::array<uint32_t, 4>& nodes, uint64_t key, uint64_t seed) {
    SampleOrder o{sample_priority(key, seed), nodes};
    sort_nodes(o.sorted, kind);
    for (size_t i = kind; i < 4; ++i) o.sorted[i] = kNone;
    return o;
  }
  bool operator<(const SampleOrder& b) const { return std::tie(priority, sorted) < std::tie(b.priority, b.sorted); }
};

// The node pair each listed edge joins.
std::pair<uint32_t, uint32_t> edge_ends(const Cycle& c, size_t e) {
  auto [a, b] = cycle_edge_ends(c.kind, e);
  return {c.nodes[a], c.nodes[b]};
}

LabelledCycle label(const CycleGraph& g, const Cycle& c, uint64_t key, uint64_t seed) {
  LabelledCycle out;
  out.cycle = c;
  out.key = key;
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
  uint32_t number = 0;  // tasks in enumeration order
};

// What a worker passes on: the cycles its filters kept out of kCyclesPerChunk enumerated, and the
// counts of all of them (so the statistics do not depend on the filters' timing).
struct CycleChunk {
  uint32_t task = 0;
  std::vector<LabelledCycle> cycles;
  uint64_t triangles = 0, cycles4 = 0, two_diagonals = 0, excluded = 0, enumerated = 0;
};

struct StopEnumeration {};

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

// One row of a cycles table.
struct CycleRow {
  uint8_t kind = 3, two_diagonals = 0;
  std::array<uint32_t, 4> nodes{kNone, kNone, kNone, kNone};
  std::array<uint32_t, 5> relation{kNone, kNone, kNone, kNone, kNone};
  std::array<uint8_t, 5> direction{kNoDirection, kNoDirection, kNoDirection, kNoDirection, kNoDirection};
  uint32_t rank = 0;  // parts only

  static CycleRow of(const LabelledCycle& c) {
    CycleRow r;
    r.kind = c.cycle.kind;
    r.two_diagonals = c.cycle.two_diagonals ? 1 : 0;
    for (size_t i = 0; i < c.cycle.kind; ++i) r.nodes[i] = c.cycle.nodes[i];
    r.relation = c.relation;
    r.direction = c.direction;
    r.rank = c.origin_rank;
    return r;
  }
};

// The table's columns (man 5 kglm-cycles); a part of a --shard run also has the rank column.
class CycleTableWriter {
 public:
  CycleTableWriter(const h5::Group& g, bool with_rank) : kind_(g, "kind"), two_diagonals_(g, "two_diagonals") {
    for (int i = 0; i < 4; ++i) nodes_.emplace_back(g, "node" + std::to_string(i));
    for (int i = 0; i < 5; ++i) {
      relations_.emplace_back(g, "relation" + std::to_string(i));
      directions_.emplace_back(g, "direction" + std::to_string(i));
    }
    if (with_rank) rank_.emplace(g, "rank");
  }
  void append(const CycleRow& r) {
    kind_.append(r.kind);
    two_diagonals_.append(r.two_diagonals);
    for (size_t i = 0; i < 4; ++i) nodes_[i].append(r.nodes[i]);
    for (size_t i = 0; i < 5; ++i) {
      relations_[i].append(r.relation[i]);
      directions_[i].append(r.direction[i]);
    }
    if (rank_) rank_->append(r.rank);
  }
  void finish() {
    kind_.finish();
    two_diagonals_.finish();
    for (auto& w : nodes_) w.finish();
    for (auto& w : relations_) w.finish();
    for (auto& w : directions_) w.finish();
    if (rank_) rank_->finish();
  }

 private:
  h5::ColumnWriter<uint8_t> kind_, two_diagonals_;
  std::vector<h5::ColumnWriter<uint32_t>> nodes_, relations_;
  std::vector<h5::ColumnWriter<uint8_t>> directions_;
  std::optional<h5::ColumnWriter<uint32_t>> rank_;
};

// The selection that follows the enumeration, in enumeration order: --max-per-node, then --sample N
// (the N smallest SampleOrders) or --max-cycles N (the first N). Memory: a counter per node with
// --max-per-node, N cycles with --sample.
class CycleSelection {
 public:
  CycleSelection(uint64_t sample, uint64_t max_cycles, uint64_t max_per_node, uint32_t nodes, uint64_t seed,
                 Stats& stats)
      : sample_(sample), max_cycles_(max_cycles), max_per_node_(max_per_node), seed_(seed), stats_(stats) {
    if (max_per_node_ > 0) per_node_.assign(nodes, 0);
  }
  // The largest priority a cycle may have and still enter the sample (workers drop the others
  // early); only while nothing order-dependent comes before the sample.
  uint64_t threshold() const { return sample_ > 0 && per_node_.empty() ? threshold_.load() : UINT64_MAX; }
  // Takes the next cycle in enumeration order (sequence orders the sample's output); false once
  // --max-cycles is reached: nothing more will be taken.
  bool take(const CycleRow& row, uint64_t key, std::pair<uint32_t, uint64_t> sequence,
            const std::function<void(const CycleRow&)>& write) {
    if (!per_node_.empty()) {
      for (size_t i = 0; i < row.kind; ++i)
        if (per_node_[row.nodes[i]] >= max_per_node_) {
          stats_.add("skipped_node_cap");
          return true;
        }
      for (size_t i = 0; i < row.kind; ++i) ++per_node_[row.nodes[i]];
    }
    if (sample_ > 0) {
      Sampled s{SampleOrder::of(row.kind, row.nodes, key, seed_), sequence, row};
      if (sample_heap_.size() < sample_) {
        sample_heap_.push(s);
      } else if (s.order < sample_heap_.top().order) {
        sample_heap_.pop();
        sample_heap_.push(s);
      }
      if (sample_heap_.size() == sample_) threshold_.store(sample_heap_.top().order.priority);
      return true;
    }
    write(row);
    ++written_;
    if (max_cycles_ > 0 && written_ >= max_cycles_) {
      stats_.set("stopped_at_max_cycles", 1);
      return false;
    }
    return true;
  }
  // Writes the sample, in enumeration order; returns the number of cycles written.
  uint64_t finish(const std::function<void(const CycleRow&)>& write) {
    if (sample_ == 0) return written_;
    std::vector<Sampled> kept;
    for (; !sample_heap_.empty(); sample_heap_.pop()) kept.push_back(sample_heap_.top());
    std::sort(kept.begin(), kept.end(), [](const Sampled& a, const Sampled& b) { return a.sequence < b.sequence; });
    for (const Sampled& s : kept) write(s.row);
    return kept.size();
  }

 private:
  struct Sampled {
    SampleOrder order;
    std::pair<uint32_t, uint64_t> sequence;
    CycleRow row;
    bool operator<(const Sampled& b) const { return order < b.order; }
  };
  uint64_t sample_, max_cycles_, max_per_node_, seed_;
  Stats& stats_;
  std::vector<uint32_t> per_node_;
  std::priority_queue<Sampled> sample_heap_;
  std::atomic<uint64_t> threshold_{UINT64_MAX};
  uint64_t written_ = 0;
};

void write_table_header(const h5::Group& root, const Provenance& provenance, bool edge_list) {
  root.set_attribute("format", "kglm-cycles");
  root.set_attribute("format_version", int64_t{1});
  h5::write_provenance(root, provenance);
  root.set_attribute("nodes", edge_list ? "edges" : "kg");
}

// What a part records of its run's selection, for the merge to apply.
constexpr const char* kSelectionAttributes[] = {"select_sample", "select_max_cycles", "select_max_per_node"};
constexpr const char* kNodeIdsAttribute = "node_ids";  // a part's node ids are below this

}  // namespace

Stats find_cycles(const CyclesOptions& options) {
  if (options.sample > 0 && options.max_cycles > 0) throw UsageError("--sample and --max-cycles: give one");
  Stats stats;
  std::vector<std::string> names, relation_names;
  CycleGraph graph;
  GraphOptions graph_options = options.graph;
  graph_options.seed = options.seed;
  if (options.edges.empty()) {
    KgStore store(options.kg);
    graph = CycleGraph::from_store(store, graph_options, stats);
    if (!options.exclude.empty()) names = store.entity_ids();
  } else {
    graph = CycleGraph::from_edge_list(options.edges, graph_options, stats, names, relation_names);
  }
  CycleFinder finder(graph);
  const auto exclusions = read_exclusions(options.exclude, names);

  h5::set_compression(std::max(1u, options.threads), options.compression_level);
  AtomicPath atomic(options.output);
  h5::File file = h5::File::create(atomic.temp());
  const h5::Group& root = file.root();
  const std::string& input = options.edges.empty() ? options.kg : options.edges;
  write_table_header(root, make_provenance("kg-cycles", options.command_line, {input}, options.seed),
                     !options.edges.empty());
  const bool part = options.shard.active();
  h5::Group cycles_group = root.create_group("cycles");
  CycleTableWriter table(cycles_group, part);

  // A part of a run with --max-per-node writes every cycle: the cap depends on the cycles of every
  // shard before it, so the merge applies it, and the sample or stop after it.
  const bool select_here = !part || options.max_per_node == 0;
  CycleSelection selection(select_here ? options.sample : 0, select_here ? options.max_cycles : 0,
                           part ? 0 : options.max_per_node, graph.node_count(), options.seed, stats);
  uint64_t triangles = 0, cycles4 = 0, two_diagonals = 0, excluded = 0;
  std::atomic<bool> stop{false};

  uint32_t next_rank = 0, tasks = 0;
  bool diamonds = false;
  const unsigned workers = std::max(1u, options.threads);
  std::vector<CycleFinder::Scratch> scratch(workers);
  auto write = [&](const CycleRow& row) { table.append(row); };
  run_ordered_streams<Task, CycleChunk>(
      workers, 2 * workers + 2, 4,
      [&](Task& task) {
        if (!options.triangles && !diamonds) diamonds = true;
        if (next_rank >= finder.node_count()) {
          if (diamonds || !options.quads) return false;
          diamonds = true;
          next_rank = 0;
          if (finder.node_count() == 0) return false;
        }
        task = {diamonds, next_rank, std::min(finder.node_count(), next_rank + kRanksPerTask), tasks++};
        next_rank = task.last;
        return true;
      },
      [&](unsigned w, Task& task, const std::function<bool(CycleChunk &&)>& emit) {
        CycleChunk chunk;
        chunk.task = task.number;
        uint64_t index = 0;
        auto pass_on = [&] {
          if (!emit(std::move(chunk))) throw StopEnumeration();
          chunk = CycleChunk();
          chunk.task = task.number;
        };
        auto on_cycle = [&](const Cycle& c) {
          ++index;
          ++chunk.enumerated;
          (c.kind == 3 ? chunk.triangles : chunk.cycles4) += 1;
          chunk.two_diagonals += c.two_diagonals;
          bool keep = true;
          if (!exclusions.empty()) {
            std::vector<uint32_t> nodes(c.nodes.begin(), c.nodes.begin() + c.kind);
            std::sort(nodes.begin(), nodes.end());
            if (exclusions.count(nodes)) {
              ++chunk.excluded;
              keep = false;
            }
          }
          const uint64_t key = node_set_key(c.kind, c.nodes), bound = selection.threshold();
          if (keep && bound != UINT64_MAX && sample_priority(key, options.seed) > bound) keep = false;
          if (keep) {
            LabelledCycle labelled = label(graph, c, key, options.seed);
            labelled.origin_rank = finder.rank(c.kind == 3 ? c.nodes[0] : c.nodes[1]);
            labelled.index = index;
            chunk.cycles.push_back(labelled);
          }
          if (chunk.enumerated == kCyclesPerChunk) pass_on();
        };
        try {
          for (uint32_t r = task.first; r < task.last; ++r) {
            if (stop.load(std::memory_order_relaxed)) throw StopEnumeration();
            if (part && r % options.shard.count != options.shard.index) continue;
            if (task.diamonds)
              finder.diamonds(r, r + 1, scratch[w], on_cycle);
            else
              finder.triangles(r, r + 1, scratch[w], on_cycle);
          }
          if (chunk.enumerated > 0) pass_on();
        } catch (const StopEnumeration&) {
        }
      },
      [&](CycleChunk& chunk) {
        triangles += chunk.triangles;
        cycles4 += chunk.cycles4;
        two_diagonals += chunk.two_diagonals;
        excluded += chunk.excluded;
        for (const LabelledCycle& c : chunk.cycles) {
          if (!selection.take(CycleRow::of(c), c.key, {chunk.task, c.index}, write)) {
            stop = true;
            return false;
          }
        }
        return true;
      });
  const uint64_t written = selection.finish(write);
  table.finish();
  stats.set("triangles", static_cast<int64_t>(triangles));
  stats.set("cycles4", static_cast<int64_t>(cycles4));
  stats.set("cycles4_two_diagonals", static_cast<int64_t>(two_diagonals));
  if (excluded > 0) stats.set("excluded_cycles", static_cast<int64_t>(excluded));
  stats.set("written", static_cast<int64_t>(written));
  if (part) {
    h5::write_shard(root, options.shard, options.shard_run);
    root.set_attribute(kSelectionAttributes[0], static_cast<int64_t>(options.sample));
    root.set_attribute(kSelectionAttributes[1], static_cast<int64_t>(options.max_cycles));
    root.set_attribute(kSelectionAttributes[2], static_cast<int64_t>(options.max_per_node));
    root.set_attribute(kNodeIdsAttribute, static_cast<int64_t>(graph.node_count()));
  }
  for (const auto& [key, value] : stats.values()) root.set_attribute(key, value);
  file.close();
  atomic.commit();
  return stats;
}

namespace {

// Reads a part's rows in order, a block at a time.
class PartReader {
 public:
  explicit PartReader(const std::string& path) : file_(h5::File::open(path)), path_(path) {
    const h5::Group& root = file_.root();
    if (!root.has_attribute("format") || root.string_attribute("format") != "kglm-cycles")
      throw Error(location(path) + "is " + h5::describe_format(root) + "; expected a part of kg-cycles --shard");
    part_ = h5::read_shard_part(root, path);
    if (!part_.shard.active())
      throw Error(location(path) + "a whole cycles table, not a part (write parts with kg-cycles --shard I/N)");
    group_ = root.open_group("cycles");
    size_ = h5::column_size(group_, "kind");
    for (const char* column :
         {"two_diagonals", "node0", "node1", "node2", "node3", "relation0", "relation1", "relation2", "relation3",
          "relation4", "direction0", "direction1", "direction2", "direction3", "direction4", "rank"})
      if (h5::column_size(group_, column) != size_)
        throw Error(location(path) + "the part's columns differ in length (" + column + ")");
    load();
  }
  const h5::Group& root() const { return file_.root(); }
  const ShardPart& part() const { return part_; }
  const std::string& path() const { return path_; }
  bool done() const { return pos_ >= size_; }
  const CycleRow& row() const { return rows_[pos_ - block_start_]; }
  // (phase, rank): the enumeration order the merge restores; triangles come first.
  std::pair<uint8_t, uint32_t> order() const { return {row().kind == 3 ? 0 : 1, row().rank}; }
  void advance() {
    if (++pos_ < size_ && pos_ - block_start_ == rows_.size()) load();
  }
  void rewind() {
    pos_ = 0;
    load();
  }

 private:
  template <class T>
  std::vector<T> read(const std::string& name, uint64_t n) {
    std::vector<T> v(n);
    if (n > 0) h5::read_column_range(group_, name, h5::native_type<T>(), pos_, n, v.data());
    return v;
  }
  void load() {
    block_start_ = pos_;
    const uint64_t n = std::min(kReadBlock, size_ - pos_);
    rows_.assign(n, CycleRow());
    const auto kind = read<uint8_t>("kind", n), two = read<uint8_t>("two_diagonals", n);
    const auto rank = read<uint32_t>("rank", n);
    for (uint64_t i = 0; i < n; ++i) {
      if (kind[i] != 3 && kind[i] != 4)
        throw Error(location(path_) + "row " + std::to_string(pos_ + i) + ": kind " + std::to_string(kind[i]) +
                    " is not 3 or 4");
      rows_[i].kind = kind[i];
      rows_[i].two_diagonals = two[i];
      rows_[i].rank = rank[i];
    }
    for (size_t c = 0; c < 4; ++c) {
      const auto v = read<uint32_t>("node" + std::to_string(c), n);
      for (uint64_t i = 0; i < n; ++i) rows_[i].nodes[c] = v[i];
    }
    for (size_t c = 0; c < 5; ++c) {
      const auto r = read<uint32_t>("relation" + std::to_string(c), n);
      const auto d = read<uint8_t>("direction" + std::to_string(c), n);
      for (uint64_t i = 0; i < n; ++i) {
        rows_[i].relation[c] = r[i];
        rows_[i].direction[c] = d[i];
      }
    }
  }

  h5::File file_;
  std::string path_;
  ShardPart part_;
  h5::Group group_;
  uint64_t size_ = 0, pos_ = 0, block_start_ = 0;
  std::vector<CycleRow> rows_;
};

// Visits the rows of every part in the order of the unsharded run: by phase and rank, and within a
// rank (which one shard holds) in the part's order.
void for_each_merged(std::vector<std::unique_ptr<PartReader>>& parts, const std::function<bool(const CycleRow&)>& fn) {
  using Head = std::pair<std::pair<uint8_t, uint32_t>, size_t>;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  for (size_t i = 0; i < parts.size(); ++i) {
    parts[i]->rewind();
    if (!parts[i]->done()) heads.emplace(parts[i]->order(), i);
  }
  while (!heads.empty()) {
    const size_t i = heads.top().second;
    heads.pop();
    if (!fn(parts[i]->row())) return;
    parts[i]->advance();
    if (!parts[i]->done()) heads.emplace(parts[i]->order(), i);
  }
}

}  // namespace

Stats merge_cycles(const CyclesMergeOptions& options) {
  std::vector<std::unique_ptr<PartReader>> parts;
  std::vector<ShardPart> set;
  for (const std::string& path : options.parts) {
    parts.push_back(std::make_unique<PartReader>(path));
    set.push_back(parts.back()->part());
  }
  check_shard_set(set);
  const h5::Group& first = parts.front()->root();
  const Provenance source = h5::read_provenance(first);
  auto selection_option = [&](size_t i) {
    const int64_t value = first.int_attribute(kSelectionAttributes[i]);
    if (value < 0) throw Error(location(options.parts.front()) + "bad " + kSelectionAttributes[i] + " attribute");
    return static_cast<uint64_t>(value);
  };
  const uint64_t sample = selection_option(0), max_cycles = selection_option(1), max_per_node = selection_option(2);

  // The graph's statistics are the same in every part; the enumeration's are summed.
  Stats stats;
  for (const char* key : {"graph_nodes", "graph_edges", "multi_relation_pairs", "self_loops", "excluded_hubs",
                          "hub_edges", "sampled_hubs", "hub_edges_dropped", "triples_used", "edges_read"})
    if (first.has_attribute(key)) stats.set(key, first.int_attribute(key));
  const int64_t node_ids = first.int_attribute(kNodeIdsAttribute);
  if (node_ids < 0 || node_ids > UINT32_MAX) throw Error(location(options.parts.front()) + "bad node_ids attribute");
  const uint32_t node_bound = static_cast<uint32_t>(node_ids);
  for (const auto& p : parts) {
    for (const char* key : {"triangles", "cycles4", "cycles4_two_diagonals", "excluded_cycles"})
      if (p->root().has_attribute(key)) stats.set(key, stats.get(key) + p->root().int_attribute(key));
    if (p->root().has_attribute("stopped_at_max_cycles")) stats.set("stopped_at_max_cycles", 1);
  }

  h5::set_compression(1, options.compression_level);
  AtomicPath atomic(options.output);
  h5::File file = h5::File::create(atomic.temp());
  const h5::Group& root = file.root();
  Provenance provenance = make_provenance("kg-cycles merge", options.command_line, options.parts, source.seed);
  write_table_header(root, provenance, first.string_attribute("nodes") == "edges");
  h5::Group cycles_group = root.create_group("cycles");
  CycleTableWriter table(cycles_group, false);
  auto write = [&](const CycleRow& row) { table.append(row); };
  auto key_of = [](const CycleRow& row) { return node_set_key(row.kind, row.nodes); };
  uint64_t written = 0;
  if (sample > 0) {
    // Pass 1: the sample's bound, the N-th smallest order after the per-node cap; pass 2 writes
    // the rows within it, in order.
    std::priority_queue<SampleOrder> smallest;
    std::vector<uint32_t> per_node(max_per_node > 0 ? node_bound : 0, 0);
    auto passes_cap = [&](const CycleRow& row, Stats* count) {
      if (per_node.empty()) return true;
      for (size_t i = 0; i < row.kind; ++i)
        if (row.nodes[i] >= node_bound) throw Error(location(options.parts.front()) + "a node id past node_ids");
      for (size_t i = 0; i < row.kind; ++i)
        if (per_node[row.nodes[i]] >= max_per_node) {
          if (count) count->add("skipped_node_cap");
          return false;
        }
      for (size_t i = 0; i < row.kind; ++i) ++per_node[row.nodes[i]];
      return true;
    };
    for_each_merged(parts, [&](const CycleRow& row) {
      if (!passes_cap(row, nullptr)) return true;
      const SampleOrder o = SampleOrder::of(row.kind, row.nodes, key_of(row), source.seed);
      if (smallest.size() < sample) {
        smallest.push(o);
      } else if (o < smallest.top()) {
        smallest.pop();
        smallest.push(o);
      }
      return true;
    });
    std::fill(per_node.begin(), per_node.end(), 0);
    if (!smallest.empty()) {
      const SampleOrder last = smallest.top();
      for_each_merged(parts, [&](const CycleRow& row) {
        if (!passes_cap(row, &stats)) return true;
        if (!(last < SampleOrder::of(row.kind, row.nodes, key_of(row), source.seed))) {
          write(row);
          ++written;
        }
        return true;
      });
    }
  } else {
    CycleSelection selection(0, max_cycles, max_per_node, node_bound, source.seed, stats);
    uint64_t sequence = 0;
    for_each_merged(parts, [&](const CycleRow& row) { return selection.take(row, 0, {0, sequence++}, write); });
    written = selection.finish(write);
  }
  table.finish();
  stats.set("written", static_cast<int64_t>(written));
  stats.set("shards", static_cast<int64_t>(parts.size()));
  for (const auto& [key, value] : stats.values()) root.set_attribute(key, value);
  file.close();
  atomic.commit();
  return stats;
}

}  // namespace kglm::kg
