#include "core/cli.hpp"

#include <sched.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "core/input_stream.hpp"
#include "core/log.hpp"
#include "core/temporaries.hpp"
#include "core/version.hpp"

namespace kglm {

namespace {
constexpr unsigned kHelpWidth = 110;  // columns of --help output

// The options as given, sorted by name, less those that cannot change what a run writes (where it
// goes, how many threads, what is printed) and the inputs, which shard_run_identity describes.
std::string canonical_options(const po::parsed_options& parsed) {
  static const std::set<std::string> kNotResult = {"output", "threads",    "quiet", "stats",  "shard",
                                                   "input",  "max-errors", "help",  "version"};
  std::multimap<std::string, std::string> kept;
  for (const po::option& o : parsed.options) {
    if (o.position_key >= 0 || kNotResult.count(o.string_key)) continue;
    std::string value;
    for (const std::string& v : o.value) value += (value.empty() ? "" : " ") + v;
    kept.emplace(o.string_key, value);
  }
  std::string out;
  for (const auto& [key, value] : kept) out += "--" + key + (value.empty() ? "" : "=" + value) + "\n";
  return out;
}
}  // namespace

const char* kglm_version() { return KGLM_VERSION; }

std::string ToolCli::result_options(std::initializer_list<std::string_view> outputs) const {
  std::string out;
  size_t start = 0;
  while (start < result_options_.size()) {
    const size_t end = result_options_.find('\n', start) + 1;
    const std::string_view line = std::string_view(result_options_).substr(start, end - start);
    bool output = false;
    for (std::string_view name : outputs) {
      const std::string_view key = line.substr(2, line.find_first_of("=\n") - 2);
      output = output || key == name;
    }
    if (!output) out += line;
    start = end;
  }
  return out;
}

unsigned default_threads() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    // "4", or "4,2" for nested levels (the outer one counts); anything else is ignored, as OpenMP does.
    char* end = nullptr;
    unsigned long n = std::strtoul(env, &end, 10);
    if (end != env && (*end == '\0' || *end == ',') && n > 0 && n <= 4096) return static_cast<unsigned>(n);
  }
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 0)
    return static_cast<unsigned>(CPU_COUNT(&allowed));
  return std::max(1u, std::thread::hardware_concurrency());
}

void fill_run_options(const CommonOptions& common, size_t batch_mb, RunOptions& run) {
  if (batch_mb == 0) throw UsageError("--batch-mb must be at least 1");
  run.inputs = common.inputs;
  run.output = common.output;
  run.threads = common.threads;
  run.batch_bytes = batch_mb << 20;
  run.max_errors = common.max_errors;
  run.seed = common.seed;
  run.quiet = common.quiet;
  run.command_line = common.command_line;
}

void report_stats(const CommonOptions& common, const Stats& given) {
  Stats stats = given;
  if (const auto truncated = truncated_inputs(); !truncated.empty())
    stats.set("truncated_inputs", static_cast<int64_t>(truncated.size()));
  if (!common.quiet) {
    log_info("done:");
    stats.print();
  }
  if (!common.stats_file.empty()) stats.write_json(common.stats_file);
}

ToolCli::ToolCli(std::string tool, std::string usage, std::string summary)
    : tool_(std::move(tool)),
      usage_(std::move(usage)),
      summary_(std::move(summary)),
      own_(tool_ + " options", kHelpWidth, kHelpWidth / 2) {
  set_log_tool_name(tool_);
}

bool ToolCli::parse(int argc, const char* const* argv) {
  for (int i = 0; i < argc; ++i) {
    if (i > 0) common_.command_line += ' ';
    common_.command_line += argv[i];
  }
  unsigned cores = default_threads();
  std::string max_errors;
  po::options_description common("common options", kHelpWidth, kHelpWidth / 2);
  // clang-format off
  common.add_options()
      ("help,h", "print this help and exit")
      ("version", "print the version and exit")
      ("output,o", po::value(&common_.output), "output path ('-' = stdout where the format allows)")
      ("threads,t", po::value(&common_.threads)->default_value(cores), "worker threads (default: $OMP_NUM_THREADS, else the CPUs this process may use)")
      ("seed", po::value(&common_.seed)->default_value(1234), "random seed; same seed => same output")
      ("quiet,q", po::bool_switch(&common_.quiet), "no progress or summary on stderr")
      ("stats", po::value(&common_.stats_file), "write run statistics as JSON to FILE")
      ("max-errors", po::value(&max_errors)->default_value("1000"),
       "fail (exit 1) past N bad records, or past a rate P% of the records (checked from 1,000 records on)")
      ("allow-truncated", po::bool_switch(&common_.allow_truncated),
       "keep what was read of a truncated compressed input (recorded in the statistics); default: exit 1");
  // clang-format on
  po::options_description hidden;
  if (input_help_.empty())
    hidden.add_options()("input", po::value(&common_.inputs));
  else
    common.add_options()("input,i", po::value(&common_.inputs)->composing(), input_help_.c_str());
  po::positional_options_description positional;
  positional.add("input", -1);

  po::options_description all;
  all.add(own_).add(common).add(hidden);
  try {
    const po::parsed_options parsed = po::command_line_parser(argc, argv).options(all).positional(positional).run();
    po::store(parsed, vm_);
    result_options_ = canonical_options(parsed);
    if (vm_.count("help")) {
      po::options_description visible(kHelpWidth, kHelpWidth / 2);
      visible.add(own_).add(common);
      std::cout << "Usage: " << usage_ << "\n"
                << summary_ << "\n\n"
                << visible << "\nSee man " << tool_ << " for details.\n";
      return false;
    }
    if (vm_.count("version")) {
      std::cout << tool_ << " (kglm) " << KGLM_VERSION << "\n";
      return false;
    }
    po::notify(vm_);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  for (const auto& [name, value] : vm_) {
    const boost::any& v = value.value();
    double x = 0;
    if (v.type() == typeid(double))
      x = boost::any_cast<double>(v);
    else if (v.type() == typeid(float))
      x = boost::any_cast<float>(v);
    if (!std::isfinite(x)) throw UsageError("--" + name + " must be a finite number");
  }
  if (common_.threads == 0) throw UsageError("--threads must be at least 1");
  common_.max_errors = ErrorLimit::parse(max_errors);
  set_allow_truncated(common_.allow_truncated);
  set_log_quiet(common_.quiet);
  return true;
}

void ToolCli::require_output() const {
  if (common_.output.empty()) throw UsageError("missing -o/--output");
}

void ToolCli::require_inputs(size_t min) const {
  if (common_.inputs.size() < min) throw UsageError("missing input (use '-' for stdin)");
}

void require_range(const char* option, double value, double lo, double hi, bool lo_open, bool hi_open) {
  const bool inside = (lo_open ? value > lo : value >= lo) && (hi_open ? value < hi : value <= hi);
  if (inside) return;
  std::ostringstream range;
  range << (lo_open ? '(' : '[') << lo << ", " << hi << (hi_open ? ')' : ']');
  std::ostringstream given;
  given << value;
  throw UsageError(std::string(option) + " must be in " + range.str() + ", not " + given.str());
}

int run_tool(const char* tool, const std::function<int()>& body) {
  set_log_tool_name(tool);
  install_interrupt_cleanup();  // SIGINT/SIGTERM/... remove temporaries and exit 128+signal
  try {
    return body();
  } catch (const UsageError& e) {
    log_error(e.what());
    std::cerr << "Try '" << tool << " --help'.\n";
    return 2;
  } catch (const std::exception& e) {
    log_error(e.what());
    return 1;
  }
}

}  // namespace kglm
