#include "sample/corpus.hpp"

#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "core/error.hpp"
#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"
#include "core/ordered_pipeline.hpp"

namespace kglm::sample {

namespace fs = std::filesystem;

std::string file_suffix(std::string_view path) {
  std::string_view name = path.substr(path.find_last_of('/') == std::string_view::npos ? 0 : path.find_last_of('/') + 1);
  size_t last = name.rfind('.');
  if (last == std::string_view::npos || last == 0) return "";
  std::string_view ext = name.substr(last);
  if (ext == ".gz" || ext == ".bz2" || ext == ".zst") {
    size_t before = name.rfind('.', last - 1);
    if (before != std::string_view::npos && before > 0 && last > 0) return std::string(name.substr(before));
  }
  return std::string(ext);
}

RecordFormat parse_record_format(std::string_view name) {
  if (name == "auto") return RecordFormat::auto_detect;
  if (name == "text") return RecordFormat::text;
  if (name == "jsonl") return RecordFormat::jsonl;
  throw UsageError("--format must be auto, text or jsonl, not '" + std::string(name) + "'");
}

namespace {

bool valid_language(std::string_view lang) {
  return !lang.empty() && lang.size() <= 32 && std::all_of(lang.begin(), lang.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

void add_directory(const std::string& dir, std::vector<CorpusSource>& out) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.' || !entry.is_regular_file()) continue;
    if (name.find(".tmp.") != std::string::npos) continue;  // another tool's unfinished output
    names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) throw UsageError("directory " + dir + " has no LANG.* files");
  for (const std::string& name : names) {
    std::string lang = name.substr(0, name.find('.'));
    if (!valid_language(lang)) throw UsageError(dir + "/" + name + ": '" + lang + "' is not a language code");
    out.push_back({lang, dir + "/" + name, file_suffix(name)});
  }
}

}  // namespace

std::vector<CorpusSource> resolve_sources(const std::vector<std::string>& args) {
  std::vector<CorpusSource> out;
  for (const std::string& arg : args) {
    size_t eq = arg.find('=');
    if (eq != std::string::npos && !fs::exists(arg)) {
      std::string lang = arg.substr(0, eq), path = arg.substr(eq + 1);
      if (!valid_language(lang)) throw UsageError("--input " + arg + ": '" + lang + "' is not a language code");
      if (path.empty()) throw UsageError("--input " + arg + ": no path after '='");
      out.push_back({lang, path, file_suffix(path)});
    } else if (arg != "-" && fs::is_directory(arg)) {
      add_directory(arg, out);
    } else {
      out.push_back({"", arg, file_suffix(arg)});
    }
  }
  if (out.empty()) throw UsageError("no inputs: give --input LANG=PATH, a directory of LANG.* files or a JSONL stream");
  return out;
}

uint64_t count_whitespace_tokens(std::string_view text) {
  uint64_t tokens = 0;
  bool in_word = false;
  for (char c : text) {
    bool space = c == ' ' || (c >= '\t' && c <= '\r');
    tokens += !space && !in_word;
    in_word = !space;
  }
  return tokens;
}

namespace {

struct ScannedLine {
  uint64_t line = 0;
  size_t offset = 0;    // in the batch
  size_t length = 0;
  uint64_t units = 0;
  std::string lang;     // from the record (mixed streams); empty: the source's
  std::string error;    // non-empty: a bad record
};

struct ScannedBatch {
  LineBatch batch;
  std::vector<ScannedLine> lines;
  uint64_t empty_lines = 0;
};

// What one line needs from its JSON, if anything.
class LineScanner {
 public:
  LineScanner(const RecordScanOptions& options, bool mixed, bool json)
      : options_(options), mixed_(mixed), json_(json && (mixed || options.unit == SizeUnit::tokens)) {}

  void scan(std::string_view line, ScannedLine& out) const {
    switch (options_.unit) {
      case SizeUnit::lines: out.units = 1; break;
      case SizeUnit::bytes: out.units = line.size() + 1; break;
      case SizeUnit::tokens: out.units = json_ ? 0 : count_whitespace_tokens(line); break;
    }
    if (json_) scan_json(line, out);
  }

 private:
  void scan_json(std::string_view line, ScannedLine& out) const {
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element root;
    // The batch keeps LineBatch::kPadding (= SIMDJSON_PADDING) readable bytes after every line.
    if (auto err = parser.parse(line.data(), line.size(), false).get(root)) {
      out.error = std::string("not JSON: ") + simdjson::error_message(err);
      return;
    }
    if (mixed_) {
      std::string_view lang;
      if (root[options_.lang_field].get(lang) != simdjson::SUCCESS) {
        out.error = "no string field \"" + options_.lang_field + "\"";
        return;
      }
      if (!valid_language(lang)) {
        out.error = "\"" + options_.lang_field + "\" is not a language code";
        return;
      }
      out.lang = lang;
    }
    if (options_.unit != SizeUnit::tokens) return;
    if (!options_.token_field.empty()) {
      uint64_t count = 0;
      if (root[options_.token_field].get(count) != simdjson::SUCCESS) {
        out.error = "no non-negative integer field \"" + options_.token_field + "\"";
        return;
      }
      out.units = count;
    } else {
      std::string_view text;
      if (root[options_.text_field].get(text) != simdjson::SUCCESS) {
        out.error = "no string field \"" + options_.text_field + "\"";
        return;
      }
      out.units = count_whitespace_tokens(text);
    }
  }

  const RecordScanOptions& options_;
  bool mixed_;
  bool json_;
};

RecordFormat detect_format(std::string_view data) {
  size_t first = data.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && data[first] == '{' ? RecordFormat::jsonl : RecordFormat::text;
}

}  // namespace

uint64_t scan_records(const CorpusSource& source, const RecordScanOptions& options, const ScanCallbacks& callbacks) {
  bool mixed = source.lang.empty();
  InputStream in(source.path);
  LineBatcher batcher(in, options.batch_bytes);
  RecordFormat format = options.format;
  std::unique_ptr<LineScanner> scanner;
  uint64_t empty_lines = 0;

  std::function<bool(LineBatch&)> produce = [&](LineBatch& batch) {
    if (!batcher.next(batch)) return false;
    if (!scanner) {  // decided once, on the producer thread, before any worker sees a batch
      if (format == RecordFormat::auto_detect) format = detect_format(batch.lines());
      if (mixed && format != RecordFormat::jsonl)
        throw Error(location(source.path) + "a stream without LANG= must be JSONL records with a \"" +
                    options.lang_field + "\" field");
      scanner = std::make_unique<LineScanner>(options, mixed, format == RecordFormat::jsonl);
    }
    return true;
  };
  std::function<void(unsigned, LineBatch&, ScannedBatch&)> work = [&](unsigned, LineBatch& batch, ScannedBatch& out) {
    out.lines.reserve(batch.size / 64);
    batch.for_each_line([&](uint64_t line_no, std::string_view line) {
      if (line.empty() || (line.size() == 1 && line[0] == '\r')) {
        ++out.empty_lines;
        return;
      }
      ScannedLine& s = out.lines.emplace_back();
      s.line = line_no;
      s.offset = static_cast<size_t>(line.data() - batch.data.get());
      s.length = line.size();
      scanner->scan(line, s);
    });
    out.batch = std::move(batch);
  };
  std::function<void(ScannedBatch&)> consume = [&](ScannedBatch& scanned) {
    empty_lines += scanned.empty_lines;
    for (const ScannedLine& s : scanned.lines) {
      if (!s.error.empty()) {
        callbacks.bad(s.line, s.error);
        continue;
      }
      ScannedRecord record;
      record.line = s.line;
      record.lang = mixed ? std::string_view(s.lang) : std::string_view(source.lang);
      record.text = std::string_view(scanned.batch.data.get() + s.offset, s.length);
      record.units = s.units;
      callbacks.record(record);
    }
    if (callbacks.progress) callbacks.progress(scanned.batch.raw_bytes);
    batcher.recycle(std::move(scanned.batch));
  };
  unsigned workers = std::max(1u, options.threads);
  run_ordered_pipeline<LineBatch, ScannedBatch>(workers, 2 * workers + 2, produce, work, consume);
  if (!batcher.stream_error().empty()) throw Error(location(source.path) + batcher.stream_error());
  return empty_lines;
}

}  // namespace kglm::sample
