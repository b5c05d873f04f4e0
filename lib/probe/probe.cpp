#include "probe/probe.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/json_writer.hpp"
#include "core/log.hpp"
#include "core/output_stream.hpp"
#include "core/stats.hpp"
#include "gen/entity_gender.hpp"
#include "gen/fact_text.hpp"
#include "gen/inflection_tables.hpp"
#include "gen/labels.hpp"
#include "gen/relation_templates.hpp"
#include "gen/template_realizer.hpp"
#include "kg/facts.hpp"
#include "kg/kg_store.hpp"
#include "nn/cpu_precision.hpp"
#include "nn/tensor.hpp"
#include "nn/threads.hpp"
#include "probe/cloze_text.hpp"
#include "probe/masked_lm.hpp"
#include "probe/probe_facts.hpp"
#include "probe/probe_scores.hpp"
#include "text/case_fold.hpp"

namespace kglm::probe {

namespace fs = std::filesystem;
using gen::Gender;

namespace {

// What the KG store tells a probe: labels and aliases per language, what templates agree with
// (genders, classes), other objects.
struct KgSide {
  kg::KgStore store;
  kg::FactStore facts;
  gen::LabelIndex labels;
  gen::FactText text;
  gen::TemplateEntities entities;

  KgSide(const std::string& path, const std::vector<std::string>& langs)
      : store(path),
        facts(store, {kg::FactKind::item}),
        labels(store, langs, true),
        text(store, facts, labels),
        entities(store, facts, text) {}
};

// One fact as a cloze in one language.
struct Query {
  const ProbeFact* fact = nullptr;
  std::string subject_label, object_label;
  std::string prefix, suffix;  // the sentence before and after the object
  std::string gold;            // the object's label as the template wants it (inflected for a case)
  std::vector<int32_t> prefix_ids, suffix_ids;
  int32_t gold_tokens = 0;
  std::unordered_set<std::string> answers;  // normalised
};

struct RelationQueries {
  uint64_t relation = 0;
  std::vector<Query> queries;
};

class Prober {
 public:
  explicit Prober(const ProbeOptions& o)
      : o_(o), model_(o.model, o.device, o.batch, o.batch_tokens), errors_(o.max_errors) {
    if (!o.kg.empty()) kg_.emplace(o.kg, o.langs);
    templates_ = gen::RelationTemplates::load_dir(o.templates, o.langs);
    if (templates_.size() == 0)
      throw Error(location(o.templates) + "no templates for the --langs languages (<lang>.jsonl)");
    // A template that cannot be realised costs its relation in its language, nothing else.
    gen::report_template_problems(templates_, "probed", stats_);
    if (!o.inflections.empty()) {
      inflections_ = gen::InflectionTables::load_dir(o.inflections, o.langs);
      for (const std::string& line : inflections_.describe()) log_info("inflections " + line);
    }
    if (!o.aliases.empty()) {
      if (!fs::is_directory(o.aliases)) throw Error(location(o.aliases) + "not a directory");
      for (const std::string& lang : o.langs) {
        const fs::path file = fs::path(o.aliases) / (lang + ".txt");
        if (fs::exists(file)) aliases_[lang].load(file.string(), errors_);
      }
    }
    load_facts();
  }

  int run() {
    std::optional<OutputStream> predictions;
    if (!o_.predictions.empty()) predictions.emplace(o_.predictions);
    std::vector<RelationScore> scores;
    for (const std::string& lang : o_.langs) {
      if (!templates_.has_language(lang)) {
        log_warning("no templates for " + lang + " in " + o_.templates + ": the language is skipped");
        stats_.add("languages_without_templates");
        continue;
      }
      // Every relation's clozes of the language are decoded together: full batches whatever the
      // number of facts per relation.
      std::vector<RelationQueries> groups;
      for (const auto& [relation, facts] : by_relation_) {
        const gen::ParsedTemplate* tpl = templates_.find(lang, relation);
        if (tpl == nullptr) {
          // A skipped template was reported when it was read.
          if (!templates_.skipped_in(lang, relation)) {
            log_warning("no " + lang + " template for P" + std::to_string(relation) + ": skipped");
            stats_.add("relations_without_template");
          }
          continue;
        }
        groups.push_back({relation, make_queries(lang, *tpl, facts)});
      }
      for (DecodeMethod method : o_.methods)
        for (RelationScore& score : probe(method, lang, groups, predictions ? &*predictions : nullptr)) {
          if (!o_.quiet) log_info(summary(score));
          scores.push_back(std::move(score));
        }
    }
    errors_.finish(inputs_);
    if (stats_.get("facts_probed") == 0)
      throw Error("no fact could be probed (see the counts: labels, templates, tokens)");
    // The predictions are put in place with the results, never after a failed run.
    const std::string tsv = write_probe_results(o_.out, scores, predictions ? &*predictions : nullptr);
    if (!o_.quiet) {
      for (size_t line = 0, start = 0; start < tsv.size(); ++line) {
        const size_t end = tsv.find('\n', start);
        const std::string_view row(tsv.data() + start, end - start);
        if (line == 0 || row.find("\tmacro\t") != std::string_view::npos) log_info(std::string(row));
        start = end + 1;
      }
    }
    stats_.set("forward_passes", model_.forward_passes());
    stats_.set("sequences", model_.sequences_run());
    stats_.set("bad_records", static_cast<int64_t>(errors_.count()));
    if (o_.skip_short_aliases) stats_.set("short_aliases_skipped", short_aliases_skipped_);
    if (!o_.stats_file.empty()) stats_.write_json(o_.stats_file);
    if (!o_.quiet) stats_.print();
    return 0;
  }

 private:
  void load_facts() {
    if (!o_.facts.empty()) {
      std::map<uint64_t, std::vector<ProbeFact>> grouped;
      for (const auto& [relation, path] : fact_files(o_.facts, o_.relations)) {
        inputs_.push_back(path);
        for (ProbeFact& f : read_xfactr_facts(path, relation, errors_)) {
          // Every fact of the files is an accepted answer for its subject, probed or not.
          objects_[answer_key(f.subject, f.relation)].push_back(f.object);
          english_.try_emplace(f.subject, f.subject_label);
          english_.try_emplace(f.object, f.object_label);
          if (o_.relations.empty() ||
              std::find(o_.relations.begin(), o_.relations.end(), f.relation) != o_.relations.end())
            grouped[f.relation].push_back(std::move(f));
        }
      }
      for (uint64_t relation : o_.relations)
        if (grouped.find(relation) == grouped.end())
          throw Error(location(o_.facts) + "no fact of P" + std::to_string(relation) + " (--relations)");
      for (auto& [relation, facts] : grouped) {
        if (o_.max_facts > 0 && facts.size() > o_.max_facts) facts.resize(o_.max_facts);
        by_relation_.emplace_back(relation, std::move(facts));
      }
    } else {
      if (!kg_) throw UsageError("probe needs --facts DIR, or --kg STORE to draw facts from");
      if (o_.relations.empty()) throw UsageError("facts drawn from --kg need --relations");
      inputs_.push_back(o_.kg);
      by_relation_ = draw_kg_facts(kg_->facts, kg_->text, o_.relations, o_.max_facts, o_.seed);
      for (const auto& [relation, facts] : by_relation_) errors_.add_valid(facts.size());
    }
    size_t n = 0;
    for (const auto& [relation, facts] : by_relation_) n += facts.size();
    stats_.set("facts_read", static_cast<int64_t>(n));
  }

  static std::string answer_key(const std::string& subject, uint64_t relation) {
    return subject + "|" + std::to_string(relation);
  }

  // The label of an entity in lang: the store's, else (English) the fact files'.
  std::optional<std::string> label(const std::string& lang, const std::string& id) const {
    if (kg_) {
      const int l = kg_->labels.find(lang);
      const int64_t row = kg_->text.item_row(id);
      if (l >= 0 && row >= 0)
        if (auto text = kg_->labels.label(static_cast<size_t>(l), static_cast<uint32_t>(row)))
          return std::string(*text);
    }
    if (lang == "en")
      if (auto it = english_.find(id); it != english_.end()) return it->second;
    return std::nullopt;
  }

  // What a template agrees with; only the label without a KG store.
  gen::TemplateEntity entity(const std::string& id, std::string label) const {
    if (kg_)
      if (const int64_t row = kg_->text.item_row(id); row >= 0)
        return kg_->entities.of(static_cast<uint32_t>(row), std::move(label));
    gen::TemplateEntity e;
    e.label = std::move(label);
    return e;
  }

  // Labels and aliases in lang of every object of the fact's subject and relation, in the case the
  // template's object slot asks (X-FACTR inflects its answers so).
  std::unordered_set<std::string> answers(const std::string& lang, const ProbeFact& f,
                                          const gen::TemplateElement& slot) {
    std::vector<std::string> objects{f.object};
    if (auto it = objects_.find(answer_key(f.subject, f.relation)); it != objects_.end())
      objects.insert(objects.end(), it->second.begin(), it->second.end());
    if (kg_) {
      const int64_t subject = kg_->text.item_row(f.subject);
      const int64_t relation = kg_->text.relation_row("P" + std::to_string(f.relation));
      if (subject >= 0 && relation >= 0)
        for (const kg::Fact& fact : kg_->facts.facts(static_cast<uint32_t>(subject)))
          if (fact.kind == kg::FactKind::item && fact.relation == static_cast<uint32_t>(relation))
            objects.push_back(kg_->text.entity_id(kg_->facts.object(fact)));
    }
    std::unordered_set<std::string> out;
    gen::RealizeOptions realize;
    realize.probe = true;
    realize.inflections = &inflections_;
    gen::TemplateEntity object;  // the object whose label and aliases are added: its KG traits read once
    auto add = [&](std::string_view text) {
      object.label = std::string(text);
      out.insert(normalize_answer(gen::realize_slot(slot, lang, object, realize)));
    };
    auto add_alias = [&](std::string_view alias) {
      if (o_.skip_short_aliases && text::classify_name(alias) == text::NameMatch::unused) {
        ++short_aliases_skipped_;
        return;
      }
      add(alias);
    };
    const AliasTable* alias_file = nullptr;
    if (auto it = aliases_.find(lang); it != aliases_.end()) alias_file = &it->second;
    const int l = kg_ ? kg_->labels.find(lang) : -1;
    for (const std::string& id : objects) {
      object = entity(id, {});
      if (auto text = label(lang, id)) add(*text);
      if (alias_file)
        if (const auto* list = alias_file->find(id))
          for (const std::string& a : *list) add_alias(a);
      if (l >= 0)
        if (const int64_t row = kg_->text.item_row(id); row >= 0) {
          const auto [first, last] = kg_->labels.aliases(static_cast<size_t>(l), static_cast<uint32_t>(row));
          for (size_t i = first; i < last; ++i) add_alias(kg_->labels.alias(static_cast<size_t>(l), i));
        }
    }
    out.erase("");
    return out;
  }

  bool has_unknown(const std::vector<int32_t>& ids) const {
    const int32_t unk = model_.tokenizer().special().unk;
    for (int32_t id : ids)
      if (id == unk) return true;
    return false;
  }

  std::vector<int32_t> encode(std::string_view text) const {
    tok::Encoding e;
    model_.tokenizer().encode(text, e);
    return e.ids;
  }

  std::vector<Query> make_queries(const std::string& lang, const gen::ParsedTemplate& tpl,
                                  const std::vector<ProbeFact>& facts) {
    std::vector<Query> queries;
    const int64_t longest = model_.max_sequence();
    for (const ProbeFact& f : facts) {
      Query q;
      q.fact = &f;
      auto subject = label(lang, f.subject);
      auto object = label(lang, f.object);
      if (!subject || !object) {
        stats_.add("facts_without_label." + lang);
        continue;
      }
      q.subject_label = *subject;
      q.object_label = *object;
      gen::TemplateGaps gaps;
      ClozeText cloze = fill_cloze(tpl, lang, entity(f.subject, q.subject_label), entity(f.object, q.object_label),
                                   &inflections_, &gaps);
      stats_.add("inflected." + lang, gaps.inflected);
      stats_.add("kept_plain." + lang, gaps.kept_plain);
      stats_.add("uninflected." + lang, gaps.uninflected);
      stats_.add("missing_function_words." + lang, gaps.missing_function_words);
      q.prefix = std::move(cloze.prefix);
      q.suffix = std::move(cloze.suffix);
      q.gold = std::move(cloze.object);
      const std::vector<int32_t> object_ids = encode(q.gold);
      if (has_unknown(encode(q.subject_label)) || has_unknown(object_ids) || object_ids.empty()) {
        stats_.add("facts_with_unknown_tokens." + lang);
        continue;
      }
      q.gold_tokens = static_cast<int32_t>(object_ids.size());
      q.prefix_ids = encode(q.prefix);
      q.suffix_ids = encode(q.suffix);
      if (static_cast<int64_t>(q.prefix_ids.size() + q.suffix_ids.size()) + 2 + o_.num_mask > longest) {
        stats_.add("facts_too_long." + lang);
        continue;
      }
      q.answers = answers(lang, f, *gen::find_slot(tpl, gen::Entity::object));
      stats_.add(q.gold_tokens == 1 ? "facts_single_token." + lang : "facts_multi_token." + lang);
      queries.push_back(std::move(q));
    }
    return queries;
  }

  std::vector<RelationScore> probe(DecodeMethod method, const std::string& lang,
                                   const std::vector<RelationQueries>& groups, OutputStream* predictions) {
    const auto start = std::chrono::steady_clock::now();
    const tok::SpecialTokens& special = model_.tokenizer().special();
    const auto masks = static_cast<size_t>(o_.num_mask);
    std::vector<ClozeCandidate> candidates;
    for (const RelationQueries& group : groups)
      for (const Query& q : group.queries)
        for (int32_t m = 1; m <= o_.num_mask; ++m) {
          ClozeCandidate c;
          c.ids.push_back(special.bos);
          c.ids.insert(c.ids.end(), q.prefix_ids.begin(), q.prefix_ids.end());
          c.first = static_cast<int32_t>(c.ids.size());
          c.masks = m;
          c.ids.insert(c.ids.end(), static_cast<size_t>(m), special.mask);
          c.ids.insert(c.ids.end(), q.suffix_ids.begin(), q.suffix_ids.end());
          c.ids.push_back(special.eos);
          candidates.push_back(std::move(c));
        }
    decode(method, model_, candidates, o_.max_iter);
    const std::string method_name = decode_method_name(method);
    std::vector<RelationScore> scores;
    std::string lines;
    size_t first = 0;  // the first candidate of the fact
    for (const RelationQueries& group : groups) {
      RelationScore score{method_name, lang, group.relation};
      for (const Query& q : group.queries) {
        size_t best = first;
        for (size_t k = first + 1; k < first + masks; ++k)
          if (candidates[k].score(o_.norm) > candidates[best].score(o_.norm)) best = k;
        const ClozeCandidate& c = candidates[best];
        const std::string prediction = text_of(c.tokens);
        const bool correct = q.answers.contains(normalize_answer(prediction));
        score.add(q.gold_tokens == 1, correct);
        if (method == DecodeMethod::confidence) stats_.add("refinements", c.refinements);
        if (predictions) append_prediction(lines, method_name, lang, q, prediction, candidates, first, best, correct);
        first += masks;
      }
      stats_.add("facts_probed", score.facts);
      stats_.add("facts_probed." + method_name, score.facts);
      scores.push_back(std::move(score));
    }
    if (predictions) predictions->write(lines);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    stats_.add("decode_milliseconds." + method_name, ms);
    return scores;
  }

  // The prediction's text; a token the tokenizer does not have (a model vocabulary larger than the
  // tokenizer's) reads as nothing, which matches no answer.
  std::string text_of(const std::vector<int32_t>& tokens) const {
    std::vector<int32_t> known;
    for (int32_t t : tokens)
      if (t >= 0 && t < model_.tokenizer().vocab_size()) known.push_back(t);
    std::string text = model_.tokenizer().decode(known);
    const size_t begin = text.find_first_not_of(' ');
    return begin == std::string::npos ? std::string() : text.substr(begin, text.find_last_not_of(' ') + 1 - begin);
  }

  void append_prediction(std::string& out, const std::string& method, const std::string& lang, const Query& q,
                         const std::string& prediction, const std::vector<ClozeCandidate>& candidates, size_t first,
                         size_t best, bool correct) const {
    const ClozeCandidate& c = candidates[best];
    const tok::Tokenizer& tokenizer = model_.tokenizer();
    std::string sentence = q.prefix;
    for (int32_t m = 0; m < c.masks; ++m)
      sentence += (sentence.empty() ? "" : " ") + tokenizer.piece(tokenizer.special().mask);
    if (!q.suffix.empty()) sentence += " " + q.suffix;
    auto fixed = [](double v) { return json_fixed(v, 6); };
    out += "{\"method\": " + json_string(method) + ", \"lang\": " + json_string(lang) + ", \"relation\": \"P" +
           std::to_string(q.fact->relation) + "\", \"sub_uri\": " + json_string(q.fact->subject) +
           ", \"obj_uri\": " + json_string(q.fact->object) + ", \"sub_label\": " + json_string(q.subject_label) +
           ", \"obj_label\": " + json_string(q.object_label) + ", \"gold\": " + json_string(q.gold) +
           ", \"sentence\": " + json_string(sentence) + ", \"gold_tokens\": " + std::to_string(q.gold_tokens) +
           ", \"num_mask\": " + std::to_string(c.masks) + ", \"prediction\": " + json_string(prediction) +
           ", \"tokens\": [";
    for (size_t k = 0; k < c.tokens.size(); ++k) {
      if (k) out += ", ";
      const int32_t t = c.tokens[k];
      out += json_string(t >= 0 && t < tokenizer.vocab_size() ? tokenizer.piece(t) : std::string());
    }
    out += "], \"token_ids\": [";
    for (size_t k = 0; k < c.tokens.size(); ++k) out += (k ? ", " : "") + std::to_string(c.tokens[k]);
    out += "], \"log_probs\": [";
    for (size_t k = 0; k < c.log_probs.size(); ++k) out += (k ? ", " : "") + fixed(c.log_probs[k]);
    out += "], \"score\": " + fixed(c.score(o_.norm)) + ", \"correct\": " + (correct ? "true" : "false") +
           ", \"candidates\": [";
    for (size_t k = first; k < first + static_cast<size_t>(o_.num_mask); ++k) {
      if (k > first) out += ", ";
      out += "{\"num_mask\": " + std::to_string(candidates[k].masks) +
             ", \"prediction\": " + json_string(text_of(candidates[k].tokens)) +
             ", \"score\": " + fixed(candidates[k].score(o_.norm)) + "}";
    }
    out += "]}\n";
  }

  static std::string summary(const RelationScore& s) {
    if (s.facts == 0) return s.method + " " + s.lang + " P" + std::to_string(s.relation) + ": no fact to probe";
    char buffer[256];
    auto pct = [](int64_t c, int64_t n) { return n ? 100.0 * static_cast<double>(c) / static_cast<double>(n) : 0.0; };
    std::snprintf(
        buffer, sizeof buffer, "%s %s P%llu: %lld facts, %.2f%% (single %.2f%% of %lld, multi %.2f%% of %lld)",
        s.method.c_str(), s.lang.c_str(), static_cast<unsigned long long>(s.relation), static_cast<long long>(s.facts),
        pct(s.correct, s.facts), pct(s.single_correct, s.single_facts), static_cast<long long>(s.single_facts),
        pct(s.multi_correct, s.multi_facts), static_cast<long long>(s.multi_facts));
    return buffer;
  }

  const ProbeOptions& o_;
  MaskedLm model_;
  ErrorCounter errors_;
  std::optional<KgSide> kg_;
  gen::RelationTemplates templates_;
  gen::InflectionTables inflections_;
  std::unordered_map<std::string, AliasTable> aliases_;
  std::vector<std::pair<uint64_t, std::vector<ProbeFact>>> by_relation_;
  std::unordered_map<std::string, std::vector<std::string>> objects_;  // subject|relation -> objects
  std::unordered_map<std::string, std::string> english_;               // the fact files' labels
  std::vector<std::string> inputs_;
  int64_t short_aliases_skipped_ = 0;
  Stats stats_;
};

}  // namespace

int run_probe(const ProbeOptions& o) {
  if (o.num_mask < 1) throw UsageError("--num-mask must be at least 1");
  if (o.max_iter < 0) throw UsageError("--max-iter must not be negative");
  if (o.langs.empty()) throw UsageError("--langs names no language");
  if (o.methods.empty()) throw UsageError("--method names no method");
  nn::require_device(o.device);  // "--device cuda: <why>" in one line, as every tool says it
  nn::set_compute_threads(static_cast<int>(o.threads));
  nn::use_precision(o.precision, o.device);
  Prober prober(o);
  return prober.run();
}

}  // namespace kglm::probe
