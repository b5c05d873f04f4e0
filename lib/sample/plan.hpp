// The language-sampling plan of multilingual ELMo §3.2 (and mBERT, XLM, XLM-R): with n_i the size
// of language i and p_i = n_i / Σn, languages are sampled with q_i ∝ p_i^α; truncation cuts every
// language to the size of the smallest (α = 0 with the smallest language kept whole).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kglm::sample {

// What a language's size is counted in.
enum class SizeUnit { lines, tokens, bytes };
SizeUnit parse_size_unit(std::string_view name);  // UsageError for anything else
const char* size_unit_name(SizeUnit unit);

// q_i ∝ p_i^α over the sizes; a language of size 0 gets q_i = 0 (even for α = 0). Throws Error
// when every size is 0 and UsageError for α < 0. The rule batch-level sampling uses too.
std::vector<double> smoothed_distribution(std::span<const double> sizes, double alpha);

struct LanguageSize {
  std::string lang;
  uint64_t records = 0;  // lines or JSONL records
  uint64_t units = 0;    // the size in the plan's unit (= records for lines)
};

struct PlanOptions {
  double alpha = 1.0;
  bool truncate = false;          // every language cut to the smallest (α = 0, smallest kept)
  std::optional<uint64_t> total;  // target units over all languages
  bool keep_smallest = false;     // scale so the smallest language keeps its full size
};

struct PlanRow {
  std::string lang;
  uint64_t records = 0;
  uint64_t units = 0;   // n_i
  double p = 0;         // n_i / Σn
  double q = 0;         // sampling probability
  uint64_t target = 0;  // units to write
  double ratio = 0;     // target / n_i (> 1: up-sampled)
};

struct Plan {
  SizeUnit unit = SizeUnit::lines;
  std::vector<PlanRow> rows;  // in language order
  uint64_t total_units() const;
  uint64_t total_target() const;
};

// Targets: q_i times the scale, rounded so that with --total they add up to it exactly (largest
// remainders); with --keep-smallest the smallest non-empty language gets exactly n_min; with
// neither, the total stays Σn. Empty languages get target 0.
Plan make_plan(SizeUnit unit, std::vector<LanguageSize> sizes, const PlanOptions& options);

// The plan as TSV with a '#' header (lang, records, <unit>, p, q, target, ratio); --counts reads it.
std::string format_plan(const Plan& plan);

// Language sizes from a TSV with a '#' header naming at least "lang" and the unit's column (the
// output of --plan is such a file); errors say file:line.
std::vector<LanguageSize> read_counts(const std::string& path, SizeUnit unit);

}  // namespace kglm::sample
