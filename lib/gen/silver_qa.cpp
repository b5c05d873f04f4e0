#include "gen/silver_qa.hpp"

#include <simdjson.h>

#include <algorithm>
#include <filesystem>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/line_batcher.hpp"
#include "gen/relation_templates.hpp"

namespace kglm::gen {

QuestionForms QuestionForms::load_dir(const std::string& dir, const std::string& lang) {
  if (!std::filesystem::is_directory(dir)) throw Error(location(dir) + "not a directory");
  QuestionForms forms;
  if (const std::string path = find_language_file(dir, lang); !path.empty()) forms.load_file(path);
  return forms;
}

void QuestionForms::load_file(const std::string& path) {
  simdjson::dom::parser parser;
  uint64_t lines = 0, kept = 0;
  std::unordered_map<uint64_t, uint64_t> first_line;
  for_each_data_line(path, [&](uint64_t line, std::string_view text) {
    ++lines;
    auto skip = [&](const std::string& reason) { skipped_.push_back(location(path, line) + reason); };
    simdjson::dom::element root;
    if (auto err = parser.parse(text.data(), text.size()).get(root))
      return skip(std::string("invalid JSON: ") + simdjson::error_message(err));
    std::string_view relation, question;
    if (!root.is_object() || root["relation"].get(relation) != simdjson::SUCCESS) return skip("no string \"relation\"");
    if (root["question"].get(question) != simdjson::SUCCESS) return skip("no string \"question\"");
    uint64_t number = 0;
    if (!parse_relation_id(relation, number))
      return skip("relation \"" + std::string(relation) + "\" is not P<number>");
    const size_t x = question.find("[X]");
    if (x == std::string_view::npos || question.find("[X]", x + 3) != std::string_view::npos)
      return skip("the question of " + std::string(relation) + " must hold [X] once");
    if (question.find_first_of("[]") != x || question.find_first_of("[]", x + 3) != std::string_view::npos)
      return skip("the question of " + std::string(relation) + " has brackets other than [X]");
    ++kept;
    if (auto [it, fresh] = first_line.emplace(number, line); !fresh)
      return skip("relation " + std::string(relation) + " given again (first at line " + std::to_string(it->second) +
                  ")");
    forms_.emplace(number, std::string(question));
  });
  if (lines > 0 && kept == 0) throw Error(skipped_.back() + " (no line of the file is a usable question form)");
}

const std::string* QuestionForms::find(uint64_t relation) const {
  auto it = forms_.find(relation);
  return it == forms_.end() ? nullptr : &it->second;
}

std::string fill_question(std::string_view form, std::string_view subject) {
  const size_t x = form.find("[X]");
  if (x == std::string_view::npos) return std::string(form);
  std::string out(form.substr(0, x));
  out += subject;
  out += form.substr(x + 3);
  return out;
}

std::string query_question(std::string_view subject, std::string_view relation_label) {
  std::string out(subject);
  out += ' ';
  out += relation_label;
  out += '?';
  return out;
}

namespace {

size_t code_points(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// The paragraph (a line of the document's text) holding the sentence; a sentence that runs over a
// line end takes the lines it touches.
std::pair<uint32_t, uint32_t> paragraph_of(std::string_view text, const QaAnswer& a) {
  const size_t before = a.sentence_begin == 0 ? std::string_view::npos : text.rfind('\n', a.sentence_begin - 1);
  const size_t begin = before == std::string_view::npos ? 0 : before + 1;
  const size_t after = text.find('\n', std::max(a.sentence_end, 1u) - 1);
  const size_t end = after == std::string_view::npos ? text.size() : after;
  return {static_cast<uint32_t>(begin), static_cast<uint32_t>(std::max(end, begin))};
}

}  // namespace

size_t append_squad_article(std::string& out, const SilverQaArticle& article, std::vector<QaAnswer>& answers,
                            Stats& stats) {
  const text::Document& doc = *article.doc;
  const std::string_view text = doc.text;
  struct Keyed {
    uint32_t context_begin, context_end, context_number;
    size_t first;  // the order of its first answer: questions keep the text's order
    QaAnswer answer;
  };
  std::vector<Keyed> keyed;
  keyed.reserve(answers.size());
  for (size_t i = 0; i < answers.size(); ++i) {
    const QaAnswer& a = answers[i];
    Keyed k{a.sentence_begin, a.sentence_end, a.sentence_index, i, a};
    if (!article.sentence_context) {
      std::tie(k.context_begin, k.context_end) = paragraph_of(text, a);
      k.context_number = static_cast<uint32_t>(std::count(text.begin(), text.begin() + k.context_begin, '\n'));
    }
    keyed.push_back(k);
  }
  // A question per (context, relation), at its first answer; its answers in text order, distinct.
  std::stable_sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
    return std::tie(a.context_begin, a.answer.relation, a.answer.begin, a.answer.end) <
           std::tie(b.context_begin, b.answer.relation, b.answer.begin, b.answer.end);
  });
  struct Question {
    size_t first, from, to;  // keyed[from, to)
  };
  std::vector<Question> questions;
  for (size_t i = 0, j = 0; i < keyed.size(); i = j) {
    size_t first = keyed[i].first;
    while (j < keyed.size() && keyed[j].context_begin == keyed[i].context_begin &&
           keyed[j].answer.relation == keyed[i].answer.relation)
      first = std::min(first, keyed[j++].first);
    questions.push_back({first, i, j});
  }
  // Contexts in text order, questions within a context in the order of their first answer.
  std::stable_sort(questions.begin(), questions.end(), [&](const Question& a, const Question& b) {
    return std::tie(keyed[a.from].context_begin, a.first) < std::tie(keyed[b.from].context_begin, b.first);
  });

  size_t asked = 0;
  std::string entry;
  uint32_t open_context = UINT32_MAX;
  for (const Question& q : questions) {
    const Keyed& head = keyed[q.from];
    const std::optional<std::string> question = article.question(head.answer.relation);
    if (!question) {
      stats.add("qa_statements_without_question", static_cast<int64_t>(q.to - q.from));
      continue;
    }
    const std::string_view context = text.substr(head.context_begin, head.context_end - head.context_begin);
    if (open_context != head.context_begin) {
      entry += open_context == UINT32_MAX ? "{\"context\":" : "]},{\"context\":";
      append_json_string(entry, context);
      entry += ",\"qas\":[";
      stats.add("qa_contexts");
    } else {
      entry += ',';
    }
    open_context = head.context_begin;
    const std::string& relation = article.relation_id(head.answer.relation);
    entry += "{\"id\":";
    append_json_string(entry, doc.id + "-" + std::to_string(head.context_number) + "-" + relation);
    entry += ",\"question\":";
    append_json_string(entry, *question);
    entry += ",\"answers\":[";
    for (size_t k = q.from; k < q.to; ++k) {
      const QaAnswer& a = keyed[k].answer;
      if (k > q.from && a.begin == keyed[k - 1].answer.begin && a.end == keyed[k - 1].answer.end) continue;
      if (k > q.from) entry += ',';
      entry += "{\"text\":";
      append_json_string(entry, text.substr(a.begin, a.end - a.begin));
      entry += ",\"answer_start\":";
      append_json_uint(entry, code_points(text.substr(head.context_begin, a.begin - head.context_begin)));
      entry += '}';
      stats.add("qa_answers");
    }
    entry += "],\"relation\":";
    append_json_string(entry, relation);
    entry += ",\"subject\":";
    append_json_string(entry, article.subject_id);
    entry += '}';
    ++asked;
  }
  if (asked == 0) return 0;
  out += "{\"title\":";
  append_json_string(out, doc.title);
  out += ",\"paragraphs\":[";
  out += entry;
  out += "]}]}";
  stats.add("qa_questions", static_cast<int64_t>(asked));
  stats.add("qa_articles");
  return asked;
}

}  // namespace kglm::gen
