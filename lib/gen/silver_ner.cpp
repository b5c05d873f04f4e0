#include "gen/silver_ner.hpp"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/ordered_pipeline.hpp"
#include "core/rng.hpp"
#include "core/string_hash.hpp"
#include "gen/document_task.hpp"
#include "gen/record_writer.hpp"
#include "gen/title_resolver.hpp"
#include "kg/kg_store.hpp"
#include "text/document_batches.hpp"
#include "text/pattern_matcher.hpp"
#include "text/sentence_splitter.hpp"
#include "text/unicode.hpp"
#include "text/word_splitter.hpp"

namespace kglm::gen {

namespace {

constexpr size_t kDocsPerTask = 64;
constexpr uint32_t kSplitStream = 0x6e657273;  // "ners": which split a document goes to

// An entity mention in a sentence: bytes of the document's text and the index of its tag.
struct Mention {
  uint32_t begin, end;
  int tag;
};

using TaskResult = DocumentTaskResult;

// What one worker reuses from document to document.
struct Scratch {
  explicit Scratch(const std::string& locale) : sentences_of(locale), words_of(locale) {}
  text::SentenceSplitter sentences_of;
  text::WordSplitter words_of;
  std::vector<text::Sentence> sentences;
  std::vector<text::WordSpan> words;
  std::vector<int> link_tags;        // per link of the document: its tag, or -1
  std::vector<std::string> anchors;  // the document's typed names, for propagation
  std::vector<int> anchor_tags;      // their tags (-2: the name has several)
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> anchor_index;
  text::PatternMatcher matcher;
  std::vector<Mention> mentions;
  std::vector<Mention> found;  // unlinked mentions of the typed names
};

// A name that starts with a lower-case letter ("arrow", linked to a film) names a thing more often
// than an entity: its unlinked mentions are not propagated. Caseless scripts are not affected.
bool starts_lower_case(std::string_view name) {
  int32_t i = 0;
  UChar32 c;
  U8_NEXT(name.data(), i, static_cast<int32_t>(name.size()), c);
  return c >= 0 && u_islower(c);
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return h;
}

class SilverNerGenerator {
 public:
  explicit SilverNerGenerator(const SilverNerOptions& o)
      : options_(o),
        store_(o.kg),
        titles_(store_, o.kg, o.redirects, o.site.empty() ? o.lang + "wiki" : o.site),
        typer_(store_, o.types, o.max_depth) {}

  const EntityTyper& typer() const { return typer_; }

  void process(Scratch& s, text::DocumentBatch& task, TaskResult& result) const {
    result.start(task);
    for (auto& [line, doc] : task.docs) document(s, doc, result);
  }

 private:
  int tag_of(std::string_view title, Stats& stats, bool count) const {
    const int64_t row = titles_.resolve(title, stats, count ? "links_resolved" : "titles_resolved");
    if (row < 0) return -1;
    if (count) stats.add("links_resolved");
    return typer_.type_of(static_cast<uint32_t>(row));
  }

  // Which output a sentence goes to (split_dir), keyed by its document's id (and its number, when
  // sentences are dealt one by one) so that reruns agree.
  const char* split_of(const text::Document& doc, size_t sentence) const {
    if (options_.split_dir.empty()) return "";
    const uint64_t key = options_.split_sentences ? fnv1a(doc.id) ^ (sentence * 0x9e3779b97f4a7c15ull) : fnv1a(doc.id);
    const double u = Rng(options_.seed, key, kSplitStream).uniform();
    return u < options_.dev_share ? "dev" : u < options_.dev_share + options_.test_share ? "test" : "train";
  }

  void add_anchor(Scratch& s, std::string_view name, int tag) const {
    if (name.empty()) return;
    const auto [it, added] = s.anchor_index.try_emplace(std::string(name), static_cast<uint32_t>(s.anchors.size()));
    if (added) {
      s.anchors.emplace_back(name);
      s.anchor_tags.push_back(tag);
    } else if (s.anchor_tags[it->second] != tag) {
      s.anchor_tags[it->second] = -2;  // ambiguous: never propagated
    }
  }

  void document(Scratch& s, const text::Document& doc, TaskResult& result) const {
    Stats& stats = result.stats;
    stats.add("documents");
    s.link_tags.resize(doc.links.size());
    s.anchors.clear();
    s.anchor_tags.clear();
    s.anchor_index.clear();
    for (size_t l = 0; l < doc.links.size(); ++l) {
      stats.add("links");
      s.link_tags[l] = tag_of(doc.links[l].target, stats, true);
      if (s.link_tags[l] >= 0) {
        stats.add("links_typed");
        add_anchor(s, std::string_view(doc.text).substr(doc.links[l].begin, doc.links[l].end - doc.links[l].begin),
                   s.link_tags[l]);
      }
    }
    if (options_.propagate) {
      if (const int tag = tag_of(doc.title, stats, false); tag >= 0) add_anchor(s, doc.title, tag);
      s.matcher.clear();
      for (size_t a = 0; a < s.anchors.size(); ++a)
        if (s.anchor_tags[a] >= 0 && !starts_lower_case(s.anchors[a]))
          s.matcher.add(s.anchors[a], static_cast<uint32_t>(a));
      s.matcher.build();
    }
    s.sentences_of.split(doc, s.sentences);
    for (size_t k = 0; k < s.sentences.size(); ++k)
      write_sentence(s, doc, s.sentences[k], stats, result.records.out(split_of(doc, k), !options_.split_dir.empty()));
  }

  void write_sentence(Scratch& s, const text::Document& doc, const text::Sentence& sentence, Stats& stats,
                      std::string& out) const {
    stats.add("sentences");
    const std::string_view text(doc.text);
    // The typed links, then unlinked mentions of typed names (longest first where they overlap).
    s.mentions.clear();
    for (uint32_t l = sentence.first_link; l < sentence.last_link; ++l)
      if (s.link_tags[l] >= 0) s.mentions.push_back({doc.links[l].begin, doc.links[l].end, s.link_tags[l]});
    const size_t linked = s.mentions.size();
    if (options_.propagate && s.matcher.pattern_count() > 0) {
      const std::string_view body = text.substr(sentence.begin, sentence.end - sentence.begin);
      std::vector<Mention>& found = s.found;
      found.clear();
      s.matcher.scan(body, [&](size_t b, size_t e, uint32_t anchor) {
        if (text::word_char_before(body, b) && text::word_char_at(body, b)) return;
        if (text::word_char_before(body, e) && text::word_char_at(body, e)) return;
        found.push_back({sentence.begin + static_cast<uint32_t>(b), sentence.begin + static_cast<uint32_t>(e),
                         s.anchor_tags[anchor]});
      });
      std::stable_sort(found.begin(), found.end(),
                       [](const Mention& a, const Mention& b) { return a.end - a.begin > b.end - b.begin; });
      auto overlaps = [](const Mention& a, uint32_t begin, uint32_t end) { return a.begin < end && begin < a.end; };
      for (const Mention& m : found) {
        bool free = std::none_of(s.mentions.begin(), s.mentions.end(),
                                 [&](const Mention& o) { return overlaps(o, m.begin, m.end); });
        for (uint32_t l = sentence.first_link; l < sentence.last_link && free; ++l)
          free = !(doc.links[l].begin < m.end && m.begin < doc.links[l].end);  // an untyped link stays O
        if (free) s.mentions.push_back(m);
      }
      std::sort(s.mentions.begin(), s.mentions.end(),
                [](const Mention& a, const Mention& b) { return a.begin < b.begin; });
    }
    if (s.mentions.size() < options_.min_entities) return stats.add("filtered_few_entities");
    s.words_of.split(text.substr(sentence.begin, sentence.end - sentence.begin), s.words);
    if (s.words.size() > options_.max_words) return stats.add("filtered_long");
    // BIO: a word inside (or overlapping) a mention is B- when it is the mention's first word.
    size_t m = 0;
    int open = -1;  // the mention the previous word belonged to
    for (const text::WordSpan& w : s.words) {
      const uint32_t begin = sentence.begin + w.begin, end = sentence.begin + w.end;
      while (m < s.mentions.size() && s.mentions[m].end <= begin) ++m;
      const bool inside = m < s.mentions.size() && s.mentions[m].begin < end;
      out += options_.lang;
      out += ':';
      out.append(text.substr(begin, end - begin));
      out += '\t';
      if (!inside) {
        out += 'O';
        open = -1;
      } else {
        out += open == static_cast<int>(m) ? "I-" : "B-";
        out += typer_.roots()[static_cast<size_t>(s.mentions[m].tag)].tag;
        if (open != static_cast<int>(m))
          stats.add("entities." + typer_.roots()[static_cast<size_t>(s.mentions[m].tag)].tag);
        open = static_cast<int>(m);
      }
      out += '\n';
    }
    out += '\n';
    stats.add("sentences_written");
    stats.add("words", static_cast<int64_t>(s.words.size()));
    stats.add("entities_linked", static_cast<int64_t>(linked));
    stats.add("entities_propagated", static_cast<int64_t>(s.mentions.size() - linked));
  }

  const SilverNerOptions& options_;
  kg::KgStore store_;
  TitleResolver titles_;
  EntityTyper typer_;
};

}  // namespace

Stats generate_silver_ner(const SilverNerOptions& options) {
  if (options.dev_share < 0 || options.test_share < 0 || options.dev_share + options.test_share >= 1)
    throw UsageError("--dev-share and --test-share must be ≥ 0 and leave a share for training");
  SilverNerGenerator generator(options);
  for (const std::string& root : generator.typer().missing_roots())
    if (!options.quiet) log_warning("root class " + root + " is not in the KG store: it types nothing");
  RecordWriter writer(options.output, options.split_dir, ".panx");
  text::DocumentBatches source(options.inputs, kDocsPerTask);
  const unsigned workers = std::max(1u, options.threads);
  std::vector<std::unique_ptr<Scratch>> scratch;
  for (unsigned w = 0; w < workers; ++w) scratch.push_back(std::make_unique<Scratch>(options.lang));
  ErrorCounter errors(options.max_errors);
  Stats stats;
  run_ordered_pipeline<text::DocumentBatch, TaskResult>(
      workers, 2 * workers + 2, [&](text::DocumentBatch& task) { return source.next(task); },
      [&](unsigned w, text::DocumentBatch& task, TaskResult& result) { generator.process(*scratch[w], task, result); },
      [&](TaskResult& result) {
        writer.write(result.records);
        result.count(errors);
        stats.merge(result.stats);
      });
  errors.finish(options.inputs);
  writer.close();
  const EntityTyper& typer = generator.typer();
  for (size_t t = 0; t < typer.roots().size(); ++t)
    stats.set("kg_items_typed." + typer.roots()[t].tag, static_cast<int64_t>(typer.typed()[t]));
  stats.set("kg_items_ambiguous", static_cast<int64_t>(typer.ambiguous()));
  stats.set("errors", static_cast<int64_t>(errors.count()));
  return stats;
}

}  // namespace kglm::gen
