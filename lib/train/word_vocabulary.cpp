#include "train/word_vocabulary.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/output_stream.hpp"
#include "core/progress.hpp"
#include "sample/corpus.hpp"
#include "text/word_splitter.hpp"
#include "tok/word_vocabulary_tokenizer.hpp"

namespace kglm::train {

namespace {

struct WordCount {
  std::string word;
  uint64_t total = 0;
};

// One language's counts and its word splitter (ICU's rules for that locale).
struct LanguageCounts {
  std::unordered_map<std::string, uint64_t> counts;
  uint64_t tokens = 0;
  std::unique_ptr<text::WordSplitter> splitter;
};

bool is_marker(std::string_view word) {
  for (const char* m : tok::kVocabularyMarkers)
    if (word == m) return true;
  return false;
}

}  // namespace

Stats build_word_vocabulary(const VocabularyOptions& o) {
  if (o.output.empty() || o.output == "-") throw UsageError("-o vocab.txt is required (a file, not stdout)");
  if (o.max_words < 0 || o.min_count < 1) throw UsageError("--max-words must be ≥ 0 and --min-count ≥ 1");
  const std::vector<sample::CorpusSource> sources = sample::resolve_sources(o.inputs);
  std::map<std::string, LanguageCounts> languages;  // ordered: the counts file's columns
  sample::RecordScanOptions scan;
  scan.threads = o.threads;
  scan.batch_bytes = o.batch_bytes;
  Stats stats;
  Progress progress("vocab", 0);
  uint64_t lines = 0, bytes = 0;
  std::vector<text::WordSpan> spans;
  for (const sample::CorpusSource& source : sources) {
    sample::ScanCallbacks callbacks;
    callbacks.record = [&](const sample::ScannedRecord& r) {
      ++lines;
      LanguageCounts& lang = languages[std::string(r.lang)];
      auto count = [&](std::string_view word) {
        ++lang.tokens;
        if (!is_marker(word)) ++lang.counts[std::string(word)];
      };
      if (o.whitespace) {
        sample::for_each_whitespace_token(r.text, count);
        return;
      }
      if (!lang.splitter)
        lang.splitter = std::make_unique<text::WordSplitter>(r.lang == "und" ? "en" : std::string(r.lang));
      lang.splitter->split(r.text, spans);
      for (const text::WordSpan& s : spans) count(r.text.substr(s.begin, s.end - s.begin));
    };
    callbacks.bad = [&](uint64_t line, std::string_view reason) {
      stats.add("bad_records");
      if (!o.quiet) log_warning(source.shown() + ":" + std::to_string(line) + ": " + std::string(reason));
    };
    callbacks.progress = [&](uint64_t raw) {
      bytes += raw;
      if (!o.quiet) progress.update(lines, bytes);
    };
    sample::scan_records(source, scan, callbacks);
  }
  progress.finish();
  // Totals over the languages, then the order: falling count, ties by bytes.
  std::unordered_map<std::string, uint64_t> totals;
  uint64_t tokens = 0;
  for (auto& [lang, c] : languages) {
    tokens += c.tokens;
    stats.set("tokens." + lang, static_cast<int64_t>(c.tokens));
    stats.set("types." + lang, static_cast<int64_t>(c.counts.size()));
    for (const auto& [word, n] : c.counts) totals[word] += n;
  }
  if (tokens == 0) throw Error("pretrain vocab: the inputs hold no words");
  std::vector<WordCount> words;
  words.reserve(totals.size());
  for (auto& [word, n] : totals)
    if (static_cast<int64_t>(n) >= o.min_count) words.push_back({word, n});
  std::sort(words.begin(), words.end(), [](const WordCount& a, const WordCount& b) {
    return a.total != b.total ? a.total > b.total : a.word < b.word;
  });
  if (o.max_words > 0 && static_cast<int64_t>(words.size()) > o.max_words)
    words.resize(static_cast<size_t>(o.max_words));
  uint64_t covered = 0;
  for (const WordCount& w : words) covered += w.total;
  {
    OutputStream out(o.output);
    for (const char* m : tok::kVocabularyMarkers) out.write(std::string(m) + '\n');
    for (const WordCount& w : words) out.write(w.word + '\n');
    out.close();
  }
  if (!o.counts.empty()) {
    OutputStream out(o.counts);
    std::string line = "word\ttotal";
    for (const auto& entry : languages) line += '\t' + entry.first;
    out.write(line + '\n');
    for (const WordCount& w : words) {
      line = w.word + '\t' + std::to_string(w.total);
      for (const auto& entry : languages) {
        const auto it = entry.second.counts.find(w.word);
        line += '\t' + std::to_string(it == entry.second.counts.end() ? 0 : it->second);
      }
      out.write(line + '\n');
    }
    out.close();
  }
  stats.set("lines", static_cast<int64_t>(lines));
  stats.set("tokens", static_cast<int64_t>(tokens));
  stats.set("types", static_cast<int64_t>(totals.size()));
  stats.set("words", static_cast<int64_t>(words.size()));
  stats.set("coverage_per_million",
            static_cast<int64_t>(static_cast<double>(covered) * 1e6 / static_cast<double>(tokens)));
  stats.set("languages", static_cast<int64_t>(languages.size()));
  return stats;
}

}  // namespace kglm::train
