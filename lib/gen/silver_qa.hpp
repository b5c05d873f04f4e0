// kg-align qa: silver extractive-QA examples from TEKGEN's alignments (beyond the papers). An
// aligned statement of the article's subject becomes a question about the subject, answered by the
// span of the sentence that writes the object; the context is the sentence's paragraph (or the
// sentence), written as SQuAD v1.1 JSON so that finetune --task qa and the official evaluators read
// it. Questions come from per-relation forms (QuestionForms, DIR/LANG.jsonl beside the relation
// templates) or, for a relation without one, WikiReading's query form "[X] <relation label>?".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/stats.hpp"
#include "text/document.hpp"

namespace kglm::gen {

// Question forms of one language: {"relation": "P19", "question": "Where was [X] born?"} per line,
// "[X]" (once) the subject's name. A bad line is reported with file:line and skipped; a file with
// lines but no usable form is refused.
class QuestionForms {
 public:
  QuestionForms() = default;
  // DIR/LANG.jsonl (or .gz/.zst/.bz2); no file: no forms. Throws Error when dir is not a directory.
  static QuestionForms load_dir(const std::string& dir, const std::string& lang);
  void load_file(const std::string& path);

  // The form of relation P<number>, or nullptr.
  const std::string* find(uint64_t relation) const;
  size_t size() const { return forms_.size(); }
  const std::vector<std::string>& skipped() const { return skipped_; }  // "file:line: reason"

 private:
  std::unordered_map<uint64_t, std::string> forms_;
  std::vector<std::string> skipped_;
};

// The form with [X] replaced by the subject's name.
std::string fill_question(std::string_view form, std::string_view subject);
// WikiReading's query form: "<subject> <relation label>?".
std::string query_question(std::string_view subject, std::string_view relation_label);

// One aligned statement in an article: byte offsets into Document::text.
struct QaAnswer {
  uint32_t relation = 0;  // the FactStore's relation index
  uint32_t sentence_begin = 0, sentence_end = 0, sentence_index = 0;
  uint32_t begin = 0, end = 0;  // the object's mention
};

struct SilverQaArticle {
  const text::Document* doc = nullptr;
  std::string_view subject_id;  // Q-id
  bool sentence_context = false;
  // The question of a relation (nullopt: the relation is not asked) and its P-id.
  std::function<std::optional<std::string>(uint32_t)> question;
  std::function<const std::string&(uint32_t)> relation_id;
};

// Appends the article's contexts as one SQuAD "data" entry {"title", "paragraphs": [{"context",
// "qas": [{"id", "question", "answers": [{"text", "answer_start"}], "relation", "subject"}]}]}: a
// question per relation and context, its answers every distinct mention in that context;
// answer_start counts code points, as Python indexes the context. Appends nothing when no
// question is asked; returns the number of questions.
size_t append_squad_article(std::string& out, const SilverQaArticle& article, std::vector<QaAnswer>& answers,
                            Stats& stats);

}  // namespace kglm::gen
