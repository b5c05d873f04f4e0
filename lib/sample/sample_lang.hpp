// sample-lang: rebalances a multilingual corpus with the exponent-smoothed rule q_i ∝ p_i^α (or
// truncation to the smallest language), down-sampling large languages without replacement and
// up-sampling small ones by whole passes plus a seeded selection. Inputs are read twice (count,
// then sample); the interleaved output goes through a bounded-memory shuffle. See man 1 sample-lang.
#pragma once

#include <string>
#include <vector>

#include "core/cli.hpp"
#include "core/stats.hpp"
#include "sample/corpus.hpp"
#include "sample/plan.hpp"

namespace kglm::sample {

struct SampleLangOptions : RunOptions {
  RecordScanOptions scan;
  PlanOptions plan;
  bool plan_only = false;                   // print the plan (to output, default stdout) and stop
  std::string write_plan;                   // also write the plan to FILE during a run
  std::string counts;                       // sizes from FILE instead of a counting pass
  std::string split_dir;                    // one file per language instead of one interleaved stream
  bool shuffle = true;                      // false: records in input order (copies adjacent)
  size_t memory_bytes = size_t{512} << 20;  // the shuffle's buffer budget
  std::string tmp_dir;                      // spilled runs and stdin; default: beside the output
};

Stats sample_languages(const SampleLangOptions& options);

}  // namespace kglm::sample
