#include "gen/kg_align.hpp"

#include <algorithm>
#include <memory>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/log.hpp"
#include "core/ordered_pipeline.hpp"
#include "core/output_stream.hpp"
#include "gen/cooccurrence.hpp"
#include "gen/document_task.hpp"
#include "gen/fact_text.hpp"
#include "gen/labels.hpp"
#include "gen/relation_templates.hpp"
#include "gen/silver_qa.hpp"
#include "gen/title_resolver.hpp"
#include "text/case_fold.hpp"
#include "text/dates.hpp"
#include "text/document_batches.hpp"
#include "text/numbers.hpp"
#include "text/pattern_matcher.hpp"
#include "text/sentence_splitter.hpp"
#include "text/unicode.hpp"

namespace kglm::gen {

namespace {

constexpr size_t kDocsPerTask = 64;
constexpr uint32_t kNoParent = UINT32_MAX;
constexpr uint32_t kSubjectName = UINT32_MAX;
constexpr size_t kLanguage = 0;  // the LabelIndex holds the wiki's language only

// A statement or qualifier sub-triple of the article's subject, and how a sentence can write it.
struct Candidate {
  FactRef ref;
  uint32_t parent = kNoParent;  // the statement's candidate, for a qualifier
  enum class How : uint8_t { name, quantity, date } how = How::name;
  std::string amount;  // canonical decimal
  bool has_unit = false;
  text::DateValue date;
};

// A name in the article's matcher: of the subject, of a candidate's object, or of a unit.
struct Pattern {
  uint32_t candidate = kSubjectName;
  bool unit = false;
  bool exact_case = false;
  std::string name;
};

struct TaskResult : DocumentTaskResult {
  std::string relations;                            // --relations records
  std::vector<size_t> aligned_facts;                // FactStore indexes
  std::vector<std::pair<uint32_t, uint32_t>> cooc;  // relation rows, one pair per sentence
};

// Per worker thread.
struct Scratch {
  explicit Scratch(const std::string& locale) : splitter(locale) {}
  text::SentenceSplitter splitter;
  text::PatternMatcher matcher;
  text::FoldedText folded;
  std::vector<Candidate> candidates;
  std::vector<Pattern> patterns;
  std::vector<text::Sentence> sentences;
  std::vector<text::DateMention> dates;
  std::vector<text::NumberMention> numbers;
  std::vector<uint8_t> matched;
  std::vector<std::pair<uint32_t, uint32_t>> first_match;  // per candidate: its first name's bytes
  std::pair<uint32_t, uint32_t> subject_match;
  std::vector<std::pair<uint32_t, uint32_t>> unit_starts;  // (byte offset, candidate)
  std::vector<FactRef> refs;                               // what a sentence aligns
  std::vector<uint32_t> relations;
  std::vector<QaAnswer> qa_answers;  // kg-align qa: the article's
  bool any_quantity = false;
  bool any_date = false;
};

bool is_unit_gap(std::string_view gap) {
  return gap.empty() || gap == " " || gap == "\u00a0" || gap == "\u2009" || gap == "\u202f";
}

class Aligner {
 public:
  explicit Aligner(const KgAlignOptions& o)
      : options_(o),
        store_(o.kg),
        facts_(store_, o.kinds),
        labels_(store_, {o.lang}, true),
        text_(store_, facts_, labels_),
        titles_(store_, o.kg, o.redirects, o.lang + "wiki") {
    if (!o.questions.empty()) {
      questions_ = QuestionForms::load_dir(o.questions, o.lang);
      for (const std::string& skipped : questions_.skipped()) log_warning(skipped + "; line skipped");
      if (questions_.size() == 0)
        log_warning("no question forms for '" + o.lang + "' in " + o.questions + ": every question is the query form");
    }
  }

  const kg::FactStore& facts() const { return facts_; }
  const FactText& text() const { return text_; }

  void process(Scratch& s, text::DocumentBatch& task, TaskResult& result) const {
    result.start(task);
    for (auto& [line, doc] : task.docs) article(s, doc, result);
  }

 private:
  void article(Scratch& s, text::Document& doc, TaskResult& result) const {
    Stats& stats = result.stats;
    stats.add("documents");
    const int64_t subject = titles_.resolve(doc.title, stats, "articles_mapped");
    if (subject < 0) return stats.add("articles_unmapped");
    stats.add("articles_mapped");
    const auto facts = facts_.facts(static_cast<uint32_t>(subject));
    if (facts.empty()) return stats.add("articles_without_statements");
    stats.add("statements_of_mapped_subjects", static_cast<int64_t>(facts.size()));
    build_matcher(s, static_cast<uint32_t>(subject), facts, stats);
    if (!options_.all_sections) lead_section_only(doc);
    s.splitter.split(doc, s.sentences);
    stats.add("sentences", static_cast<int64_t>(s.sentences.size()));
    s.qa_answers.clear();
    for (size_t k = 0; k < s.sentences.size(); ++k) {
      const text::Sentence& sentence = s.sentences[k];
      align_sentence(s, doc, static_cast<uint32_t>(subject),
                     std::string_view(doc.text).substr(sentence.begin, sentence.end - sentence.begin), k, result);
    }
    if (options_.qa) silver_qa(s, doc, static_cast<uint32_t>(subject), result);
  }

  // The article's SQuAD entry, each preceded by ",\n" (align_kg drops the first one's).
  void silver_qa(Scratch& s, const text::Document& doc, uint32_t subject, TaskResult& result) const {
    if (s.qa_answers.empty()) return;
    const auto label = labels_.label(kLanguage, subject);
    const std::string_view name = label ? *label : std::string_view(doc.title);
    SilverQaArticle article;
    article.doc = &doc;
    article.subject_id = text_.entity_id(subject);
    article.sentence_context = options_.qa_sentence_context;
    article.relation_id = [&](uint32_t relation) -> const std::string& { return text_.relation_id(relation); };
    article.question = [&](uint32_t relation) -> std::optional<std::string> {
      if (const std::string* form = questions_.find(text_.relation_number(relation))) {
        result.stats.add("qa_questions_from_forms");
        return fill_question(*form, name);
      }
      const auto relation_label = text_.relation_label(kLanguage, relation);
      if (!relation_label) return std::nullopt;
      result.stats.add("qa_questions_from_labels");
      return query_question(name, *relation_label);
    };
    std::string entry;
    if (append_squad_article(entry, article, s.qa_answers, result.stats) == 0) return;
    result.records.all += ",\n";
    result.records.all += entry;
  }

  // kg-align qa: the mention that aligned each statement (not qualifier) of the sentence, unless it
  // overlaps the subject's name (the question would hold its answer).
  void collect_answers(Scratch& s, std::string_view body, uint32_t offset, size_t index, bool subject_named,
                       Stats& stats) const {
    for (uint32_t c = 0; c < s.candidates.size(); ++c) {
      const Candidate& cand = s.candidates[c];
      if (!s.matched[c] || cand.parent != kNoParent) continue;
      std::pair<uint32_t, uint32_t> span;
      if (cand.how == Candidate::How::name) {
        span = s.first_match[c];
      } else if (cand.how == Candidate::How::date) {
        auto d = std::find_if(s.dates.begin(), s.dates.end(),
                              [&](const text::DateMention& m) { return text::dates_agree(cand.date, m.date); });
        span = {d->begin, d->end};
      } else {
        stats.add("qa_quantities_not_asked");
        continue;
      }
      if (subject_named && span.first < s.subject_match.second && s.subject_match.first < span.second) {
        stats.add("qa_answers_overlapping_subject");
        continue;
      }
      QaAnswer a;
      a.relation = cand.ref.fact->relation;
      a.sentence_begin = offset;
      a.sentence_end = offset + static_cast<uint32_t>(body.size());
      a.sentence_index = static_cast<uint32_t>(index);
      a.begin = offset + span.first;
      a.end = offset + span.second;
      s.qa_answers.push_back(a);
    }
  }

  static void lead_section_only(text::Document& doc) {
    doc.text.resize(std::min<size_t>(doc.root_end, doc.text.size()));
    auto beyond =
        std::find_if(doc.links.begin(), doc.links.end(), [&](const text::Link& l) { return l.end > doc.text.size(); });
    doc.links.erase(beyond, doc.links.end());
    doc.sections.clear();
  }

  // False when the name is not matched (NameMatch::unused; unit symbols such as "m" always are).
  bool add_pattern(Scratch& s, std::string_view name, uint32_t candidate, bool unit) const {
    const text::NameMatch how = text::classify_name(name);
    if (how == text::NameMatch::unused && !unit) return false;
    Pattern p;
    p.candidate = candidate;
    p.unit = unit;
    p.exact_case = how != text::NameMatch::folded;
    p.name = std::string(name);
    s.matcher.add(text::fold_case(name), static_cast<uint32_t>(s.patterns.size()));
    s.patterns.push_back(std::move(p));
    return true;
  }

  // The English label and aliases of an entity; units also in the plural ("kilometres").
  size_t add_names(Scratch& s, uint32_t row, uint32_t candidate, bool unit) const {
    size_t added = 0;
    auto add = [&](std::string_view name) {
      if (!add_pattern(s, name, candidate, unit)) return;
      ++added;
      const bool plural = unit && name.size() >= 4 && text::is_ascii_alpha(name.back()) && name.back() != 's';
      if (plural) add_pattern(s, std::string(name) + "s", candidate, unit);
    };
    if (auto label = labels_.label(kLanguage, row)) add(*label);
    auto [first, last] = labels_.aliases(kLanguage, row);
    for (size_t a = first; a < last; ++a) add(labels_.alias(kLanguage, a));
    return added;
  }

  // A quantity (amount and unit item number); false when it cannot be written in a sentence.
  bool set_quantity(Scratch& s, Candidate& c, std::string_view amount, uint64_t unit, uint32_t index) const {
    auto canonical = text::canonical_decimal(amount);
    if (!canonical) return false;
    c.how = Candidate::How::quantity;
    c.amount = std::move(*canonical);
    c.has_unit = unit != 0;
    s.any_quantity = true;
    if (unit == 0) return true;
    const int64_t row = facts_.item_row(unit);
    return row >= 0 && add_names(s, static_cast<uint32_t>(row), index, true) > 0;
  }

  bool set_date(Scratch& s, Candidate& c, std::string_view value, int precision) const {
    auto date = text::parse_wikidata_time(value, precision);
    if (!date) return false;
    c.how = Candidate::How::date;
    c.date = *date;
    s.any_date = true;
    return true;
  }

  bool set_statement(Scratch& s, Candidate& c, uint32_t index) const {
    const kg::Fact& f = *c.ref.fact;
    switch (f.kind) {
      case kg::FactKind::item:
        return add_names(s, facts_.object(f), index, false) > 0;
      case kg::FactKind::quantity:
        return set_quantity(s, c, facts_.amount(f), facts_.unit(f), index);
      case kg::FactKind::time:
        return set_date(s, c, facts_.time_value(f), facts_.time_precision(f));
      case kg::FactKind::monolingualtext: {
        const std::string_view lang = facts_.language(f);
        if (lang != options_.lang && lang.rfind(options_.lang + "-", 0) != 0) return false;
        return add_pattern(s, facts_.text(f), index, false);
      }
      case kg::FactKind::string:
        return add_pattern(s, facts_.text(f), index, false);
      default:
        return false;  // identifiers and coordinates are not written in prose
    }
  }

  bool set_qualifier(Scratch& s, Candidate& c, const kg::QualifierRef& q, uint32_t index) const {
    switch (q.type) {
      case kg::QualifierType::item: {
        const int64_t row = facts_.item_row(facts_.qualifier_number(q));
        return row >= 0 && add_names(s, static_cast<uint32_t>(row), index, false) > 0;
      }
      case kg::QualifierType::quantity:
        return set_quantity(s, c, facts_.qualifier_value(q), facts_.qualifier_number(q), index);
      case kg::QualifierType::time:
        return set_date(s, c, facts_.qualifier_value(q), facts_.qualifier_precision(q));
      case kg::QualifierType::string:
      case kg::QualifierType::monolingualtext:
        return add_pattern(s, facts_.qualifier_value(q), index, false);
      default:
        return false;
    }
  }

  void build_matcher(Scratch& s, uint32_t subject, std::span<const kg::Fact> facts, Stats& stats) const {
    s.candidates.clear();
    s.patterns.clear();
    s.matcher.clear();
    s.any_quantity = s.any_date = false;
    add_names(s, subject, kSubjectName, false);
    int64_t unalignable = 0;
    for (const kg::Fact& f : facts) {
      const uint32_t parent = static_cast<uint32_t>(s.candidates.size());
      Candidate c;
      c.ref = FactRef{&f, -1};
      if (!set_statement(s, c, parent)) {
        ++unalignable;
        continue;
      }
      s.candidates.push_back(std::move(c));
      if (!options_.qualifiers) continue;
      const auto qualifiers = facts_.qualifiers(f);
      for (size_t j = 0; j < qualifiers.size(); ++j) {
        Candidate q;
        q.ref = FactRef{&f, static_cast<int>(j)};
        q.parent = parent;
        if (set_qualifier(s, q, qualifiers[j], static_cast<uint32_t>(s.candidates.size())))
          s.candidates.push_back(std::move(q));
      }
    }
    if (unalignable > 0) stats.add("statements_unalignable", unalignable);
    s.matcher.build();
  }

  // Language and nationality names are also adjectives of compounds that say something else:
  // "German-born" is no evidence of P1412 (languages spoken) = German, "French-speaking" none of
  // P27 = France. Such objects match only as words of their own, not joined by a hyphen.
  bool names_language_or_nationality(const Candidate& c) const {
    static constexpr uint64_t kRelations[] = {
        27,    // country of citizenship
        37,    // official language
        103,   // native language
        172,   // ethnic group
        364,   // original language of film or TV show
        407,   // language of work or name
        1412,  // languages spoken, written or signed
        2936,  // language used
    };
    const uint64_t number = text_.relation_number(c.ref.fact->relation);
    return std::find(std::begin(kRelations), std::end(kRelations), number) != std::end(kRelations);
  }

  static bool in_hyphen_compound(std::string_view body, size_t begin, size_t end) {
    return (begin > 0 && body[begin - 1] == '-') || (end < body.size() && body[end] == '-');
  }

  void align_sentence(Scratch& s, const text::Document& doc, uint32_t subject, std::string_view body, size_t index,
                      TaskResult& result) const {
    s.folded.assign(body);
    s.matched.assign(s.candidates.size(), 0);
    s.first_match.assign(s.candidates.size(), {0, 0});
    s.unit_starts.clear();
    bool subject_named = false;
    s.matcher.scan(s.folded.folded(), [&](size_t fb, size_t fe, uint32_t tag) {
      const Pattern& p = s.patterns[tag];
      const uint32_t begin = s.folded.original(fb), end = s.folded.original(fe);
      if (p.exact_case && body.substr(begin, end - begin) != p.name) return;
      // Whole words only; a unit may follow its amount directly ("5km").
      if (!p.unit && text::word_char_before(body, begin) && text::word_char_at(body, begin)) return;
      if (text::word_char_before(body, end) && text::word_char_at(body, end)) return;
      if (p.candidate != kSubjectName && !p.unit && in_hyphen_compound(body, begin, end) &&
          names_language_or_nationality(s.candidates[p.candidate]))
        return;
      if (p.candidate == kSubjectName) {
        if (!subject_named) s.subject_match = {begin, end};
        subject_named = true;
      } else if (p.unit) {
        s.unit_starts.emplace_back(begin, p.candidate);
      } else {
        if (!s.matched[p.candidate]) s.first_match[p.candidate] = {begin, end};
        s.matched[p.candidate] = 1;
      }
    });
    if (s.any_quantity) text::find_numbers(body, s.numbers);
    if (s.any_date) text::find_dates(body, s.dates);
    std::vector<FactRef>& refs = s.refs;
    std::vector<uint32_t>& relations = s.relations;
    refs.clear();
    relations.clear();
    for (uint32_t c = 0; c < s.candidates.size(); ++c) {
      const Candidate& cand = s.candidates[c];
      if (cand.how == Candidate::How::quantity) s.matched[c] = quantity_written(s, cand, c, body);
      if (cand.how == Candidate::How::date)
        s.matched[c] = std::any_of(s.dates.begin(), s.dates.end(),
                                   [&](const text::DateMention& d) { return text::dates_agree(cand.date, d.date); });
      if (cand.parent != kNoParent && !s.matched[cand.parent]) s.matched[c] = 0;
      if (!s.matched[c]) continue;
      refs.push_back(cand.ref);
      if (cand.parent == kNoParent) {
        relations.push_back(cand.ref.fact->relation);
        result.aligned_facts.push_back(facts_.index(*cand.ref.fact));
      }
    }
    if (refs.empty()) return;
    Stats& stats = result.stats;
    stats.add("sentences_aligned");
    stats.add("alignments", static_cast<int64_t>(relations.size()));
    stats.add("qualifier_alignments", static_cast<int64_t>(refs.size() - relations.size()));
    if (options_.qa) {
      const auto offset = static_cast<uint32_t>(body.data() - doc.text.data());
      return collect_answers(s, body, offset, index, subject_named, stats);
    }
    count_cooccurrence(relations, result.cooc);
    if (!options_.relations.empty() && subject_named) relation_examples(s, subject, body, result);

    std::string sentence(body);
    if (subject_named) {
      stats.add("sentences_naming_subject");
    } else if (options_.replace_pronoun) {
      auto label = labels_.label(kLanguage, subject);
      if (replace_first_pronoun(sentence, label ? *label : std::string_view(doc.title))) stats.add("pronouns_replaced");
    }
    std::string& out = result.records.all;
    out += "{\"subject\":";
    append_json_string(out, text_.entity_id(subject));
    out += ",\"title\":";
    append_json_string(out, doc.title);
    out += ",\"doc\":";
    append_json_string(out, doc.id);
    out += ",\"sentence_index\":";
    append_json_uint(out, index);
    text_.append_triples_json(out, subject, refs);
    out += ",\"sentence\":";
    append_json_string(out, sentence);
    out += "}\n";
  }

  // The sentence once per aligned item statement whose object's name does not overlap the
  // subject's: the two entity spans (text order) and the relation as the label.
  void relation_examples(const Scratch& s, uint32_t subject, std::string_view body, TaskResult& result) const {
    const auto [sb, se] = s.subject_match;
    for (uint32_t c = 0; c < s.candidates.size(); ++c) {
      const Candidate& cand = s.candidates[c];
      if (!s.matched[c] || cand.parent != kNoParent || cand.how != Candidate::How::name ||
          cand.ref.fact->kind != kg::FactKind::item)
        continue;
      const auto [ob, oe] = s.first_match[c];
      if (ob < se && sb < oe) {
        result.stats.add("relation_examples_overlapping");
        continue;
      }
      const std::string& object = text_.entity_id(facts_.object(*cand.ref.fact));
      const std::string& relation = text_.relation_id(cand.ref.fact->relation);
      std::string& out = result.relations;
      out += "{\"text\":";
      append_json_string(out, body);
      out += ",\"lang\":";
      append_json_string(out, options_.lang);
      out += ",\"spans\":[";
      const bool subject_first = sb < ob;
      for (int k = 0; k < 2; ++k) {
        const bool is_subject = (k == 0) == subject_first;
        out += k ? ",[" : "[";
        append_json_uint(out, is_subject ? sb : ob);
        out += ',';
        append_json_uint(out, is_subject ? se : oe);
        out += ",\"entity\",";
        append_json_string(out, is_subject ? text_.entity_id(subject) : object);
        out += ']';
      }
      out += "],\"subject\":";
      append_json_string(out, text_.entity_id(subject));
      out += ",\"object\":";
      append_json_string(out, object);
      out += ",\"label\":";
      append_json_string(out, relation);
      if (const auto name = text_.relation_label(kLanguage, cand.ref.fact->relation)) {
        out += ",\"relation_label\":";
        append_json_string(out, *name);
      }
      out += "}\n";
      result.stats.add("relation_examples");
    }
  }

  bool quantity_written(const Scratch& s, const Candidate& c, uint32_t index, std::string_view body) const {
    for (const text::NumberMention& n : s.numbers) {
      if (n.value != c.amount) continue;
      if (!c.has_unit) return true;
      for (const auto& [begin, candidate] : s.unit_starts) {
        if (candidate == index && begin >= n.end && is_unit_gap(body.substr(n.end, begin - n.end))) return true;
      }
    }
    return false;
  }

  // Every unordered pair of distinct relations of the sentence once, and (r, r) when r aligned twice.
  static void count_cooccurrence(std::vector<uint32_t>& relations, std::vector<std::pair<uint32_t, uint32_t>>& out) {
    std::sort(relations.begin(), relations.end());
    size_t distinct = 0;
    for (size_t i = 0, j = 0; i < relations.size(); i = j) {
      while (j < relations.size() && relations[j] == relations[i]) ++j;
      if (j - i > 1) out.emplace_back(relations[i], relations[i]);
      relations[distinct++] = relations[i];
    }
    for (size_t i = 0; i < distinct; ++i)
      for (size_t j = i + 1; j < distinct; ++j) out.emplace_back(relations[i], relations[j]);
  }

  const KgAlignOptions& options_;
  kg::KgStore store_;
  kg::FactStore facts_;
  LabelIndex labels_;
  FactText text_;
  TitleResolver titles_;
  QuestionForms questions_;
};

}  // namespace

bool replace_first_pronoun(std::string& sentence, std::string_view name) {
  struct Pronoun {
    const char* word;
    bool possessive;
  };
  static constexpr Pronoun kPronouns[] = {{"he", false}, {"she", false}, {"him", false}, {"his", true}, {"hers", true}};
  for (size_t i = 0; i < sentence.size();) {
    if (!text::is_ascii_alpha(sentence[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < sentence.size() && text::is_ascii_alpha(sentence[j])) ++j;
    if (!text::word_char_before(sentence, i) && !text::word_char_at(sentence, j)) {
      const std::string word = text::ascii_lower(std::string_view(sentence).substr(i, j - i));
      for (const Pronoun& p : kPronouns) {
        if (word != p.word) continue;
        sentence.replace(i, j - i, p.possessive ? std::string(name) + "'s" : std::string(name));
        return true;
      }
    }
    i = j;
  }
  return false;
}

Stats align_kg(const KgAlignOptions& options) {
  if (options.kinds.empty()) throw UsageError("--kinds: no statement kind to align");
  Aligner aligner(options);
  OutputStream out(options.output);
  std::unique_ptr<OutputStream> relations_out;
  if (!options.relations.empty()) relations_out = std::make_unique<OutputStream>(options.relations);
  text::DocumentBatches source(options.inputs, kDocsPerTask);
  const unsigned workers = std::max(1u, options.threads);
  std::vector<std::unique_ptr<Scratch>> scratch;
  for (unsigned w = 0; w < workers; ++w) scratch.push_back(std::make_unique<Scratch>(options.locale));
  ErrorCounter errors(options.max_errors);
  Stats stats;
  std::vector<uint8_t> fact_aligned(aligner.facts().fact_count(), 0);
  CooccurrenceTable cooc;
  const FactText& text = aligner.text();
  // kg-align qa: one SQuAD v1.1 document; the articles' entries arrive each after ",\n".
  bool first_entry = true;
  if (options.qa) out.write("{\"version\":\"1.1\",\"source\":\"kg-align qa (silver)\",\"data\":[\n");
  run_ordered_pipeline<text::DocumentBatch, TaskResult>(
      workers, 2 * workers + 2, [&](text::DocumentBatch& task) { return source.next(task); },
      [&](unsigned w, text::DocumentBatch& task, TaskResult& result) { aligner.process(*scratch[w], task, result); },
      [&](TaskResult& result) {
        std::string_view records = result.records.all;
        if (options.qa && first_entry && !records.empty()) {
          records.remove_prefix(2);
          first_entry = false;
        }
        out.write(records);
        if (relations_out) relations_out->write(result.relations);
        result.count(errors);
        for (size_t f : result.aligned_facts) fact_aligned[f] = 1;
        for (const auto& [a, b] : result.cooc) cooc.add(text.relation_number(a), text.relation_number(b), 1);
        stats.merge(result.stats);
      });
  errors.finish(options.inputs);
  if (options.qa) out.write("\n]}\n");
  out.close();
  if (relations_out) relations_out->close();
  if (!options.cooc.empty()) cooc.write(options.cooc);

  // Table 1 of the paper: how much of the KG the alignment covers.
  const kg::FactStore& facts = aligner.facts();
  std::vector<uint8_t> relation_seen(aligner.text().relation_count(), 0), relation_aligned(relation_seen.size(), 0);
  int64_t triples_aligned = 0;
  for (uint32_t e = 0; e < facts.entity_count(); ++e) {
    for (const kg::Fact& f : facts.facts(e)) {
      relation_seen[f.relation] = 1;
      if (fact_aligned[facts.index(f)]) {
        relation_aligned[f.relation] = 1;
        ++triples_aligned;
      }
    }
  }
  stats.set("total_triples", static_cast<int64_t>(facts.fact_count()));
  stats.set("triples_aligned", triples_aligned);
  stats.set("relations", std::count(relation_seen.begin(), relation_seen.end(), 1));
  stats.set("relations_aligned", std::count(relation_aligned.begin(), relation_aligned.end(), 1));
  if (!options.qa) stats.set("relation_pairs", static_cast<int64_t>(cooc.size()));
  stats.set("errors", static_cast<int64_t>(errors.count()));
  return stats;
}

}  // namespace kglm::gen
