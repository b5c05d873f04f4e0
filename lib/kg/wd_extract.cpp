#include "kg/wd_extract.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <queue>

#include "core/error.hpp"
#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"
#include "core/log.hpp"
#include "core/ordered_pipeline.hpp"
#include "core/progress.hpp"
#include "core/provenance.hpp"
#include "h5/h5.hpp"
#include "kg/kg_store.hpp"
#include "kg/kg_tsv.hpp"
#include "kg/kg_writer.hpp"

namespace kglm::kg {
namespace {

struct LineError {
  uint64_t line;
  std::string reason;
};

// What a worker makes of one batch of dump lines.
struct BatchResult {
  StringArena arena;  // the records' strings
  std::vector<EntityRecord> records;
  std::vector<LineError> errors;
  std::vector<std::string> skipped;  // statistics keys
  ClaimCounts counts;
  uint64_t bytes = 0;
  uint64_t raw_bytes = 0;
};

void add_counts(Stats& s, const ClaimCounts& c) {
  s.add("novalue_skipped", static_cast<int64_t>(c.novalue));
  s.add("somevalue_skipped", static_cast<int64_t>(c.somevalue));
  s.add("deprecated_skipped", static_cast<int64_t>(c.deprecated));
  s.add("unsupported_values", static_cast<int64_t>(c.unsupported_value));
  s.add("claims_relation_filtered", static_cast<int64_t>(c.relation_filtered));
}

void sum_counts(ClaimCounts& into, const ClaimCounts& c) {
  into.novalue += c.novalue;
  into.somevalue += c.somevalue;
  into.deprecated += c.deprecated;
  into.unsupported_value += c.unsupported_value;
  into.relation_filtered += c.relation_filtered;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// How an input is laid out, decided from its first line.
enum class Layout { lines, document };

Layout detect_layout(std::string_view head, const std::string& name) {
  size_t i = 0;
  if (head.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // UTF-8 byte order mark
  while (i < head.size() && is_space(head[i])) ++i;
  if (i == head.size()) throw Error(location(name) + "empty input");
  if (head[i] == '[') return Layout::lines;
  if (head[i] != '{') throw Error(location(name) + "not a Wikidata JSON dump (expected '[' or '{' at the start)");
  // One entity per line when the first line holds a complete object that is not an API response.
  size_t end = head.find('\n', i);
  std::string_view first = head.substr(i, end == std::string_view::npos ? head.size() - i : end - i);
  int depth = 0;
  bool in_string = false;
  for (size_t k = 0; k < first.size(); ++k) {
    char c = first[k];
    if (in_string) {
      if (c == '\\')
        ++k;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  if (depth != 0) return Layout::document;
  return first.substr(0, 16).find("\"entities\"") != std::string_view::npos ? Layout::document : Layout::lines;
}

class Extraction {
 public:
  Extraction(const ExtractOptions& o)
      : options_(o),
        errors_(o.max_errors),
        writer_(o.output, make_provenance("wd-extract", o.command_line, o.inputs, o.seed), o.shard, o.shard_run) {
    for (unsigned t = 0; t < std::max(1u, o.threads); ++t) parsers_.push_back(std::make_unique<EntityParser>(o.parse));
  }

  Stats run() {
    auto start = std::chrono::steady_clock::now();
    for (const auto& path : options_.inputs) extract_input(path);
    errors_.finish(options_.inputs);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stats_.set("errors", static_cast<int64_t>(errors_.count()));
    stats_.set("input_bytes", static_cast<int64_t>(bytes_));
    stats_.set("input_lines", static_cast<int64_t>(ordinal_base_));
    stats_.set("elapsed_ms", static_cast<int64_t>(secs * 1000));
    stats_.set("mb_per_s", static_cast<int64_t>(secs > 0 ? bytes_ / 1e6 / secs : 0));
    writer_.finish(stats_);
    return stats_;
  }

 private:
  void consume(const BatchResult& r, const std::string& name) {
    errors_.add_valid(r.records.size() + r.skipped.size());
    for (const auto& e : r.errors) errors_.record(name, e.line, e.reason);
    for (const auto& k : r.skipped) stats_.add(k);
    add_counts(stats_, r.counts);
    for (const auto& rec : r.records) writer_.add(rec);
    items_ += r.records.size();
    bytes_ += r.bytes;
  }

  // The writer thread is the pipeline's bottleneck, so the thousands of small frees of a consumed
  // batch are left to the next worker that starts a batch.
  void discard(BatchResult&& r) {
    std::lock_guard lock(discarded_mutex_);
    discarded_.push_back(std::move(r));
  }
  void free_discarded() {
    std::vector<BatchResult> batches;
    {
      std::lock_guard lock(discarded_mutex_);
      batches.swap(discarded_);
    }
  }

  // A byte range of one input (a shard that reads only its share): the lines that start in
  // [begin, end) of what the input decodes to, numbered by their offset + 1 (lines are not counted
  // before the range). A plain file's offsets are the file's; a bzip2 file's count from the blocks
  // of its share (read_block_range), whose end is known only once reading gets there, so each
  // batch carries the end as known when it was read, and the ordinals put the shard index above
  // the offset to keep parts in order.
  struct ByteRange {
    bool active = false;
    uint64_t begin = 0, end = 0;
    uint64_t ordinal_base = 0;
  };
  struct Batch {
    LineBatch lines;
    uint64_t offset = 0;        // of its first byte
    uint64_t end = UINT64_MAX;  // the range's end, as known when it was read
  };

  void parse_lines(unsigned worker, const LineBatch& batch, uint64_t ordinal_base, uint64_t batch_offset,
                   const ByteRange& range, uint64_t range_end, BatchResult& out) {
    EntityParser& parser = *parsers_[worker];
    ParseResult result;
    const char* data_end = batch.end_of_storage();
    out.bytes = batch.size;
    out.raw_bytes = batch.raw_bytes;
    batch.for_each_line([&](uint64_t line_no, std::string_view line) {
      uint64_t ordinal = ordinal_base + line_no;
      if (range.active) {
        const uint64_t start = batch_offset + static_cast<uint64_t>(line.data() - batch.data.get());
        // The range starts one byte early: the line read from there is the previous shard's.
        if (start < range.begin || start >= range_end || (range.begin > 0 && start == range.begin - 1)) return;
        ordinal = range.ordinal_base + start + 1;
        line_no = 0;
      } else if (!in_shard(ordinal)) {
        return;
      }
      const std::string_view whole = line;
      if ((line_no == 1 || ordinal == 1) && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);  // byte order mark
      while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
      while (!line.empty() && is_space(line.back())) line.remove_suffix(1);
      if (!line.empty() && line.back() == ',') line.remove_suffix(1);
      if (line.empty() || line == "[" || line == "]") return;
      parser.parse(line.data(), line.size(), static_cast<size_t>(data_end - line.data()), out.arena, result);
      if (range.active && result.status == ParseStatus::error)
        result.reason =
            "at byte " + std::to_string(batch_offset + (whole.data() - batch.data.get())) + ": " + result.reason;
      take(result, ordinal, line_no, out);
    });
  }

  static void take(ParseResult& result, uint64_t ordinal, uint64_t line, BatchResult& out) {
    sum_counts(out.counts, result.counts);
    if (result.status == ParseStatus::kept) {
      result.record.ordinal = ordinal;
      out.records.push_back(std::move(result.record));
    } else if (result.status == ParseStatus::skipped) {
      out.skipped.push_back(std::move(result.reason));
    } else {
      out.errors.push_back({line, std::move(result.reason)});
    }
  }

  void extract_input(const std::string& path) {
    InputStream in(path);
    if (skip_empty_input(require_input_kind(in, {InputKind::json}, "a Wikidata JSON dump (JSON lines or a JSON array)"),
                         in.name())) {
      stats_.add("empty_inputs");
      return;
    }
    const bool byte_range_shard = options_.shard.active() && options_.inputs.size() == 1 && in.splittable();
    if (!byte_range_shard) in.decode_in_parallel(options_.threads);  // bzip2: decoding is the slow part
    LineBatcher batcher(in, options_.batch_bytes);
    LineBatch first;
    if (!batcher.next(first)) {
      if (!batcher.stream_error().empty()) throw Error(batcher.stream_error());
      throw Error(location(in.name()) + "empty input");
    }
    Progress progress("wd-extract " + in.name(), in.raw_size());
    uint64_t ordinals = 0;  // entity ordinals this input used up
    uint64_t lines_read = 0;
    if (detect_layout(first.lines(), in.name()) == Layout::document) {
      ordinals = extract_document(in, batcher, first);
    } else {
      // A shard of one plain or bzip2 file reads only its byte range; otherwise every shard reads
      // the whole input and keeps the lines whose ordinal is its index modulo the count.
      ByteRange range;
      std::unique_ptr<LineBatcher> ranged;
      if (byte_range_shard) {
        const uint64_t begin = options_.shard.split_point(in.raw_size(), options_.shard.index);
        const uint64_t end = options_.shard.split_point(in.raw_size(), options_.shard.index + 1);
        if (in.compression() == Compression::bzip2) {
          if (options_.shard.index >= (1u << 16)) throw UsageError("--shard: at most 65536 shards of a bzip2 file");
          in.read_block_range(begin, end, options_.threads);
          range = {true, in.block_range_prefix(), UINT64_MAX, static_cast<uint64_t>(options_.shard.index) << 48};
          in.rename(in.name() + " (bzip2 blocks from byte " + std::to_string(begin) + ")");
          stats_.set("shard_bzip2_blocks", 1);
        } else {
          range = {true, begin, end, 0};
          in.read_range(begin > 0 ? begin - 1 : 0, in.raw_size());
        }
        ranged = std::make_unique<LineBatcher>(in, options_.batch_bytes);
        stats_.set("shard_byte_range", 1);
      }
      LineBatcher& lines = ranged ? *ranged : batcher;
      const uint64_t base = ordinal_base_;
      uint64_t offset = 0;  // of the next batch: a plain range is read from the byte before it
      if (range.active && in.compression() == Compression::plain && range.begin > 0) offset = range.begin - 1;
      bool have_first = !range.active;
      auto range_end = [&] {
        if (!range.active) return UINT64_MAX;
        return in.compression() == Compression::bzip2 ? in.block_range_end() : range.end;
      };
      run_ordered_pipeline<Batch, BatchResult>(
          static_cast<unsigned>(parsers_.size()), 2 * parsers_.size() + 2,
          [&](Batch& b) {
            if (have_first) {
              b.lines = std::move(first);
              have_first = false;
            } else if (offset >= range_end()) {
              return false;
            } else if (!lines.next(b.lines)) {
              return false;
            }
            b.offset = offset;
            b.end = range_end();
            offset += b.lines.size;
            return true;
          },
          [&](unsigned w, Batch& b, BatchResult& r) {
            free_discarded();
            parse_lines(w, b.lines, base, b.offset, range, b.end, r);
            lines.recycle(std::move(b.lines));
          },
          [&](BatchResult& r) {
            consume(r, in.name());
            progress.update(items_, r.raw_bytes);
            discard(std::move(r));
          });
      if (range.active) lines_read = lines.lines_seen();
      if (!lines.stream_error().empty()) throw Error(lines.stream_error());
    }
    progress.finish();
    // A byte range's lines: those its batches held, the first batch read from the start not counted.
    ordinal_base_ += std::max(ordinals, lines_read > 0 ? lines_read : batcher.lines_seen());
    if (!batcher.stream_error().empty()) throw Error(batcher.stream_error());
    stats_.add(std::string("input_") + compression_name(in.compression()));
  }

  bool in_shard(uint64_t ordinal) const {
    return !options_.shard.active() || ordinal % options_.shard.count == options_.shard.index;
  }

  // A whole JSON document: a wbgetentities response {"entities": {...}} or one entity. Entities
  // are numbered from ordinal_base_ + 1 in document order; returns how many there were.
  uint64_t extract_document(InputStream& in, LineBatcher& batcher, LineBatch& first) {
    std::string text(first.lines());
    LineBatch more;
    while (batcher.next(more)) text.append(more.lines());
    simdjson::dom::parser dom;
    simdjson::dom::element doc;
    if (auto err = dom.parse(simdjson::padded_string(text)).get(doc)) {
      throw Error(location(in.name()) + "not a Wikidata JSON document: " + simdjson::error_message(err));
    }
    BatchResult out;
    out.bytes = text.size();
    ParseResult result;
    uint64_t ordinal = ordinal_base_;
    simdjson::dom::object entities;
    if (doc["entities"].get(entities) == simdjson::SUCCESS) {
      for (auto [id, entity] : entities) {
        if (!in_shard(++ordinal)) continue;
        parsers_[0]->parse(simdjson::minify(entity), out.arena, result);
        if (result.status == ParseStatus::error) result.reason = "entity " + std::string(id) + ": " + result.reason;
        take(result, ordinal, 0, out);
      }
    } else if (in_shard(++ordinal)) {
      parsers_[0]->parse(text, out.arena, result);
      take(result, ordinal, 0, out);
    }
    consume(out, in.name());
    return ordinal - ordinal_base_;
  }

  const ExtractOptions& options_;
  ErrorCounter errors_;
  KgWriter writer_;
  std::vector<std::unique_ptr<EntityParser>> parsers_;
  Stats stats_;
  std::mutex discarded_mutex_;
  std::vector<BatchResult> discarded_;
  uint64_t ordinal_base_ = 0;
  uint64_t items_ = 0;
  uint64_t bytes_ = 0;
};

// Reads a shard store's records in order, a block at a time.
class RecordCursor {
 public:
  explicit RecordCursor(const std::string& path) : file_(open_kg_file(path, true)), path_(path) {
    const h5::Group& root = file_.root();
    records_ = root.open_group("records");
    data_ = records_.open_group("data");
    size_ = h5::column_size(records_, "ordinal");
    stats_ = Stats::from_json(root.string_attribute("statistics"));
    provenance_ = h5::read_provenance(root);
    part_ = h5::read_shard_part(root, path);
    load();
  }

  bool done() const { return pos_ >= size_; }
  uint64_t ordinal() const { return ordinals_[pos_ - block_start_]; }
  // The record's strings stay valid until the next take().
  EntityRecord take() {
    size_t i = pos_ - block_start_;
    std::string_view bytes(blob_.data() + (offsets_[i] - offsets_[0]), offsets_[i + 1] - offsets_[i]);
    arena_.clear();
    EntityRecord e = deserialize(bytes, arena_);
    if (++pos_ < size_ && pos_ - block_start_ == ordinals_.size()) load();
    return e;
  }
  const Stats& stats() const { return stats_; }
  const Provenance& provenance() const { return provenance_; }
  const ShardPart& part() const { return part_; }

 private:
  void load() {
    static constexpr uint64_t kBlock = 65536;
    block_start_ = pos_;
    uint64_t n = std::min(kBlock, size_ - pos_);
    ordinals_.resize(n);
    offsets_.resize(n + 1);
    h5::read_column_range(records_, "ordinal", H5T_NATIVE_UINT64, pos_, n, ordinals_.data());
    h5::read_column_range(data_, "offsets", H5T_NATIVE_UINT64, pos_, n + 1, offsets_.data());
    if (offsets_.back() < offsets_.front()) throw Error(location(path_) + "corrupt record offsets");
    blob_.resize(offsets_.back() - offsets_.front());
    h5::read_column_range(data_, "blob", h5::native_type<char>(), offsets_.front(), blob_.size(), blob_.data());
  }

  h5::File file_;
  std::string path_;
  h5::Group records_, data_;
  uint64_t size_ = 0, pos_ = 0, block_start_ = 0;
  std::vector<uint64_t> ordinals_, offsets_;
  std::string blob_;
  StringArena arena_;
  Stats stats_;
  Provenance provenance_;
  ShardPart part_;
};

}  // namespace

std::unordered_set<uint64_t> read_id_list(const std::string& path, EntityType expected) {
  std::unordered_set<uint64_t> ids;
  for_each_data_line(path, [&](uint64_t line_no, std::string_view line) {
    line = line.substr(0, line.find_first_of("\t "));
    EntityType type;
    uint64_t number;
    if (!parse_entity_id(line, type, number) || type != expected) {
      throw Error(location(path, line_no) + "expected a " + (expected == EntityType::item ? "Q" : "P") + " id, got '" +
                  std::string(line) + "'");
    }
    ids.insert(number);
  });
  return ids;
}

Stats extract_kg(const ExtractOptions& options) {
  if (options.inputs.empty()) throw UsageError("no input");
  h5::set_compression(options.threads, options.compression_level);
  Stats stats = Extraction(options).run();
  if (!options.tsv_dir.empty() && !options.shard.active()) export_tsv(options.output, options.tsv_dir);
  return stats;
}

Stats merge_kg(const std::vector<std::string>& parts, const std::string& output, const std::string& tsv_dir,
               const std::string& command_line, unsigned threads) {
  h5::set_compression(threads, 1);
  if (parts.empty()) throw UsageError("merge: no shard stores given");
  std::vector<std::unique_ptr<RecordCursor>> cursors;
  Stats stats;
  Provenance provenance = make_provenance("wd-extract merge", command_line, parts, 0);
  std::vector<ShardPart> set;
  for (const auto& p : parts) {
    cursors.push_back(std::make_unique<RecordCursor>(p));
    set.push_back(cursors.back()->part());
    Stats part = cursors.back()->stats();
    for (const char* k : {"elapsed_ms", "mb_per_s", "input_bytes", "input_lines"}) part.set(k, 0);
    stats.merge(part);
    provenance.seed = cursors.back()->provenance().seed;
  }
  check_shard_set(set);
  KgWriter writer(output, provenance);
  // k-way merge on the line ordinal restores the single-pass entity order.
  using Head = std::pair<uint64_t, size_t>;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  for (size_t i = 0; i < cursors.size(); ++i) {
    if (!cursors[i]->done()) heads.emplace(cursors[i]->ordinal(), i);
  }
  while (!heads.empty()) {
    size_t i = heads.top().second;
    heads.pop();
    writer.add(cursors[i]->take());
    if (!cursors[i]->done()) heads.emplace(cursors[i]->ordinal(), i);
  }
  stats.set("shards", static_cast<int64_t>(parts.size()));
  writer.finish(stats);
  if (!tsv_dir.empty()) export_tsv(output, tsv_dir);
  return stats;
}

}  // namespace kglm::kg
