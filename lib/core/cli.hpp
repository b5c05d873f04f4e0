// The command line every tool shares: --help, --version, -o/--output, --threads, --seed, --quiet,
// --stats FILE, --max-errors N|P%, --allow-truncated, parsed with Boost.Program_options, plus the tool's own options.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/stats.hpp"

namespace kglm {

namespace po = boost::program_options;

struct CommonOptions {
  std::string output;
  unsigned threads = 1;
  uint64_t seed = 0;
  bool quiet = false;
  std::string stats_file;
  ErrorLimit max_errors;
  bool allow_truncated = false;
  std::vector<std::string> inputs;
  std::string command_line;
};

class ToolCli {
 public:
  // usage: e.g. "wd-extract [options] INPUT... -o kg.h5"; summary: one line on what the tool does.
  ToolCli(std::string tool, std::string usage, std::string summary);

  // The tool's own options; add them before parse().
  po::options_description_easy_init add() { return own_.add_options(); }
  // Positional arguments are collected as inputs; a tool that calls this also takes them as
  // repeatable -i/--input options (before parse()).
  void allow_input_option(std::string help) { input_help_ = std::move(help); }
  bool parse(int argc, const char* const* argv);  // false: --help/--version printed, exit 0
  void require_output() const;                    // UsageError when -o is missing
  void require_inputs(size_t min = 1) const;      // UsageError with fewer positional inputs

  const CommonOptions& common() const { return common_; }
  const po::variables_map& values() const { return vm_; }
  // The options that decide the output, canonical (sorted; not -o, --threads, --stats, --quiet,
  // --shard, --max-errors, inputs): part of a job array's run identity (core/shard.hpp).
  const std::string& result_options() const { return result_options_; }
  // The same less the tool's own output options (wiki-extract's --redirects: a file per part).
  std::string result_options(std::initializer_list<std::string_view> outputs) const;

 private:
  std::string tool_;
  std::string usage_;
  std::string summary_;
  std::string input_help_;
  po::options_description own_;
  CommonOptions common_;
  po::variables_map vm_;
  std::string result_options_;
};

// UsageError "--NAME must be in [lo, hi]" (parentheses for open ends) unless value is inside.
// Non-finite values never get this far: ToolCli::parse() rejects NaN and infinity in every
// floating-point option.
void require_range(const char* option, double value, double lo, double hi, bool lo_open = false, bool hi_open = false);

// What a data tool's library entry point takes from the shared command line.
struct RunOptions {
  std::vector<std::string> inputs;  // paths or "-"
  std::string output;
  unsigned threads = 1;
  size_t batch_bytes = 4 << 20;  // input per worker task
  ErrorLimit max_errors;
  uint64_t seed = 0;
  bool quiet = false;
  std::string command_line;
};

// Copies the shared options into run; batch_mb (the tool's --batch-mb) must be at least 1.
void fill_run_options(const CommonOptions& common, size_t batch_mb, RunOptions& run);

// The end of a run: statistics on stderr (unless --quiet) and in the --stats file, with the
// inputs --allow-truncated cut short as truncated_inputs.
void report_stats(const CommonOptions& common, const Stats& stats);

// Runs a tool body with the shared exit-status policy: 0 success, 1 Error (or any exception),
// 2 UsageError; the message is one line on stderr.
int run_tool(const char* tool, const std::function<int()>& body);

// The default of --threads: OMP_NUM_THREADS when it is set to a positive number (the HPC convention:
// a Slurm job's `export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK`, a test runner's share of the cores),
// else the CPUs this process may run on (a Slurm or taskset CPU set), not every core of the node.
unsigned default_threads();

// The version string of this build ("0.1.0").
const char* kglm_version();

}  // namespace kglm
