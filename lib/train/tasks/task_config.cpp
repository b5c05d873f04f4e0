#include "train/tasks/task_config.hpp"

#include <simdjson.h>
#include <cerrno>
#include <cstring>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/big_json_integers.hpp"
#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/output_stream.hpp"

namespace kglm::train::tasks {

namespace {

constexpr const char* kFormat = "kglm-finetune-task";

}  // namespace

void write_task_config(const std::filesystem::path& path, const TaskConfig& c) {
  std::string j = "{\n  \"format\": " + json_string(kFormat) +
                  ",\n  \"version\": 1,\n  \"task\": " + json_string(task_name(c.kind)) + ",\n  \"labels\": [";
  for (size_t i = 0; i < c.labels.size(); ++i) j += (i ? ", " : "") + json_string(c.labels[i]);
  j += "],\n  \"pooling\": " + json_string(pooling_name(c.pooling)) + ",\n  \"max_len\": " + std::to_string(c.max_len);
  if (c.kind == TaskKind::qa)
    j += ",\n  \"doc_stride\": " + std::to_string(c.qa_windows.doc_stride) +
         ",\n  \"max_query_len\": " + std::to_string(c.qa_windows.max_query_len) +
         ",\n  \"max_answer_len\": " + std::to_string(c.qa_decode.max_answer_len) +
         ",\n  \"n_best\": " + std::to_string(c.qa_decode.n_best);
  if (c.kind == TaskKind::slots) {
    j += ",\n  \"intents\": [";
    for (size_t i = 0; i < c.intents.size(); ++i) j += (i ? ", " : "") + json_string(c.intents[i]);
    j += "],\n  \"intent_weight\": " + json_number(c.intent_weight, 17);
  }
  j += "\n}\n";
  OutputStream out(path.string());
  out.write(j);
  out.close();
}

TaskConfig read_task_config(const std::filesystem::path& path) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (!std::filesystem::exists(path))
    throw Error(path.string() + ": missing (not a model directory written by finetune)");
  if (auto err = parser.load(path.string()).get(root))
    throw Error(path.string() + ": not JSON: " + simdjson::error_message(err));
  std::string_view format, task, pooling;
  simdjson::dom::array labels;
  TaskConfig c;
  if (root["format"].get(format) || format != kFormat || root["task"].get(task) || root["labels"].get(labels) ||
      root["pooling"].get(pooling) || root["max_len"].get(c.max_len))
    throw Error(path.string() + ": not a finetune task configuration");
  c.kind = parse_task(std::string(task));
  c.pooling = parse_pooling(std::string(pooling));
  for (simdjson::dom::element l : labels) {
    std::string_view name;
    if (l.get(name)) throw Error(path.string() + ": a label that is not a string");
    c.labels.emplace_back(name);
  }
  if (c.kind == TaskKind::qa &&
      (root["doc_stride"].get(c.qa_windows.doc_stride) || root["max_query_len"].get(c.qa_windows.max_query_len) ||
       root["max_answer_len"].get(c.qa_decode.max_answer_len) || root["n_best"].get(c.qa_decode.n_best)))
    throw Error(path.string() + ": a qa task configuration without doc_stride, max_query_len, max_answer_len, n_best");
  simdjson::dom::array intents;
  if (c.kind == TaskKind::slots) {
    if (root["intents"].get(intents) || root["intent_weight"].get(c.intent_weight))
      throw Error(path.string() + ": a slots task configuration without intents and intent_weight");
    for (simdjson::dom::element l : intents) {
      std::string_view name;
      if (l.get(name)) throw Error(path.string() + ": an intent that is not a string");
      c.intents.emplace_back(name);
    }
  }
  return c;
}

TaskConfig task_config_from_hf(const std::filesystem::path& config_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  std::ifstream in(config_json, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw Error(config_json.string() + ": cannot read: " + std::strerror(errno));
  if (auto err = parser.parse(simdjson::padded_string(widen_big_integers(text.str()))).get(root))
    throw Error(config_json.string() + ": not a readable config.json: " + simdjson::error_message(err));
  const auto fail = [&](const std::string& what) -> TaskConfig { throw Error(config_json.string() + ": " + what); };
  simdjson::dom::array architectures;
  std::string_view architecture;
  if (root["architectures"].get(architectures) || architectures.size() == 0 || architectures.at(0).get(architecture))
    return fail("no \"architectures\": neither a finetune model (finetune.json) nor a transformers task model");
  TaskConfig c;
  if (architecture.ends_with("ForTokenClassification")) {
    c.kind = TaskKind::token;
  } else if (architecture.ends_with("ForSequenceClassification")) {
    c.kind = TaskKind::sequence;
  } else if (architecture.ends_with("ForMultipleChoice")) {
    c.kind = TaskKind::choice;
  } else if (architecture.ends_with("ForQuestionAnswering")) {
    c.kind = TaskKind::qa;
  } else {
    return fail(std::string(architecture) +
                " is not a task model (*ForTokenClassification, *ForSequenceClassification, *ForMultipleChoice or "
                "*ForQuestionAnswering)");
  }
  simdjson::dom::object id2label;
  if (c.kind != TaskKind::choice && c.kind != TaskKind::qa) {
    if (root["id2label"].get(id2label)) return fail("no \"id2label\": the labels of the head are unknown");
    c.labels.resize(id2label.size());
    for (auto [key, value] : id2label) {
      std::string_view label;
      size_t id = 0;
      const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
      if (ec != std::errc() || end != key.data() + key.size() || id >= c.labels.size() || value.get(label) ||
          !c.labels[id].empty())
        return fail("id2label must number its labels 0 to " + std::to_string(c.labels.size() - 1) + " once each");
      c.labels[id] = std::string(label);
    }
  }
  int64_t positions = 512, pad = 1;
  std::string_view model_type;
  if (root["max_position_embeddings"].get(positions)) positions = 512;  // absent: BERT's
  if (root["pad_token_id"].get(pad)) pad = 1;
  const bool roberta = !root["model_type"].get(model_type) && model_type != "bert";
  c.max_len = std::min<int64_t>(c.kind == TaskKind::qa ? 384 : 512,
                                roberta ? positions - pad - 1 : positions);  // RoBERTa numbers from pad + 1
  c.pooling = Pooling::cls;
  return c;
}

std::vector<std::pair<std::string, std::string>> hf_label_fields(const TaskConfig& task) {
  const std::vector<std::string> labels =
      task.kind == TaskKind::qa ? std::vector<std::string>{"LABEL_0", "LABEL_1"} : task.labels;
  std::string id2label = "{", label2id = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    id2label += (i ? ", " : "") + json_string(std::to_string(i)) + ": " + json_string(labels[i]);
    label2id += (i ? ", " : "") + json_string(labels[i]) + ": " + std::to_string(i);
  }
  return {{"id2label", id2label + "}"}, {"label2id", label2id + "}"}};
}

}  // namespace kglm::train::tasks
