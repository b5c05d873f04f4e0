#include "sample/sample_lang.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <unordered_map>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/output_lock.hpp"
#include "core/output_stream.hpp"
#include "core/progress.hpp"
#include "core/string_hash.hpp"
#include "core/temporaries.hpp"
#include "sample/external_shuffle.hpp"
#include "sample/record_selector.hpp"

namespace kglm::sample {

namespace fs = std::filesystem;

namespace {

// A stable 64-bit key per language (FNV-1a), so a language's random streams do not depend on
// which other languages or inputs a run has.
uint64_t language_key(std::string_view lang) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : lang) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string default_tmp_dir(const SampleLangOptions& o) {
  if (!o.tmp_dir.empty()) return o.tmp_dir;
  if (!o.split_dir.empty()) return o.split_dir;
  if (!o.output.empty() && o.output != "-") {
    fs::path parent = fs::path(o.output).parent_path();
    return parent.empty() ? "." : parent.string();
  }
  const char* env = std::getenv("TMPDIR");
  return env && *env ? env : "/tmp";
}

// Standard input copied (still compressed, if it is) to an anonymous file, so it can be read twice.
// It is opened again through /proc/self/fd/N; where there is no /proc, a registered named
// temporary (removed on SIGINT/SIGTERM) stands in.
class SpilledStdin {
 public:
  explicit SpilledStdin(const std::string& dir) {
    if (fs::exists("/proc/self/fd")) {
      fd_ = open_anonymous_file(dir);
      path_ = "/proc/self/fd/" + std::to_string(fd_);
    } else {
      named_ = dir + "/kglm-stdin-XXXXXX";
      fd_ = ::mkostemp(named_.data(), O_CLOEXEC);
      if (fd_ < 0) throw Error("cannot create a temporary file in " + dir + ": " + std::strerror(errno));
      register_temporary(named_);
      path_ = named_;
    }
    std::string buffer(1 << 20, '\0');
    for (;;) {
      ssize_t n = ::read(STDIN_FILENO, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error(std::string("cannot read standard input: ") + std::strerror(errno));
      if (n == 0) break;
      write_all(fd_, buffer.data(), static_cast<size_t>(n), "the spilled standard input");
    }
  }
  ~SpilledStdin() {
    ::close(fd_);
    if (!named_.empty()) {
      ::unlink(named_.c_str());
      unregister_temporary(named_);
    }
  }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string named_;
  std::string path_;
};

// Where one output stream's records go: straight out, or through a shuffle.
class Sink {
 public:
  Sink(const std::string& path, bool shuffle, const std::string& tmp_dir, size_t memory, uint64_t seed, uint64_t key)
      : out_(path) {
    if (shuffle) shuffle_ = std::make_unique<ExternalShuffle>(tmp_dir, memory, seed, key);
  }
  void add(std::string_view record) {
    if (shuffle_) return shuffle_->add(record);
    chunk_.append(record);
    chunk_.push_back('\n');
    if (chunk_.size() >= (1 << 20)) out_.write(chunk_), chunk_.clear();
  }
  // Writes what is pending; the file keeps its temporary name until it is put in place.
  void finish(Stats& stats) {
    if (finished_) return;
    finished_ = true;
    if (shuffle_) {
      shuffle_->finish(out_);
      stats.add("shuffle_runs", static_cast<int64_t>(shuffle_->runs_spilled()));
      shuffle_.reset();
    }
    out_.write(chunk_);
    chunk_.clear();
    chunk_.shrink_to_fit();
  }
  OutputStream& stream() { return out_; }

 private:
  OutputStream out_;
  std::unique_ptr<ExternalShuffle> shuffle_;
  std::string chunk_;
  bool finished_ = false;
};

uint64_t input_bytes(const std::vector<CorpusSource>& sources) {
  uint64_t total = 0;
  std::error_code ec;
  for (const CorpusSource& s : sources)
    if (s.path != "-" && fs::is_regular_file(s.path, ec)) total += fs::file_size(s.path, ec);
  return total;
}

std::string format_result_table(const Plan& plan, const std::vector<uint64_t>& written) {
  std::string out = std::string("lang\t") + size_unit_name(plan.unit) + "\ttarget\twritten\n";
  for (size_t i = 0; i < plan.rows.size(); ++i)
    out += plan.rows[i].lang + "\t" + std::to_string(plan.rows[i].units) + "\t" + std::to_string(plan.rows[i].target) +
           "\t" + std::to_string(written[i]) + "\n";
  return out;
}

}  // namespace

Stats sample_languages(const SampleLangOptions& o) {
  if (!o.plan_only && o.output.empty() == o.split_dir.empty())
    throw UsageError("give exactly one of -o FILE (one interleaved stream) and --split-by-lang DIR");
  OutputLock lock;  // --split-by-lang: the directory, against a second run, for the whole run
  if (!o.plan_only && !o.split_dir.empty()) lock = OutputLock(o.split_dir, "split directory");
  if (!o.scan.token_field.empty() && o.scan.unit != SizeUnit::tokens)
    throw UsageError("--token-field needs --unit tokens");
  std::vector<CorpusSource> sources = resolve_sources(o.inputs);
  size_t from_stdin =
      std::count_if(sources.begin(), sources.end(), [](const CorpusSource& s) { return s.path == "-"; });
  if (from_stdin > 1) throw UsageError("standard input ('-') can be given only once");
  bool any_mixed = std::any_of(sources.begin(), sources.end(), [](const CorpusSource& s) { return s.lang.empty(); });
  // Per-language files are read language by language, so split outputs finish one at a time.
  if (!any_mixed)
    std::stable_sort(sources.begin(), sources.end(),
                     [](const CorpusSource& a, const CorpusSource& b) { return a.lang < b.lang; });

  Stats stats;
  ErrorCounter errors(o.max_errors);
  std::string tmp_dir = default_tmp_dir(o);
  std::unique_ptr<SpilledStdin> spilled;
  bool counting_pass = o.counts.empty();
  if (from_stdin && counting_pass && !o.plan_only) {
    make_directories(tmp_dir);
    spilled = std::make_unique<SpilledStdin>(tmp_dir);
    for (CorpusSource& s : sources) {
      if (s.path != "-") continue;
      s.path = spilled->path();
      s.name = "stdin";  // messages name standard input as such, also once read from its copy
    }
  }
  auto name_of = [](const CorpusSource& s) { return s.shown(); };
  for (CorpusSource& s : sources)
    if (s.suffix.empty() && s.lang.empty()) s.suffix = ".jsonl";
  uint64_t raw_total = input_bytes(sources);

  // Pass 1: sizes per language.
  std::vector<LanguageSize> sizes;
  uint64_t empty_lines = 0;
  if (counting_pass) {
    std::map<std::string, LanguageSize, std::less<>> by_lang;
    for (const CorpusSource& s : sources)
      if (!s.lang.empty()) by_lang[s.lang].lang = s.lang;  // a declared language is listed even when empty
    Progress progress("counting", raw_total);
    uint64_t records = 0, raw_done = 0;
    for (const CorpusSource& s : sources) {
      ScanCallbacks on;
      on.totals = [&](std::string_view lang, uint64_t n, uint64_t units) {
        auto it = by_lang.find(lang);
        if (it == by_lang.end()) it = by_lang.emplace(std::string(lang), LanguageSize{std::string(lang), 0, 0}).first;
        it->second.records += n;
        it->second.units += units;
        records += n;
        errors.add_valid(n);
      };
      on.bad = [&](uint64_t line, std::string_view reason) { errors.record(name_of(s), line, reason); };
      uint64_t raw_before = raw_done;
      on.progress = [&](uint64_t raw) { progress.update(records, raw_done = raw_before + raw); };
      empty_lines += scan_records(s, o.scan, on);
    }
    progress.finish();
    for (auto& [lang, size] : by_lang) sizes.push_back(size);
  } else {
    sizes = read_counts(o.counts, o.scan.unit);
  }

  std::vector<std::string> input_names;
  for (const CorpusSource& s : sources) input_names.push_back(name_of(s));
  if (counting_pass) errors.finish(input_names);
  if (std::all_of(sizes.begin(), sizes.end(), [](const LanguageSize& l) { return l.units == 0; }) && !o.plan_only) {
    // Empty input, the same in every tool: a warning, an empty output, exit 0.
    log_warning("every input is empty: the output is empty");
    if (o.split_dir.empty()) {
      OutputStream(o.output).close();
    } else {
      make_directories(o.split_dir);
      for (const CorpusSource& s : sources)
        if (!s.lang.empty()) OutputStream(o.split_dir + "/" + s.lang + s.suffix).close();
    }
    stats.set("records_out", 0);
    return stats;
  }
  Plan plan = make_plan(o.scan.unit, sizes, o.plan);
  stats.set("languages", static_cast<int64_t>(plan.rows.size()));
  stats.set("units_in", static_cast<int64_t>(plan.total_units()));
  stats.set("target_units", static_cast<int64_t>(plan.total_target()));
  if (o.plan_only) {
    write_file_atomically(o.output.empty() ? "-" : o.output, format_plan(plan));
    stats.set("bad_records", static_cast<int64_t>(errors.count()));
    return stats;
  }
  if (!o.write_plan.empty()) write_file_atomically(o.write_plan, format_plan(plan));
  if (!o.quiet) {
    for (const PlanRow& r : plan.rows)
      if (r.units == 0) log_warning("language " + r.lang + " has no records: nothing of it is written");
  }

  // Pass 2: select and write.
  std::unordered_map<std::string, size_t, StringHash, std::equal_to<>> row_of;
  std::vector<RecordSelector> selectors;
  for (size_t i = 0; i < plan.rows.size(); ++i) {
    row_of.emplace(plan.rows[i].lang, i);
    selectors.emplace_back(plan.rows[i].units, plan.rows[i].target, o.seed, language_key(plan.rows[i].lang));
  }
  for (const CorpusSource& s : sources)
    if (!s.lang.empty() && !row_of.count(s.lang)) throw Error(o.counts + " has no line for language " + s.lang);
  std::vector<std::unique_ptr<Sink>> sinks;  // one, or one per language
  std::vector<size_t> last_source(plan.rows.size(), 0);
  const bool split = !o.split_dir.empty();
  if (split) {
    make_directories(o.split_dir);
    std::map<std::string, std::string> suffix;
    for (size_t i = 0; i < sources.size(); ++i) {
      if (sources[i].lang.empty()) continue;
      suffix.emplace(sources[i].lang, sources[i].suffix);
      last_source[row_of.at(sources[i].lang)] = i;
    }
    std::string mixed_suffix;
    for (const CorpusSource& s : sources)
      if (s.lang.empty() && mixed_suffix.empty()) mixed_suffix = s.suffix;
    size_t memory = any_mixed ? std::max<size_t>(o.memory_bytes / plan.rows.size(), 1 << 20) : o.memory_bytes;
    for (const PlanRow& r : plan.rows) {
      auto it = suffix.find(r.lang);
      std::string path = o.split_dir + "/" + r.lang + (it != suffix.end() ? it->second : mixed_suffix);
      sinks.push_back(std::make_unique<Sink>(path, o.shuffle, tmp_dir, memory, o.seed, language_key(r.lang)));
    }
  } else {
    make_directories(tmp_dir);
    sinks.push_back(std::make_unique<Sink>(o.output, o.shuffle, tmp_dir, o.memory_bytes, o.seed, language_key("")));
  }

  std::vector<uint64_t> seen_units(plan.rows.size(), 0), written_units(plan.rows.size(), 0);
  uint64_t records_in = 0, records_out = 0, raw_done = 0;
  Progress progress("sampling", raw_total);
  for (size_t si = 0; si < sources.size(); ++si) {
    const CorpusSource& s = sources[si];
    std::string name = name_of(s);
    ScanCallbacks on;
    on.record = [&](const ScannedRecord& r) {
      auto it = row_of.find(r.lang);
      if (it == row_of.end()) {  // only with --counts: pass 1 saw every language
        errors.record(name, r.line, "language " + std::string(r.lang) + " is not in " + o.counts);
        return;
      }
      size_t row = it->second;
      if (!counting_pass) errors.add_valid();
      ++records_in;
      seen_units[row] += r.units;
      uint64_t copies = selectors[row].copies(r.units);
      Sink& sink = *sinks[split ? row : 0];
      for (uint64_t c = 0; c < copies; ++c) sink.add(r.text);
      records_out += copies;
      written_units[row] += copies * r.units;
    };
    on.bad = [&](uint64_t line, std::string_view reason) {
      if (!counting_pass) errors.record(name, line, reason);  // else reported by pass 1
    };
    uint64_t raw_before = raw_done;
    on.progress = [&](uint64_t raw) { progress.update(records_in, raw_done = raw_before + raw); };
    uint64_t empty = scan_records(s, o.scan, on);
    if (!counting_pass) empty_lines += empty;
    if (split && !any_mixed) {
      size_t row = row_of.at(s.lang);
      if (last_source[row] == si) sinks[row]->finish(stats);
    }
  }
  progress.finish();
  for (size_t i = 0; i < plan.rows.size(); ++i) {
    if (seen_units[i] != plan.rows[i].units)
      throw Error(std::string(counting_pass ? "the input changed between the two passes: " : o.counts + ": ") +
                  "language " + plan.rows[i].lang + " has " + std::to_string(seen_units[i]) + " " +
                  size_unit_name(plan.unit) + ", not " + std::to_string(plan.rows[i].units));
  }
  errors.finish(input_names);
  for (auto& sink : sinks) sink->finish(stats);
  std::vector<OutputStream*> parts;
  for (auto& sink : sinks) parts.push_back(&sink->stream());
  put_in_place_together(parts);

  uint64_t units_out = 0;
  for (uint64_t w : written_units) units_out += w;
  stats.set("records_in", static_cast<int64_t>(records_in));
  stats.set("records_out", static_cast<int64_t>(records_out));
  stats.set("units_out", static_cast<int64_t>(units_out));
  stats.set("bad_records", static_cast<int64_t>(errors.count()));
  stats.set("empty_lines", static_cast<int64_t>(empty_lines));
  if (!o.quiet) log_info("per language:\n" + format_result_table(plan, written_units));
  return stats;
}

}  // namespace kglm::sample
