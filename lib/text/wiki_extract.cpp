#include "text/wiki_extract.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

#include "core/error.hpp"
#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/json_writer.hpp"
#include "core/line_batcher.hpp"
#include "core/ordered_pipeline.hpp"
#include "core/output_stream.hpp"
#include "core/progress.hpp"
#include "text/dump_shard.hpp"
#include "text/mediawiki_dump.hpp"
#include "text/sentence_splitter.hpp"
#include "text/wikiextractor_input.hpp"
#include "text/wikitext.hpp"

namespace kglm::text {

namespace {

constexpr size_t kMaxPagesPerBatch = 4096;

struct PageError {
  uint64_t line;
  std::string reason;
  bool located = false;  // reason already starts with "file:line: "
};

struct Batch {
  std::string file;
  std::vector<WikiPage> pages;
  std::shared_ptr<const LinkNamespaces> namespaces;
  uint64_t pages_seen = 0;  // including pages of other namespaces
  uint64_t input_bytes = 0;
  std::optional<PageError> input_error;  // the input stopped here (malformed XML, corrupt stream)
};

struct BatchResult {
  std::string file;
  std::string records;
  std::string redirects;
  Stats stats;
  std::vector<PageError> errors;
  uint64_t valid_pages = 0;  // pages read without error (articles, redirects, other namespaces)
  uint64_t input_bytes = 0;
};

// Reads the inputs in turn and cuts them into batches of pages.
class BatchSource {
 public:
  explicit BatchSource(const WikiExtractOptions& o) : options_(o) {}

  bool next(Batch& batch) {
    bool more = fill(batch);
    raw_progress_.store(raw_done_ + (input_ ? input_->raw_bytes_read() : 0), std::memory_order_relaxed);
    return more;
  }

  // What the source adds to the statistics (a shard's byte count).
  const Stats& stats() const { return stats_; }

  // Compressed bytes read so far; safe to call from any thread (for the progress line).
  uint64_t raw_bytes() const { return raw_progress_.load(std::memory_order_relaxed); }

 private:
  bool fill(Batch& batch) {
    for (;;) {
      if (!input_ && !open_next()) return false;
      batch.file = options_.shard.active() ? input_->name() + " (shard " + options_.shard.str() + ", bytes " +
                                                 std::to_string(shard_.begin) + ".." + std::to_string(shard_.end) +
                                                 "; lines from the dump's header)"
                                           : input_->name();
      batch.namespaces = namespaces_;
      size_t bytes = 0;
      try {
        bool more = options_.input_format == WikiExtractOptions::Input::xml ? fill_from_xml(batch, bytes)
                                                                            : fill_from_lines(batch, bytes);
        if (more) return true;
      } catch (const Error& e) {
        if (pages_in_file_ == 0 && batch.pages.empty()) throw;  // not a dump at all: unusable input
        batch.input_error = PageError{0, e.what(), true};
      }
      close_current();
      if (!batch.pages.empty() || batch.input_error || batch.pages_seen > 0) return true;
    }
  }

  bool open_next() {
    for (;;) {
      if (next_input_ >= options_.inputs.size()) return false;
      input_ = std::make_unique<InputStream>(options_.inputs[next_input_++]);
      const bool xml = options_.input_format == WikiExtractOptions::Input::xml;
      InputKind kind =
          xml ? require_input_kind(*input_, {InputKind::xml}, "a MediaWiki XML dump")
              : require_input_kind(*input_, {InputKind::json},
                                   "WikiExtractor --json output (JSON lines; --input-format wikiextractor)");
      if (skip_empty_input(kind, input_->name())) {
        input_.reset();
        continue;
      }
      if (!options_.shard.active()) break;
      shard_ = restrict_to_dump_shard(*input_, options_.inputs[next_input_ - 1], options_.shard);
      stats_.set("shard_bytes", static_cast<int64_t>(shard_.end - shard_.begin));
      if (!shard_.empty()) break;
      input_.reset();  // a shard without pages (more shards than bzip2 streams)
    }
    pages_in_file_ = 0;
    input_->decode_in_parallel(options_.threads);  // a multistream dump: bzip2 is the slow part
    if (options_.input_format == WikiExtractOptions::Input::xml) {
      reader_ = std::make_unique<MediaWikiDumpReader>(*input_, std::move(shard_.header), std::move(shard_.footer));
    } else {
      lines_ = std::make_unique<LineBatcher>(*input_, options_.batch_bytes);
    }
    return true;
  }

  void close_current() {
    raw_done_ += input_->raw_bytes_read();
    reader_.reset();
    lines_.reset();
    input_.reset();
  }

  // True when the batch is full; false at the end of the file (the batch may hold pages).
  bool fill_from_xml(Batch& batch, size_t& bytes) {
    WikiPage page;
    uint64_t before = reader_->bytes_read();
    while (reader_->next(page)) {
      if (pages_in_file_ == 0) {
        // The <siteinfo> is read before the first page: share its namespaces with the workers.
        namespaces_ = std::make_shared<const LinkNamespaces>(reader_->namespaces());
        batch.namespaces = namespaces_;
      }
      ++batch.pages_seen;
      ++pages_in_file_;
      if (!options_.namespaces.count(page.ns)) continue;
      bytes += page.text.size();
      batch.pages.push_back(std::move(page));
      if (bytes >= options_.batch_bytes || batch.pages.size() >= kMaxPagesPerBatch) {
        batch.input_bytes = reader_->bytes_read() - before;
        return true;
      }
    }
    batch.input_bytes = reader_->bytes_read() - before;
    return false;
  }

  bool fill_from_lines(Batch& batch, size_t& bytes) {
    LineBatch lines;
    if (!lines_->next(lines)) {
      if (!lines_->stream_error().empty()) throw Error(lines_->stream_error());
      return false;
    }
    lines.for_each_line([&](uint64_t line_no, std::string_view line) {
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
      WikiPage page;
      page.line = line_no;
      page.text = std::string(line);
      bytes += line.size();
      ++batch.pages_seen;
      ++pages_in_file_;
      batch.pages.push_back(std::move(page));
    });
    batch.input_bytes = lines.size;
    return true;
  }

  const WikiExtractOptions& options_;
  size_t next_input_ = 0;
  std::unique_ptr<InputStream> input_;
  std::unique_ptr<MediaWikiDumpReader> reader_;
  std::unique_ptr<LineBatcher> lines_;
  std::shared_ptr<const LinkNamespaces> namespaces_;
  uint64_t pages_in_file_ = 0;
  DumpShard shard_;
  Stats stats_;
  uint64_t raw_done_ = 0;
  std::atomic<uint64_t> raw_progress_{0};
};

// Per-worker state: the sentence splitter and reusable buffers.
class PageProcessor {
 public:
  explicit PageProcessor(const WikiExtractOptions& o) : options_(o) {
    if (o.sentences) splitter_ = std::make_unique<SentenceSplitter>(o.locale);
  }

  void process(Batch& batch, BatchResult& result) {
    result.file = batch.file;
    result.input_bytes = batch.input_bytes;
    result.stats.add("pages", static_cast<int64_t>(batch.pages_seen));
    CleanOptions clean;
    clean.max_depth = options_.max_depth;
    clean.namespaces = batch.namespaces.get();
    for (WikiPage& page : batch.pages) {
      try {
        if (options_.input_format == WikiExtractOptions::Input::wikiextractor) {
          doc_ = parse_wikiextractor_record(page.text);
          page.title = doc_.title;
        } else if (!handle_xml_page(page, clean, result)) {
          continue;
        }
      } catch (const Error& e) {
        std::string what = options_.input_format == WikiExtractOptions::Input::xml
                               ? "page '" + page.title + "' (id " + page.id + "): " + e.what()
                               : e.what();
        result.errors.push_back({page.line, std::move(what)});
        continue;
      }
      result.stats.add("articles");
      result.stats.add("links", static_cast<int64_t>(doc_.links.size()));
      result.stats.add("text_bytes", static_cast<int64_t>(doc_.text.size()));
      write(result);
    }
    result.valid_pages = batch.pages_seen - std::min<uint64_t>(batch.pages_seen, result.errors.size());
    if (batch.input_error) result.errors.push_back(*batch.input_error);
    result.stats.add("unterminated_markup", static_cast<int64_t>(report_.unterminated));
    result.stats.add("stray_closers", static_cast<int64_t>(report_.stray_closers));
    report_ = {};
  }

 private:
  // False for a redirect (recorded in the redirects table), true for an article in doc_.
  bool handle_xml_page(const WikiPage& page, const CleanOptions& clean, BatchResult& result) {
    std::string target = page.redirect ? normalize_title(page.redirect_title) : redirect_target(page.text);
    if (page.redirect || !target.empty()) {
      result.stats.add("redirects");
      if (!target.empty()) {
        result.redirects += page.title;
        result.redirects.push_back('\t');
        result.redirects += target;
        result.redirects.push_back('\n');
      }
      return false;
    }
    doc_.id = page.id;
    doc_.title = page.title;
    clean_wikitext(page.text, clean, doc_, &report_);
    return true;
  }

  void write(BatchResult& result) {
    std::string& out = result.records;
    if (!options_.sentences) {
      if (options_.format == WikiExtractOptions::Format::json)
        append_document_json(out, doc_);
      else
        append_document_plain(out, doc_);
      return;
    }
    splitter_->split(doc_, sentences_);
    result.stats.add("sentences", static_cast<int64_t>(sentences_.size()));
    for (size_t i = 0; i < sentences_.size(); ++i) {
      const Sentence& s = sentences_[i];
      if (options_.format == WikiExtractOptions::Format::plain) {
        append_linked_text(out, doc_.text, doc_.links, s.begin, s.end);
        out.push_back('\n');
        continue;
      }
      out += "{\"id\":";
      append_json_string(out, doc_.id);
      out += ",\"title\":";
      append_json_string(out, doc_.title);
      out += ",\"sentence\":" + std::to_string(i) + ",\"section\":";
      append_json_string(out, s.section < 0 ? std::string_view() : doc_.sections[s.section].title);
      out += ",\"level\":" + std::to_string(s.section < 0 ? 0 : doc_.sections[s.section].level);
      out += ",\"begin\":" + std::to_string(s.begin) + ",\"text\":";
      append_json_string(out, std::string_view(doc_.text).substr(s.begin, s.end - s.begin));
      out += ",\"links\":";
      append_links_json(out, doc_.links, s.first_link, s.last_link, s.begin);
      out += "}\n";
    }
  }

  const WikiExtractOptions& options_;
  std::unique_ptr<SentenceSplitter> splitter_;
  std::vector<Sentence> sentences_;
  Document doc_;
  CleanReport report_;
};

}  // namespace

Stats extract_wiki(const WikiExtractOptions& options) {
  auto start = std::chrono::steady_clock::now();
  if (options.shard.active()) {  // before any output is opened (a FIFO would wait for its reader)
    if (options.inputs.size() != 1 || options.input_format != WikiExtractOptions::Input::xml)
      throw UsageError("--shard splits one XML dump file; give each task its own file of a dump in parts");
    require_part_file(options.output);
    if (!options.redirects.empty()) require_part_file(options.redirects);
  }
  OutputStream out(options.output);
  std::unique_ptr<OutputStream> redirects;
  if (!options.redirects.empty()) {
    redirects = std::make_unique<OutputStream>(options.redirects);
    if (options.shard.index == 0) redirects->write("# from\tto\n");  // once in a merge
  }
  uint64_t total_raw = 0;  // for the progress line; a missing file fails when it is opened
  for (const std::string& path : options.inputs) {
    if (path == "-") continue;
    std::error_code error;
    uintmax_t size = std::filesystem::file_size(path, error);
    if (!error) total_raw += size;
  }
  BatchSource source(options);
  std::vector<std::unique_ptr<PageProcessor>> processors;
  const unsigned workers = std::max(1u, options.threads);
  for (unsigned w = 0; w < workers; ++w) processors.push_back(std::make_unique<PageProcessor>(options));
  ErrorCounter errors(options.max_errors);
  Stats stats;
  uint64_t input_bytes = 0;
  std::optional<Progress> progress;
  if (!options.quiet) progress.emplace("wiki-extract", total_raw);
  run_ordered_pipeline<Batch, BatchResult>(
      workers, 2 * workers + 2, [&](Batch& batch) { return source.next(batch); },
      [&](unsigned w, Batch& batch, BatchResult& result) { processors[w]->process(batch, result); },
      [&](BatchResult& result) {
        out.write(result.records);
        if (redirects) redirects->write(result.redirects);
        errors.add_valid(result.valid_pages);
        for (const PageError& e : result.errors) {
          if (e.located)
            errors.record(e.reason);
          else
            errors.record(result.file, e.line, e.reason);
        }
        stats.merge(result.stats);
        input_bytes += result.input_bytes;
        if (progress) progress->update(static_cast<uint64_t>(stats.get("articles")), source.raw_bytes());
      });
  if (progress) progress->finish();
  errors.finish(options.inputs);
  // The documents and their redirects are one output: both written in full before either is put
  // in place, and an interrupting signal waits for the two renames (kg-align reads them together).
  if (redirects)
    put_in_place_together({&out, redirects.get()});
  else
    out.close();
  if (options.shard.active()) {
    ShardCompanions companions;
    if (redirects) {
      write_shard_record(options.redirects, options.shard, options.shard_run);
      companions.emplace_back("redirects", options.redirects);
    }
    write_shard_record(options.output, options.shard, options.shard_run, companions);
  }
  stats.merge(source.stats());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stats.set("bytes", static_cast<int64_t>(input_bytes));
  stats.set("errors", static_cast<int64_t>(errors.count()));
  stats.set("milliseconds", static_cast<int64_t>(seconds * 1000));
  stats.set("articles_per_s",
            seconds > 0 ? static_cast<int64_t>(static_cast<double>(stats.get("articles")) / seconds) : 0);
  return stats;
}

Stats merge_wiki_parts(const std::vector<std::string>& parts, const std::string& output, const std::string& redirects) {
  Stats stats;
  ShardCompanions companions;
  if (!redirects.empty()) companions.emplace_back("redirects", redirects);
  stats.set("bytes", static_cast<int64_t>(concatenate_parts(parts, output, companions)));
  stats.set("shards", static_cast<int64_t>(parts.size()));
  return stats;
}

}  // namespace kglm::text
