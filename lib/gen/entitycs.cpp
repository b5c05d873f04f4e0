#include "gen/entitycs.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/ordered_pipeline.hpp"
#include "core/rng.hpp"
#include "gen/annotated_text.hpp"
#include "gen/document_task.hpp"
#include "gen/labels.hpp"
#include "gen/languages.hpp"
#include "gen/record_writer.hpp"
#include "gen/title_resolver.hpp"
#include "kg/kg_store.hpp"
#include "text/document_batches.hpp"
#include "text/sentence_splitter.hpp"
#include "text/unicode.hpp"

namespace kglm::gen {

namespace {

constexpr size_t kDocsPerTask = 256;
constexpr size_t kEnglish = 0;

using TaskResult = DocumentTaskResult;

class EntityCsGenerator {
 public:
  explicit EntityCsGenerator(const EntityCsOptions& o) : options_(o), store_(o.kg), titles_(store_, o.kg, o.redirects) {
    std::vector<std::string> langs = english_then(o.langs);
    labels_ = std::make_unique<LabelIndex>(store_, langs, false);
    ids_ = store_.entity_ids();
  }

  void process(text::SentenceSplitter& splitter, text::DocumentBatch& task, TaskResult& result) const {
    result.start(task);
    std::vector<text::Sentence> sentences;
    for (size_t d = 0; d < task.docs.size(); ++d) {
      const text::Document& doc = task.docs[d].second;
      splitter.split(doc, sentences);
      for (size_t s = 0; s < sentences.size(); ++s)
        sentence(doc, sentences[s], task.first_ordinal + d, static_cast<uint32_t>(s), result);
    }
  }

 private:
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
      rows[l] = titles_.resolve(doc.links[s.first_link + l].target, stats, "links_resolved");
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
  TitleResolver titles_;
  std::unique_ptr<LabelIndex> labels_;
  std::vector<std::string> ids_;
};

}  // namespace

Stats generate_entitycs(const EntityCsOptions& options) {
  if (options.max_cs == 0) throw UsageError("--max-cs must be at least 1");
  EntityCsGenerator generator(options);
  RecordWriter writer(options.output, options.split_dir, options.plain ? ".txt" : ".jsonl");
  text::DocumentBatches source(options.inputs, kDocsPerTask);
  const unsigned workers = std::max(1u, options.threads);
  std::vector<std::unique_ptr<text::SentenceSplitter>> splitters;
  for (unsigned w = 0; w < workers; ++w) splitters.push_back(std::make_unique<text::SentenceSplitter>(options.locale));
  ErrorCounter errors(options.max_errors);
  Stats stats;
  run_ordered_pipeline<text::DocumentBatch, TaskResult>(
      workers, 2 * workers + 2, [&](text::DocumentBatch& task) { return source.next(task); },
      [&](unsigned w, text::DocumentBatch& task, TaskResult& result) {
        generator.process(*splitters[w], task, result);
      },
      [&](TaskResult& result) {
        writer.write(result.records);
        result.count(errors);
        int64_t max_cs = std::max(stats.get("max_cs_per_sentence"), result.stats.get("max_cs_per_sentence"));
        stats.merge(result.stats);
        stats.set("max_cs_per_sentence", max_cs);
      });
  errors.finish(options.inputs);
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
