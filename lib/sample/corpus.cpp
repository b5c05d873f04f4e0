#include "sample/corpus.hpp"

#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "core/error.hpp"
#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"
#include "core/ordered_pipeline.hpp"

namespace kglm::sample {

namespace fs = std::filesystem;

std::string file_suffix(std::string_view path) {
  std::string_view name =
      path.substr(path.find_last_of('/') == std::string_view::npos ? 0 : path.find_last_of('/') + 1);
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

bool valid_language(std::string_view lang) {
  return !lang.empty() && lang.size() <= 32 && std::all_of(lang.begin(), lang.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

RecordFormat detect_format(std::string_view data) {
  size_t first = data.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return RecordFormat::auto_detect;
  return data[first] == '{' ? RecordFormat::jsonl : RecordFormat::text;
}

namespace {

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
    out.push_back({lang, dir + "/" + name, file_suffix(name), ""});
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
      out.push_back({lang, path, file_suffix(path), ""});
    } else if (arg != "-" && fs::is_directory(arg)) {
      add_directory(arg, out);
    } else {
      out.push_back({"", arg, file_suffix(arg), ""});
    }
  }
  if (out.empty()) throw UsageError("no inputs: give --input LANG=PATH, a directory of LANG.* files or a JSONL stream");
  return out;
}

// The length of the Unicode White_Space character (other than ASCII) starting at s[i], or 0:
// U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
size_t unicode_space_at(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  unsigned b0 = byte(0), b1 = byte(1), b2 = byte(2);
  if (b0 == 0xC2) return b1 == 0x85 || b1 == 0xA0 ? 2 : 0;
  if (b0 == 0xE1) return b1 == 0x9A && b2 == 0x80 ? 3 : 0;
  if (b0 == 0xE2 && b1 == 0x80) return (b2 >= 0x80 && b2 <= 0x8A) || b2 == 0xA8 || b2 == 0xA9 || b2 == 0xAF ? 3 : 0;
  if (b0 == 0xE2 && b1 == 0x81) return b2 == 0x9F ? 3 : 0;
  if (b0 == 0xE3) return b1 == 0x80 && b2 == 0x80 ? 3 : 0;
  return 0;
}

uint64_t count_whitespace_tokens(std::string_view text) {
  uint64_t tokens = 0;
  for_each_whitespace_token(text, [&](std::string_view) { ++tokens; });
  return tokens;
}

namespace {

// One line of a batch, compact because a 4 MB batch holds some 100k of them.
struct ScannedLine {
  uint64_t line = 0;
  uint64_t units = 0;
  uint32_t offset = 0;  // in the batch
  uint32_t length = 0;
  uint32_t lang_offset = 0;  // in ScannedBatch::langs (mixed streams)
  uint16_t lang_length = 0;
  bool bad = false;  // the reason is the next entry of ScannedBatch::errors
};

struct LanguageTotal {
  std::string lang;
  uint64_t records = 0;
  uint64_t units = 0;
};

struct ScannedBatch {
  LineBatch batch;
  std::vector<ScannedLine> lines;     // every record, or only the bad ones when counting totals
  std::vector<LanguageTotal> totals;  // counting totals: per language of the batch
  std::string langs;                  // the languages read from records, back to back
  std::vector<std::string> errors;    // one per bad line, in order
  uint64_t empty_lines = 0;
};

// What one line needs from its JSON, if anything.
class LineScanner {
 public:
  LineScanner(const RecordScanOptions& options, bool mixed, bool json)
      : options_(options), mixed_(mixed), json_(json && (mixed || options.unit == SizeUnit::tokens)) {}

  // Sets out.units; a mixed stream's language is appended to `langs`; false with `error` set for a
  // record that cannot be used.
  bool scan(std::string_view line, ScannedLine& out, std::string& langs, std::string& error) const {
    switch (options_.unit) {
      case SizeUnit::lines:
        out.units = 1;
        break;
      case SizeUnit::bytes:
        out.units = line.size() + 1;
        break;
      case SizeUnit::tokens:
        out.units = json_ ? 0 : count_whitespace_tokens(line);
        break;
    }
    return !json_ || scan_json(line, out, langs, error);
  }

 private:
  bool scan_json(std::string_view line, ScannedLine& out, std::string& langs, std::string& error) const {
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element root;
    // The batch keeps LineBatch::kPadding (= SIMDJSON_PADDING) readable bytes after every line.
    if (auto err = parser.parse(line.data(), line.size(), false).get(root)) {
      error = std::string("not JSON: ") + simdjson::error_message(err);
      return false;
    }
    if (mixed_) {
      std::string_view lang;
      if (root[options_.lang_field].get(lang) != simdjson::SUCCESS) {
        error = "no string field \"" + options_.lang_field + "\"";
        return false;
      }
      if (!valid_language(lang)) {
        error = "\"" + options_.lang_field + "\" is not a language code";
        return false;
      }
      out.lang_offset = static_cast<uint32_t>(langs.size());
      out.lang_length = static_cast<uint16_t>(lang.size());
      langs.append(lang);
    }
    if (options_.unit != SizeUnit::tokens) return true;
    if (!options_.token_field.empty()) {
      uint64_t count = 0;
      if (root[options_.token_field].get(count) != simdjson::SUCCESS) {
        error = "no non-negative integer field \"" + options_.token_field + "\"";
        return false;
      }
      out.units = count;
    } else {
      std::string_view text;
      if (root[options_.text_field].get(text) != simdjson::SUCCESS) {
        error = "no string field \"" + options_.text_field + "\"";
        return false;
      }
      out.units = count_whitespace_tokens(text);
    }
    return true;
  }

  const RecordScanOptions& options_;
  bool mixed_;
  bool json_;
};

}  // namespace

uint64_t scan_records(const CorpusSource& source, const RecordScanOptions& options, const ScanCallbacks& callbacks) {
  bool mixed = source.lang.empty();
  InputStream in(source.path);
  const bool totals_only = !callbacks.record;
  if (const InputKind kind = require_text_input(in, "text or JSON lines"); kind == InputKind::empty) {
    if (totals_only) skip_empty_input(kind, source.shown());  // warned once: in the counting pass
    return 0;
  }
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
  // Counting totals: a record's size is added to its language's total instead of being kept.
  auto add_total = [&](ScannedBatch& out, const ScannedLine& s) {
    std::string_view lang = mixed ? std::string_view(out.langs).substr(s.lang_offset, s.lang_length) : source.lang;
    auto it =
        std::find_if(out.totals.begin(), out.totals.end(), [&](const LanguageTotal& t) { return t.lang == lang; });
    if (it == out.totals.end()) it = out.totals.insert(out.totals.end(), LanguageTotal{std::string(lang), 0, 0});
    ++it->records;
    it->units += s.units;
    out.lines.pop_back();
    if (mixed) out.langs.resize(s.lang_offset);
  };
  std::function<void(unsigned, LineBatch&, ScannedBatch&)> work = [&](unsigned, LineBatch& batch, ScannedBatch& out) {
    if (batch.size > UINT32_MAX) throw Error(location(source.path, batch.first_line) + "a line of 4 GB or more");
    if (!totals_only) out.lines.reserve(batch.size / 64);
    std::string error;
    batch.for_each_line([&](uint64_t line_no, std::string_view line) {
      if (line.empty() || (line.size() == 1 && line[0] == '\r')) {
        ++out.empty_lines;
        return;
      }
      ScannedLine& s = out.lines.emplace_back();
      s.line = line_no;
      s.offset = static_cast<uint32_t>(line.data() - batch.data.get());
      s.length = static_cast<uint32_t>(line.size());
      if (!scanner->scan(line, s, out.langs, error)) {
        s.bad = true;
        out.errors.push_back(std::move(error));
        error.clear();
      } else if (totals_only) {
        add_total(out, s);
      }
    });
    out.batch = std::move(batch);
  };
  std::function<void(ScannedBatch&)> consume = [&](ScannedBatch& scanned) {
    empty_lines += scanned.empty_lines;
    size_t next_error = 0;
    for (const ScannedLine& s : scanned.lines) {
      if (s.bad) {
        callbacks.bad(s.line, scanned.errors[next_error++]);
        continue;
      }
      ScannedRecord record;
      record.line = s.line;
      record.lang =
          mixed ? std::string_view(scanned.langs).substr(s.lang_offset, s.lang_length) : std::string_view(source.lang);
      record.text = std::string_view(scanned.batch.data.get() + s.offset, s.length);
      record.units = s.units;
      callbacks.record(record);
    }
    for (const LanguageTotal& t : scanned.totals) callbacks.totals(t.lang, t.records, t.units);
    if (callbacks.progress) callbacks.progress(scanned.batch.raw_bytes);
    batcher.recycle(std::move(scanned.batch));
  };
  unsigned workers = std::max(1u, options.threads);
  run_ordered_pipeline<LineBatch, ScannedBatch>(workers, 2 * workers + 2, produce, work, consume);
  if (!batcher.stream_error().empty()) throw Error(location(source.path) + batcher.stream_error());
  return empty_lines;
}

}  // namespace kglm::sample
