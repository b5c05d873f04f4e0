#include "train/prepare.hpp"

#include "tok/word_vocabulary_tokenizer.hpp"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>

#include "core/error.hpp"
#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"
#include "core/line_shard.hpp"
#include "core/log.hpp"
#include "core/ordered_pipeline.hpp"
#include "core/progress.hpp"
#include "core/provenance.hpp"
#include "h5/h5.hpp"
#include "train/token_shards.hpp"

namespace kglm::train {

uint8_t span_kind_flag(std::string_view kind) {
  if (kind == "entity") return kInEntity;
  if (kind == "relation") return kInRelation;
  if (kind == "link") return kLinkSlot;
  if (kind == "answer") return kInAnswer;
  return 0;
}

std::string check_spans(std::string_view text, std::span<const RecordSpan> spans) {
  auto inside_character = [&](uint64_t offset) {
    return offset < text.size() && (static_cast<unsigned char>(text[offset]) & 0xC0) == 0x80;
  };
  for (size_t i = 0; i < spans.size(); ++i) {
    const RecordSpan& s = spans[i];
    std::string problem;
    if (s.begin > s.end)
      problem = "begin after end";
    else if (s.end > text.size())
      problem = "beyond the text of " + std::to_string(text.size()) + " bytes";
    else if (inside_character(s.begin) || inside_character(s.end))
      problem = "an offset inside a UTF-8 character";
    if (!problem.empty())
      return "span " + std::to_string(i) + " [" + std::to_string(s.begin) + ", " + std::to_string(s.end) +
             "): " + problem;
  }
  return "";
}

std::vector<size_t> split_at_word_starts(std::span<const uint8_t> word_start, size_t budget) {
  if (budget == 0) throw Error("split_at_word_starts: a budget of 0 tokens");
  std::vector<size_t> ends;
  const size_t n = word_start.size();
  for (size_t begin = 0; n - begin > budget;) {
    size_t cut = begin + budget;
    while (cut > begin && !word_start[cut]) --cut;
    if (cut == begin) cut = begin + budget;  // one word longer than the budget
    ends.push_back(cut);
    begin = cut;
  }
  ends.push_back(n);
  return ends;
}

SequenceBuilder::SequenceBuilder(const tok::Tokenizer& tokenizer, uint32_t max_len)
    : tokenizer_(tokenizer), budget_(max_len - 2) {
  if (max_len < 3) throw UsageError("max_len must be at least 3 (bos, one token, eos)");
}

void SequenceBuilder::mark_spans(std::span<const RecordSpan> spans) {
  if (spans.empty()) return;
  const std::vector<uint32_t>& b = encoding_.begin;
  const std::vector<uint32_t>& e = encoding_.end;
  // Tokenizers give non-decreasing offsets: then each span's tokens are found by binary search,
  // otherwise by looking at every token.
  const bool ordered = std::is_sorted(b.begin(), b.end()) && std::is_sorted(e.begin(), e.end());
  for (size_t s = 0; s < spans.size(); ++s) {
    const uint64_t sb = spans[s].begin, se = spans[s].end;
    if (sb == se) continue;  // covers no bytes, hence no token
    size_t t = ordered ? static_cast<size_t>(std::lower_bound(e.begin(), e.end(), sb) - e.begin()) : 0;
    for (; t < b.size() && (!ordered || b[t] < se); ++t) {
      const bool overlaps = b[t] < e[t] ? b[t] < se && sb < e[t] : sb <= b[t] && b[t] < se;
      if (!overlaps) continue;
      flags_[t] |= spans[s].flag;
      if (span_[t] < 0) span_[t] = static_cast<int32_t>(s);
    }
  }
}

SequenceBuilder::Result SequenceBuilder::build(std::string_view text, std::span<const RecordSpan> spans,
                                               std::string_view lang, SequenceKind kind, uint64_t line, uint16_t input,
                                               SequenceBatch& out) {
  Result result;
  tokenizer_.encode(text, encoding_);
  const size_t n = encoding_.size();
  if (n == 0) return result;
  const tok::SpecialTokens& special = tokenizer_.special();
  flags_.assign(n, 0);
  span_.assign(n, -1);
  for (size_t t = 0; t < n; ++t) {
    const int32_t id = encoding_.ids[t];
    if (encoding_.word_start[t]) flags_[t] |= kWordStart;
    // A special id met in the text (e.g. a literal <mask>) is no masking target either, nor is
    // <unk> (predicting it teaches nothing).
    if (id == special.bos || id == special.eos || id == special.pad || id == special.mask || id == special.unk)
      flags_[t] |= kSpecialToken;
    result.unk_tokens += id == special.unk;
  }
  result.text_tokens = n;
  if (n > budget_ && kept_whole(kind)) {
    result.too_long = true;
    return result;
  }
  mark_spans(spans);
  size_t begin = 0;
  for (size_t end : split_at_word_starts(encoding_.word_start, budget_)) {
    out.push_token(special.bos, kSpecialToken, -1);
    for (size_t t = begin; t < end; ++t) out.push_token(encoding_.ids[t], flags_[t], span_[t]);
    out.push_token(special.eos, kSpecialToken, -1);
    out.end_sequence(lang, kind, line, input);
    begin = end;
    ++result.sequences;
  }
  return result;
}

bool kept_whole(SequenceKind kind) { return kind != SequenceKind::text && kind != SequenceKind::annotated; }

namespace {

// Per-batch counters, summed in input order into the run's statistics.
enum Counter {
  kLines,
  kEmptyLines,
  kRecords,
  kAnnotated,
  kEmptyRecords,
  kSplitLines,
  kTextTokens,
  kUnk,
  kSpans,
  kCount
};
constexpr std::array<const char*, kCount> kCounterNames = {
    "lines",       "empty_lines", "records", "annotated_records", "empty_records", "split_lines",
    "text_tokens", "unk_tokens",  "spans"};
using Counts = std::array<uint64_t, kCount>;

struct AnnotatedRecord {
  std::string_view text;
  std::optional<std::string_view> lang;
  std::vector<RecordSpan> spans;
  SequenceKind kind = SequenceKind::annotated;
};

// Which generator wrote a record, from the fields each adds to annotated text (man 5
// kglm-annotated): the objective a sequence is trained with follows from it.
SequenceKind record_kind(simdjson::dom::element root) {
  if (root["triple"].error() == simdjson::SUCCESS) {
    bool alias = false;
    if (root["alias"].get(alias) == simdjson::SUCCESS && alias) return SequenceKind::kmlm_alias;
    if (root["group"].error() == simdjson::SUCCESS) return SequenceKind::kmlm_parallel;
    return SequenceKind::kmlm;
  }
  int64_t cycle_kind = 0;
  if (root["cycle"].error() == simdjson::SUCCESS && root["kind"].get(cycle_kind) == simdjson::SUCCESS) {
    if (cycle_kind == 3) return SequenceKind::reasoning_3;
    if (cycle_kind == 4) return SequenceKind::reasoning_4;
  }
  if (root["en_sentence"].error() == simdjson::SUCCESS) return SequenceKind::entitycs;
  return SequenceKind::annotated;
}

// Reads {"text": …, "lang": …, "spans": [[begin, end, kind, id], …]}; false with `error` set for a
// record that cannot be used. The views point into the parser, valid until its next parse.
bool parse_annotated(simdjson::dom::parser& parser, std::string_view line, AnnotatedRecord& out, std::string& error) {
  simdjson::dom::element root;
  // LineBatch keeps kPadding (= SIMDJSON_PADDING) readable bytes after every line.
  if (auto err = parser.parse(line.data(), line.size(), false).get(root)) {
    error = std::string("not JSON: ") + simdjson::error_message(err);
    return false;
  }
  if (root["text"].get(out.text) != simdjson::SUCCESS) {
    error = "no string field \"text\"";
    return false;
  }
  out.lang.reset();
  auto lang = root["lang"];
  if (lang.error() != simdjson::NO_SUCH_FIELD) {
    std::string_view value;
    if (lang.get(value) != simdjson::SUCCESS) {
      error = "\"lang\" is not a string";
      return false;
    }
    out.lang = value;
  }
  out.kind = record_kind(root);
  out.spans.clear();
  auto spans = root["spans"];
  if (spans.error() == simdjson::NO_SUCH_FIELD) return true;
  simdjson::dom::array list;
  if (spans.get(list) != simdjson::SUCCESS) {
    error = "\"spans\" is not an array";
    return false;
  }
  for (simdjson::dom::element item : list) {
    const std::string which = "span " + std::to_string(out.spans.size());
    simdjson::dom::array fields;
    RecordSpan s;
    std::string_view kind;
    if (item.get(fields) || fields.at(0).get(s.begin) || fields.at(1).get(s.end) || fields.at(2).get(kind)) {
      error = which + " is not [begin, end, kind, id] with non-negative offsets";
      return false;
    }
    s.flag = span_kind_flag(kind);
    if (s.flag == 0) {
      error = which + ": unknown kind \"" + std::string(kind.substr(0, 32)) + "\"";
      return false;
    }
    out.spans.push_back(s);
  }
  return true;
}

struct InputBatch {
  LineBatch lines;
  bool json = false;
};

struct PreparedBatch {
  LineBatch lines;  // handed back to the batcher for reuse
  SequenceBatch sequences;
  std::vector<std::pair<uint64_t, std::string>> errors;  // bad records: line, reason
  Counts counts{};
  std::array<uint64_t, kSequenceKindCount> kinds{};     // records per SequenceKind
  std::array<uint64_t, kSequenceKindCount> too_long{};  // kept_whole records dropped for their length
  uint64_t longest_dropped = 0;                         // tokens, bos and eos included
};

// One worker's parser and scratch buffers.
struct Worker {
  Worker(const tok::Tokenizer& tokenizer, uint32_t max_len) : builder(tokenizer, max_len) {}
  simdjson::dom::parser parser;
  AnnotatedRecord record;
  SequenceBuilder builder;
};

class Preparer {
 public:
  Preparer(const PrepareOptions& o, const tok::Tokenizer& tokenizer, ShardedTokenWriter& writer, uint64_t raw_total)
      : o_(o), writer_(writer), errors_(o.max_errors) {
    for (unsigned w = 0; w < std::max(1u, o.threads); ++w)
      workers_.push_back(std::make_unique<Worker>(tokenizer, o.max_len));
    if (!o.quiet) progress_.emplace("prepare", raw_total);
  }

  // range: a job array part's share of the file (null: all of it).
  void run(const sample::CorpusSource& source, uint16_t input, const LineShardRange* range) {
    InputStream in(source.path);
    if (skip_empty_input(require_text_input(in, "plain text or annotated-text JSONL"), in.name())) return;
    if (range) restrict_to_line_range(in, *range);
    LineBatcher batcher(in, o_.batch_bytes);
    sample::RecordFormat format = o_.format;
    const uint64_t raw_before = raw_done_;
    const uint64_t raw_skipped = range ? range->begin : 0;  // raw_bytes count from the file's start
    std::function<bool(InputBatch&)> produce = [&](InputBatch& item) {
      if (!batcher.next(item.lines)) return false;
      if (format == sample::RecordFormat::auto_detect) format = sample::detect_format(item.lines.lines());
      item.json = format == sample::RecordFormat::jsonl;
      return true;
    };
    std::function<void(unsigned, InputBatch&, PreparedBatch&)> work = [&](unsigned w, InputBatch& item,
                                                                          PreparedBatch& out) {
      prepare_batch(*workers_[w], source, input, item, out);
    };
    std::function<void(PreparedBatch&)> consume = [&](PreparedBatch& done) {
      errors_.add_valid(done.counts[kLines] - done.counts[kEmptyLines] - done.errors.size());
      for (const auto& [line, reason] : done.errors) errors_.record(in.name(), line, reason);
      writer_.append(done.sequences);
      for (size_t k = 0; k < kCount; ++k) counts_[k] += done.counts[k];
      for (size_t k = 0; k < kSequenceKindCount; ++k) {
        kinds_[k] += done.kinds[k];
        too_long_[k] += done.too_long[k];
      }
      longest_dropped_ = std::max(longest_dropped_, done.longest_dropped);
      raw_done_ = raw_before + done.lines.raw_bytes - raw_skipped;
      if (progress_) progress_->update(counts_[kLines], raw_done_);
      batcher.recycle(std::move(done.lines));
    };
    const unsigned workers = static_cast<unsigned>(workers_.size());
    run_ordered_pipeline<InputBatch, PreparedBatch>(workers, 2 * workers + 2, produce, work, consume);
    if (!batcher.stream_error().empty()) throw Error(batcher.stream_error());
  }

  Stats finish(const std::vector<std::string>& inputs) {
    if (progress_) progress_->finish();
    errors_.finish(inputs);
    Stats stats;
    for (size_t k = 0; k < kCount; ++k) stats.set(kCounterNames[k], static_cast<int64_t>(counts_[k]));
    for (size_t k = 0; k < kSequenceKindCount; ++k)
      if (kinds_[k] > 0)
        stats.set(std::string("records.") + sequence_kind_name(static_cast<SequenceKind>(k)),
                  static_cast<int64_t>(kinds_[k]));
    uint64_t dropped = 0;
    std::string kinds;
    for (size_t k = 0; k < kSequenceKindCount; ++k)
      if (too_long_[k] > 0) {
        const std::string name = sequence_kind_name(static_cast<SequenceKind>(k));
        stats.set("records_too_long." + name, static_cast<int64_t>(too_long_[k]));
        dropped += too_long_[k];
        kinds += (kinds.empty() ? "" : ", ") + name + " " + std::to_string(too_long_[k]);
      }
    if (dropped > 0) {
      stats.set("longest_dropped_tokens", static_cast<int64_t>(longest_dropped_));
      log_warning(std::to_string(dropped) + " structured record(s) longer than --max-len " +
                  std::to_string(o_.max_len) + " tokens dropped whole, never split (" + kinds +
                  "; the longest: " + std::to_string(longest_dropped_) + " tokens with bos and eos)");
    }
    stats.set("bad_records", static_cast<int64_t>(errors_.count()));
    stats.set("sequences", static_cast<int64_t>(writer_.sequences()));
    stats.set("tokens", static_cast<int64_t>(writer_.tokens()));
    stats.set("unk_per_million",
              counts_[kTextTokens] == 0 ? 0 : static_cast<int64_t>(counts_[kUnk] * 1000000 / counts_[kTextTokens]));
    stats.set("languages", static_cast<int64_t>(writer_.languages().size()));
    for (size_t l = 0; l < writer_.languages().size(); ++l)
      stats.set("sequences." + writer_.languages()[l], static_cast<int64_t>(writer_.language_sequences()[l]));
    return stats;
  }

 private:
  void prepare_batch(Worker& w, const sample::CorpusSource& source, uint16_t input, InputBatch& item,
                     PreparedBatch& out) const {
    Counts& c = out.counts;
    std::string error;
    item.lines.for_each_line([&](uint64_t line_no, std::string_view line) {
      ++c[kLines];
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) {
        ++c[kEmptyLines];
        return;
      }
      std::string_view text = line;
      std::string_view lang = source.lang.empty() ? std::string_view(o_.default_lang) : source.lang;
      std::span<const RecordSpan> spans;
      SequenceKind kind = SequenceKind::text;
      if (item.json) {
        if (!parse_annotated(w.parser, line, w.record, error) ||
            !(error = check_spans(w.record.text, w.record.spans)).empty()) {
          out.errors.emplace_back(line_no, std::move(error));
          error.clear();
          return;
        }
        text = w.record.text;
        spans = w.record.spans;
        kind = w.record.kind;
        if (source.lang.empty() && w.record.lang) lang = *w.record.lang;  // LANG=PATH wins
      }
      if (!sample::valid_language(lang)) {
        out.errors.emplace_back(line_no, "\"" + std::string(lang.substr(0, 32)) + "\" is not a language code");
        return;
      }
      if (text.size() > UINT32_MAX) {  // token offsets are 32-bit
        out.errors.emplace_back(line_no, "a record of 4 GB or more");
        return;
      }
      ++c[kRecords];
      c[kAnnotated] += kind != SequenceKind::text;
      ++out.kinds[static_cast<size_t>(kind)];
      c[kSpans] += spans.size();
      const SequenceBuilder::Result r = w.builder.build(text, spans, lang, kind, line_no, input, out.sequences);
      if (r.too_long) {
        ++out.too_long[static_cast<size_t>(kind)];
        out.longest_dropped = std::max<uint64_t>(out.longest_dropped, r.text_tokens + 2);
      }
      c[kEmptyRecords] += r.sequences == 0 && !r.too_long;
      c[kSplitLines] += r.sequences > 1;
      c[kTextTokens] += r.text_tokens;
      c[kUnk] += r.unk_tokens;
    });
    out.lines = std::move(item.lines);
  }

  const PrepareOptions& o_;
  ShardedTokenWriter& writer_;
  ErrorCounter errors_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::optional<Progress> progress_;
  Counts counts_{};
  std::array<uint64_t, kSequenceKindCount> kinds_{};
  std::array<uint64_t, kSequenceKindCount> too_long_{};
  uint64_t longest_dropped_ = 0;
  uint64_t raw_done_ = 0;
};

void check_options(const PrepareOptions& o) {
  if (o.output.empty()) throw UsageError("missing -o/--output");
  if (o.output == "-") throw UsageError("the token dataset is an HDF5 file: give -o FILE, not '-'");
  if (o.tokenizer.empty()) throw UsageError("missing --tokenizer");
  if (o.max_len < 3) throw UsageError("--max-len must be at least 3 (bos, one token, eos)");
  if (!sample::valid_language(o.default_lang))
    throw UsageError("--lang '" + o.default_lang + "' is not a language code (letters, digits, '-', '_')");
  if (o.compression_level < 0 || o.compression_level > 9) throw UsageError("--compression must be 0..9");
  if (o.batch_bytes == 0) throw UsageError("the batch size must be at least 1 byte");
  if (o.shards < 1 || o.shards > 99999) throw UsageError("--shards must be in 1..99999");
  if (o.shard.active() && o.shards > 1)
    throw UsageError("--shard writes one file, a part of the job array's dataset: leave --shards out");
}

}  // namespace

Stats run_prepare(const PrepareOptions& o) {
  check_options(o);
  const std::vector<sample::CorpusSource> sources = sample::resolve_sources(o.inputs);
  if (sources.size() > UINT16_MAX + size_t{1}) throw UsageError("more than 65536 inputs");
  const std::unique_ptr<tok::Tokenizer> tokenizer =
      o.words ? std::make_unique<tok::WordVocabularyTokenizer>(o.tokenizer, o.whitespace)
              : tok::load_tokenizer(o.tokenizer);
  if (tokenizer->special().bos < 0 || tokenizer->special().eos < 0)
    throw Error(location(o.tokenizer) + "the tokenizer has no bos/eos tokens to frame sequences with");

  std::vector<std::string> paths;
  for (const sample::CorpusSource& s : sources) paths.push_back(s.path);
  const Provenance provenance = make_provenance("pretrain prepare", o.command_line, paths, o.seed);
  uint64_t raw_total = 0;
  for (const InputInfo& in : provenance.inputs) raw_total += in.size > 0 ? static_cast<uint64_t>(in.size) : 0;

  h5::set_compression(std::max(1u, o.threads), o.compression_level);
  std::vector<LineShardRange> ranges;
  if (o.shard.active()) {
    ranges = line_shard_ranges(paths, o.shard);
    raw_total = 0;  // the progress of a part: its share
    for (const LineShardRange& r : ranges) raw_total += r.end - r.begin;
  }
  ShardedTokenWriter writer(o.output, o.shards, dataset_info(*tokenizer, o.max_len), provenance);
  if (o.shard.active()) {
    std::vector<int64_t> first_bytes;
    for (const LineShardRange& r : ranges) first_bytes.push_back(static_cast<int64_t>(r.begin));
    writer.set_job_part(o.shard, o.shard_run, first_bytes);
  }
  Preparer preparer(o, *tokenizer, writer, raw_total);
  for (size_t i = 0; i < sources.size(); ++i)
    if (ranges.empty() || ranges[i].begin < ranges[i].end)
      preparer.run(sources[i], static_cast<uint16_t>(i), ranges.empty() ? nullptr : &ranges[i]);
  Stats stats = preparer.finish(paths);
  stats.set("files", static_cast<int64_t>(o.shards));
  writer.finish();
  return stats;
}

}  // namespace kglm::train
