#include "gen/entitycs.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

#include "core/error.hpp"
#include "core/input_stream.hpp"
#include "core/json_writer.hpp"
#include "core/ordered_pipeline.hpp"
#include "core/rng.hpp"
#include "core/string_hash.hpp"
#include "gen/annotated_text.hpp"
#include "gen/labels.hpp"
#include "gen/languages.hpp"
#include "gen/record_writer.hpp"
#include "kg/kg_store.hpp"
#include "text/document_reader.hpp"
#include "text/sentence_splitter.hpp"
#include "text/unicode.hpp"

namespace kglm::gen {

namespace {

constexpr size_t kDocsPerTask = 256;
constexpr size_t kEnglish = 0;

using TitleMap = std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>>;
using RedirectMap = std::unordered_map<std::string, std::string, StringHash, std::equal_to<>>;

struct DocTask {
  std::string file;
  std::vector<std::pair<uint64_t, text::Document>> docs;  // (line, document)
  std::vector<std::pair<uint64_t, std::string>> errors;
  uint64_t first_ordinal = 0;  // the input-wide number of docs[0], keys the RNG
};

struct TaskResult {
  std::string file;
  RecordBatch records;
  std::vector<std::pair<uint64_t, std::string>> errors;
  Stats stats;
};

RedirectMap read_redirects(const std::string& path) {
  RedirectMap map;
  if (path.empty()) return map;
  for_each_data_line(path, [&](uint64_t, std::string_view line) {
    size_t tab = line.find('\t');
    if (tab != std::string_view::npos) map.emplace(std::string(line.substr(0, tab)), std::string(line.substr(tab + 1)));
  });
  return map;
}

class EntityCsGenerator {
 public:
  explicit EntityCsGenerator(const EntityCsOptions& o) : options_(o), store_(o.kg) {
    std::vector<std::string> langs = english_then(o.langs);
    labels_ = std::make_unique<LabelIndex>(store_, langs, false);
    ids_ = store_.entity_ids();
    kg::TermTable enwiki = store_.terms("sitelinks", "enwiki");
    if (enwiki.entity.empty()) throw Error(o.kg + ": the KG store has no enwiki sitelinks to resolve links with");
    for (size_t i = 0; i < enwiki.entity.size(); ++i) titles_.emplace(std::string(enwiki.text[i]), enwiki.entity[i]);
    redirects_ = read_redirects(o.redirects);
  }

  void process(text::SentenceSplitter& splitter, DocTask& task, TaskResult& result) const {
    result.file = task.file;
    result.errors = std::move(task.errors);
    std::vector<text::Sentence> sentences;
    for (size_t d = 0; d < task.docs.size(); ++d) {
      const text::Document& doc = task.docs[d].second;
      splitter.split(doc, sentences);
      for (size_t s = 0; s < sentences.size(); ++s)
        sentence(doc, sentences[s], task.first_ordinal + d, static_cast<uint32_t>(s), result);
    }
  }

 private:
  // Link target -> entity row: the enwiki sitelink title, then through redirects, then with the
  // first letter capitalised (and its redirect). -1 when unresolved.
  int64_t resolve(std::string_view target, Stats& stats) const {
    if (auto it = titles_.find(target); it != titles_.end()) return it->second;
    if (auto r = redirects_.find(target); r != redirects_.end()) {
      if (auto it = titles_.find(r->second); it != titles_.end()) {
        stats.add("links_resolved_via_redirect");
        return it->second;
      }
    }
    std::string upper = text::upper_first(target);
    if (upper != target) {
      if (auto it = titles_.find(upper); it != titles_.end()) {
        stats.add("links_resolved_via_capitalisation");
        return it->second;
      }
      if (auto r = redirects_.find(upper); r != redirects_.end()) {
        if (auto it = titles_.find(r->second); it != titles_.end()) {
          stats.add("links_resolved_via_capitalisation");
          return it->second;
        }
      }
    }
    return -1;
  }

  static uint32_t count_words(std::string_view s) {
    uint32_t words = 0;
    bool in_word = false;
    for (char c : s) {
      bool blank = c == ' ' || c == '\t' || c == '\n';
      if (!blank && !in_word) ++words;
      in_word = !blank;
    }
    return words;
  }

  void sentence(const text::Document& doc, const text::Sentence& s, uint64_t doc_ordinal, uint32_t index,
                TaskResult& result) const {
    Stats& stats = result.stats;
    stats.add("sentences");
    const uint32_t links = s.last_link - s.first_link;
    const std::string_view body = std::string_view(doc.text).substr(s.begin, s.end - s.begin);
    const uint32_t words = count_words(body);
    if (links < options_.min_links) return stats.add("filtered_few_links");
    if (links > options_.max_links) return stats.add("filtered_many_links");
    if (words > options_.max_words) return stats.add("filtered_long");
    // Resolve the links; the entity rows of the sentence, in text order.
    std::vector<int64_t> rows(links);
    std::vector<uint32_t> entities;
    for (uint32_t l = 0; l < links; ++l) {
      rows[l] = resolve(doc.links[s.first_link + l].target, stats);
      if (rows[l] < 0) {
        stats.add("links_unresolved");
        continue;
      }
      stats.add("links_resolved");
      entities.push_back(static_cast<uint32_t>(rows[l]));
    }
    if (entities.empty()) return stats.add("filtered_no_entity");
    // Candidate languages: a label for every entity of the sentence.
    std::vector<size_t> candidates;
    for (size_t l = 1; l < labels_->languages().size(); ++l) {
      bool all = std::all_of(entities.begin(), entities.end(), [&](uint32_t e) { return labels_->label(l, e); });
      if (all) candidates.push_back(l);
    }
    if (candidates.size() > options_.max_cs) {
      // A seeded partial Fisher-Yates draw, then back to --langs order.
      Rng rng(options_.seed, doc_ordinal, index);
      for (size_t i = 0; i < options_.max_cs; ++i)
        std::swap(candidates[i], candidates[i + rng.below(candidates.size() - i)]);
      candidates.resize(options_.max_cs);
      std::sort(candidates.begin(), candidates.end());
    }
    if (candidates.empty()) stats.add("sentences_without_candidate");
    const std::string id = doc.id + "_" + std::to_string(index);
    AnnotatedText english = build(doc, s, rows, kEnglish);
    const std::string en_marked = english.with_entity_markers();
    emit(english, kEnglish, id, en_marked, "", result);
    stats.add("en_sentences");
    stats.add("en_entities", static_cast<int64_t>(entities.size()));
    stats.add("en_words", words);
    stats.set("max_cs_per_sentence", std::max<int64_t>(stats.get("max_cs_per_sentence"), candidates.size()));
    for (size_t l : candidates) {
      AnnotatedText switched = build(doc, s, rows, l);
      emit(switched, l, id, en_marked, switched.with_entity_markers(), result);
      stats.add("cs_sentences");
      stats.add("cs_sentences." + labels_->languages()[l]);
      stats.add("cs_entities", static_cast<int64_t>(entities.size()));
    }
  }

  // The sentence with every resolved link replaced by its entity's label in language `lang`
  // (English keeps the anchor text) and marked as an entity span.
  AnnotatedText build(const text::Document& doc, const text::Sentence& s, const std::vector<int64_t>& rows,
                      size_t lang) const {
    AnnotatedText out;
    uint32_t pos = s.begin;
    for (uint32_t l = 0; l < rows.size(); ++l) {
      const text::Link& link = doc.links[s.first_link + l];
      out.append(std::string_view(doc.text).substr(pos, link.begin - pos));
      std::string_view anchor = std::string_view(doc.text).substr(link.begin, link.end - link.begin);
      if (rows[l] < 0)
        out.append(anchor);
      else
        out.append_span(lang == kEnglish ? anchor : *labels_->label(lang, static_cast<uint32_t>(rows[l])), "entity",
                        ids_[static_cast<size_t>(rows[l])]);
      pos = link.end;
    }
    out.append(std::string_view(doc.text).substr(pos, s.end - pos));
    return out;
  }

  void emit(const AnnotatedText& text, size_t lang, const std::string& id, const std::string& en_marked,
            const std::string& cs_marked, TaskResult& result) const {
    const std::string& code = labels_->languages()[lang];
    std::string& out = result.records.out(code, !options_.split_dir.empty());
    if (options_.plain) {
      out += lang == kEnglish ? en_marked : cs_marked;
      out.push_back('\n');
      return;
    }
    std::string extra = ",\"id\":";
    append_json_string(extra, id);
    extra += ",\"language\":";
    append_json_string(extra, code);
    extra += ",\"en_sentence\":";
    append_json_string(extra, en_marked);
    extra += ",\"cs_sentence\":";
    append_json_string(extra, cs_marked);
    text.append_json(out, code, extra);
  }

  const EntityCsOptions& options_;
  kg::KgStore store_;
  std::unique_ptr<LabelIndex> labels_;
  std::vector<std::string> ids_;
  TitleMap titles_;
  RedirectMap redirects_;
};

// Reads the inputs in turn, kDocsPerTask documents per task.
class DocSource {
 public:
  explicit DocSource(const std::vector<std::string>& inputs) : inputs_(inputs) {}

  bool next(DocTask& task) {
    task.first_ordinal = ordinal_;
    for (;;) {
      if (!reader_) {
        if (next_input_ >= inputs_.size()) return !task.docs.empty() || !task.errors.empty();
        input_ = std::make_unique<InputStream>(inputs_[next_input_++]);
        reader_ = std::make_unique<text::DocumentReader>(*input_);
      }
      task.file = input_->name();
      text::Document doc;
      uint64_t line = 0;
      std::string error;
      if (!reader_->next(doc, line, error)) {
        reader_.reset();
        if (!task.docs.empty() || !task.errors.empty()) return true;  // tasks never span two files
        continue;
      }
      if (!error.empty()) {
        task.errors.emplace_back(line, std::move(error));
        continue;
      }
      task.docs.emplace_back(line, std::move(doc));
      ++ordinal_;
      if (task.docs.size() >= kDocsPerTask) return true;
    }
  }

 private:
  const std::vector<std::string>& inputs_;
  size_t next_input_ = 0;
  std::unique_ptr<InputStream> input_;
  std::unique_ptr<text::DocumentReader> reader_;
  uint64_t ordinal_ = 0;
};

}  // namespace

Stats generate_entitycs(const EntityCsOptions& options) {
  if (options.max_cs == 0) throw UsageError("--max-cs must be at least 1");
  EntityCsGenerator generator(options);
  RecordWriter writer(options.output, options.split_dir, options.plain ? ".txt" : ".jsonl");
  DocSource source(options.inputs);
  const unsigned workers = std::max(1u, options.threads);
  std::vector<std::unique_ptr<text::SentenceSplitter>> splitters;
  for (unsigned w = 0; w < workers; ++w) splitters.push_back(std::make_unique<text::SentenceSplitter>(options.locale));
  ErrorCounter errors(options.max_errors);
  Stats stats;
  run_ordered_pipeline<DocTask, TaskResult>(
      workers, 2 * workers + 2, [&](DocTask& task) { return source.next(task); },
      [&](unsigned w, DocTask& task, TaskResult& result) { generator.process(*splitters[w], task, result); },
      [&](TaskResult& result) {
        writer.write(result.records);
        for (const auto& [line, reason] : result.errors) errors.record(result.file, line, reason);
        int64_t max_cs = std::max(stats.get("max_cs_per_sentence"), result.stats.get("max_cs_per_sentence"));
        stats.merge(result.stats);
        stats.set("max_cs_per_sentence", max_cs);
      });
  writer.close();
  // Table 1 of the paper.
  int64_t languages = 0;
  for (const auto& [key, value] : stats.values()) languages += key.rfind("cs_sentences.", 0) == 0 && value > 0;
  stats.set("languages", languages);
  stats.set("errors", static_cast<int64_t>(errors.count()));
  const int64_t en = stats.get("en_sentences");
  stats.set("avg_sentence_words_x100", en > 0 ? stats.get("en_words") * 100 / en : 0);
  stats.set("entities_per_sentence_x100", en > 0 ? stats.get("en_entities") * 100 / en : 0);
  return stats;
}

}  // namespace kglm::gen
