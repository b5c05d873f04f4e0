#include "train/tasks/jsonl_readers.hpp"

#include <simdjson.h>

#include <functional>

#include "core/jsonl_records.hpp"

namespace kglm::train::tasks {

namespace {

ChoiceExample parse_xlr(simdjson::dom::element root) {
  ChoiceExample e;
  e.id = string_field(root, "id", false);
  e.lang = string_field(root, "lang", false);
  e.context = string_field(root, "text");
  e.question = string_field(root, "question");
  simdjson::dom::array choices;
  if (root["choices"].get(choices) != simdjson::SUCCESS) throw Error("no array \"choices\"");
  for (simdjson::dom::element c : choices) {
    std::string_view v;
    if (c.get(v) != simdjson::SUCCESS || v.empty()) throw Error("a choice that is not a non-empty string");
    e.choices.emplace_back(v);
  }
  if (e.choices.size() < 2) throw Error("fewer than two choices");
  if (root["label"].get(e.label) != simdjson::SUCCESS) throw Error("no integer \"label\"");
  if (e.label < 0 || e.label >= static_cast<int64_t>(e.choices.size()))
    throw Error("\"label\" " + std::to_string(e.label) + " is not the index of a choice");
  return e;
}

RelationExample parse_annotated_relation(simdjson::dom::element root) {
  RelationExample r;
  r.text = string_field(root, "text");
  r.lang = string_field(root, "lang", false);
  r.label = string_field(root, "label");
  if (r.label.empty()) throw Error("an empty \"label\"");
  r.id = string_field(root, "id", false);
  const std::string subject = string_field(root, "subject", false), object = string_field(root, "object", false);
  simdjson::dom::array spans;
  if (root["spans"].get(spans) != simdjson::SUCCESS) throw Error("no array \"spans\"");
  int found = 0;  // 1: e1 set, 2: e2 set (bits)
  for (simdjson::dom::element span : spans) {
    simdjson::dom::array fields;
    uint64_t begin = 0, end = 0;
    std::string_view kind, id;
    if (span.get(fields) != simdjson::SUCCESS || fields.size() != 4 || fields.at(0).get(begin) ||
        fields.at(1).get(end) || fields.at(2).get(kind) || fields.at(3).get(id))
      throw Error("a span that is not [begin, end, kind, id]");
    if (begin > end || end > r.text.size()) throw Error("a span outside the text");
    if (kind != "entity") continue;
    // Without subject/object ids the first two entity spans are e1 and e2.
    const bool is_e1 = subject.empty() ? found == 0 : id == subject;
    const bool is_e2 = object.empty() ? found == 1 : id == object;
    if (is_e1 && !(found & 1)) {
      r.e1_begin = begin;
      r.e1_end = end;
      found |= 1;
    } else if (is_e2 && !(found & 2)) {
      r.e2_begin = begin;
      r.e2_end = end;
      found |= 2;
    }
  }
  if (found != 3)
    throw Error(subject.empty() && object.empty() ? "fewer than two entity spans"
                                                  : "no entity span with the \"subject\" or \"object\" id");
  return r;
}

}  // namespace

std::vector<ChoiceExample> read_xlr(const std::string& path, ErrorCounter& errors) {
  return read_jsonl_records<ChoiceExample>(path, "XLR JSON lines", parse_xlr, errors);
}

std::vector<RelationExample> read_annotated_relations(const std::string& path, ErrorCounter& errors) {
  return read_jsonl_records<RelationExample>(path, "annotated-text JSON lines", parse_annotated_relation, errors);
}

}  // namespace kglm::train::tasks
