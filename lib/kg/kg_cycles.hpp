// kg-cycles: the cycles of a KG store's item graph into a cycles table (man 5 kglm-cycles), and the
// merge of the parts a job array writes with --shard. The tool in bin/ only parses options and calls
// find_cycles() and merge_cycles().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cli.hpp"
#include "core/shard.hpp"
#include "core/stats.hpp"
#include "kg/cycle_graph.hpp"

namespace kglm::kg {

struct CyclesOptions : RunOptions {
  std::string kg;     // the KG store, or
  std::string edges;  // a TSV edge list (kg-cycles --edges): node columns are its node numbers
  GraphOptions graph;
  bool triangles = true;  // --kinds
  bool quads = true;
  uint64_t max_cycles = 0;    // stop after N written cycles (the first in enumeration order); 0: all
  uint64_t max_per_node = 0;  // a node takes part in at most N kept cycles; 0: no cap
  uint64_t sample = 0;        // keep a seeded uniform sample of N cycles; 0: all
  std::string exclude;        // file of cycles to drop (one per line: their entity ids)
  int compression_level = 1;
  Shard shard;            // --shard I/N: the cycles whose first rank is I modulo N, as a part for merge
  std::string shard_run;  // the part's run identity (core/shard.hpp)
};

// Statistics: triangles and cycles4 are the counts enumerated (after the graph's hub handling and
// relation filters, before any cap or sample; with --max-cycles, up to the stop); written counts what
// the table holds. Memory: the graph plus a bounded window of cycles, plus N with --sample N.
Stats find_cycles(const CyclesOptions& options);

struct CyclesMergeOptions {
  std::vector<std::string> parts;
  std::string output;
  int compression_level = 1;
  std::string command_line;
};

// Merges the parts 0..N-1 of one --shard run into the table the unsharded run writes (same cycles,
// same order), applying the run's --max-per-node, --sample and --max-cycles. Refuses another set.
Stats merge_cycles(const CyclesMergeOptions& options);

}  // namespace kglm::kg
