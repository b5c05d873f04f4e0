// kg-cycles: the cycles of a KG store's item graph into a cycles table (man 5 kglm-cycles). The
// tool in bin/ only parses options and calls find_cycles().
#pragma once

#include <cstdint>
#include <string>

#include "core/cli.hpp"
#include "core/stats.hpp"
#include "kg/cycle_graph.hpp"

namespace kglm::kg {

struct CyclesOptions : RunOptions {
  std::string kg;     // the KG store, or
  std::string edges;  // a TSV edge list (kg-cycles --edges): node columns are its node numbers
  GraphOptions graph;
  bool triangles = true;  // --kinds
  bool quads = true;
  uint64_t max_cycles = 0;    // keep at most N (the first in enumeration order); 0: all
  uint64_t max_per_node = 0;  // a node takes part in at most N kept cycles; 0: no cap
  uint64_t sample = 0;        // keep a seeded uniform sample of N cycles; 0: all
  std::string exclude;        // file of cycles to drop (one per line: their entity ids)
  int compression_level = 1;
};

// Statistics: triangles and cycles4 are the full counts (after --max-degree and the relation
// filters, before any other cap); written counts what the table holds.
Stats find_cycles(const CyclesOptions& options);

}  // namespace kglm::kg
