#include "train/tasks/squad_reader.hpp"

#include <simdjson.h>

#include <unordered_map>
#include <unordered_set>

#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/log.hpp"

namespace kglm::train::tasks {

namespace {

std::string read_whole(InputStream& in) {
  std::string text;
  char buf[1 << 16];
  for (size_t n; (n = in.read(buf, sizeof buf)) > 0;) text.append(buf, n);
  return text;
}

// One question of a paragraph; throws Error saying what is wrong with it.
QaExample parse_question(simdjson::dom::element qa, const std::shared_ptr<const std::string>& context) {
  QaExample e;
  std::string_view v;
  if (qa["id"].get(v) != simdjson::SUCCESS) {
    int64_t number = 0;  // some releases number their questions
    if (qa["id"].get(number) != simdjson::SUCCESS) throw Error("no string \"id\"");
    e.id = std::to_string(number);
  } else {
    e.id = std::string(v);
  }
  if (qa["question"].get(v) != simdjson::SUCCESS) throw Error("no string \"question\"");
  e.question = std::string(v);
  if (e.question.find_first_not_of(" \t\r\n") == std::string::npos) throw Error("an empty question");
  e.context = context;
  simdjson::dom::array answers;
  if (qa["answers"].get(answers) != simdjson::SUCCESS) return e;  // an input to answer, not to score
  for (simdjson::dom::element a : answers) {
    QaAnswer answer;
    if (a["text"].get(v) != simdjson::SUCCESS) throw Error("an answer with no string \"text\"");
    answer.text = std::string(v);
    if (a["answer_start"].get(answer.start) != simdjson::SUCCESS) throw Error("an answer with no \"answer_start\"");
    const int64_t begin = code_point_offset(*context, answer.start);
    if (answer.start < 0 || begin < 0)
      throw Error("answer_start " + std::to_string(answer.start) + " is outside the context");
    answer.begin = static_cast<size_t>(begin);
    answer.end = answer.begin + answer.text.size();
    if (context->compare(answer.begin, answer.text.size(), answer.text) != 0)
      throw Error("the context at answer_start " + std::to_string(answer.start) + " does not read \"" + answer.text +
                  "\"");
    e.answers.push_back(std::move(answer));
  }
  return e;
}

}  // namespace

int64_t code_point_offset(std::string_view text, int64_t index) {
  size_t pos = 0;
  for (int64_t k = 0; k < index; ++k) {
    if (pos >= text.size()) return -1;
    ++pos;  // past the lead byte, then its continuation bytes
    while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
  }
  return static_cast<int64_t>(pos);
}

namespace {

void make_ids_unique(std::vector<QaExample>& questions, const std::string& path, bool strict) {
  std::unordered_set<std::string> used;
  for (const QaExample& q : questions) used.insert(q.id);
  if (used.size() == questions.size()) return;
  std::unordered_map<std::string, int64_t> seen;
  int64_t renamed = 0;
  std::string first;
  for (QaExample& q : questions) {
    int64_t& count = seen[q.id];
    if (++count == 1) continue;
    if (strict)
      throw Error(path + ": question id '" + q.id + "' repeats (" + std::to_string(questions.size()) + " questions, " +
                  std::to_string(used.size()) + " distinct ids); without --strict the repeats are renamed ID-2, ...");
    std::string unique = q.id + "-" + std::to_string(count);
    while (!used.insert(unique).second) unique = q.id + "-" + std::to_string(++count);
    if (first.empty()) first = q.id + " → " + unique;
    q.id = std::move(unique);
    ++renamed;
  }
  log_warning(path + ": " + std::to_string(renamed) +
              " questions repeat an earlier question's id; renamed ID-2, ID-3, "
              "… so that each prediction keeps its own (first: " +
              first + "); --strict refuses such a file");
}

}  // namespace

std::vector<QaExample> read_squad(const std::string& path, ErrorCounter& errors, bool strict) {
  InputStream in(path);
  require_input_kind(in, {InputKind::json}, "SQuAD JSON");
  const simdjson::padded_string text(read_whole(in));
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto err = parser.parse(text).get(root))
    throw Error(path + ": not valid JSON (" + simdjson::error_message(err) + ")");
  simdjson::dom::array data;
  if (root["data"].get(data) != simdjson::SUCCESS)
    throw Error(path + ": not SQuAD JSON (no array \"data\" of articles)");
  std::vector<QaExample> out;
  size_t a = 0;
  for (simdjson::dom::element article : data) {
    const std::string at_article = path + ": data[" + std::to_string(a++) + "]";
    simdjson::dom::array paragraphs;
    if (article["paragraphs"].get(paragraphs) != simdjson::SUCCESS) {
      errors.record(at_article + ": no array \"paragraphs\"; article skipped");
      continue;
    }
    size_t p = 0;
    for (simdjson::dom::element paragraph : paragraphs) {
      const std::string at_paragraph = at_article + ".paragraphs[" + std::to_string(p++) + "]";
      std::string_view context;
      simdjson::dom::array qas;
      if (paragraph["context"].get(context) != simdjson::SUCCESS || paragraph["qas"].get(qas) != simdjson::SUCCESS) {
        errors.record(at_paragraph + ": no string \"context\" or no array \"qas\"; paragraph skipped");
        continue;
      }
      const auto shared = std::make_shared<const std::string>(context);
      size_t q = 0;
      for (simdjson::dom::element qa : qas) {
        const std::string at_question = at_paragraph + ".qas[" + std::to_string(q++) + "]";
        try {
          out.push_back(parse_question(qa, shared));
          errors.add_valid();
        } catch (const Error& e) {
          std::string_view id;
          const std::string named = qa["id"].get(id) == simdjson::SUCCESS ? " (id " + std::string(id) + ")" : "";
          errors.record(at_question + named + ": " + e.what() + "; question skipped");
        }
      }
    }
  }
  if (out.empty()) throw Error(path + ": no valid question");
  make_ids_unique(out, path, strict);
  return out;
}

}  // namespace kglm::train::tasks
