// The results of a fine-tuning run over its seeds, as the papers tabulate them: per test language
// the mean and standard deviation over seeds of the headline score, the zero-shot average (the
// mean over every language but English, per seed, then over seeds) and the English score; written
// as TSV (percentages, 2 decimals: what a paper's table shows) and JSON (fractions, every score).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "train/tasks/task_eval.hpp"

namespace kglm::train::tasks {

struct SeedResult {
  uint64_t seed = 0;
  std::optional<double> dev;                             // the best dev score, when there was a dev set
  std::vector<std::pair<std::string, TaskScore>> tests;  // (language, score), in --test order
};

// The sample standard deviation (n − 1; 0 for fewer than two values), as papers' "± std" over seeds.
double sample_std(const std::vector<double>& values);

// Writes PREFIX.tsv and PREFIX.json; returns the TSV text.
std::string write_results(const std::string& prefix, TaskKind kind, const std::vector<SeedResult>& seeds);
// The same for any task: its name and its headline metric's.
std::string write_results(const std::string& prefix, const std::string& task, const std::string& metric,
                          const std::vector<SeedResult>& seeds);

}  // namespace kglm::train::tasks
