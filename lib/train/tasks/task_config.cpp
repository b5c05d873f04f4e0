#include "train/tasks/task_config.hpp"

#include <simdjson.h>

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
  j += "],\n  \"pooling\": " + json_string(pooling_name(c.pooling)) + ",\n  \"max_len\": " + std::to_string(c.max_len) +
       "\n}\n";
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
  return c;
}

std::vector<std::pair<std::string, std::string>> hf_label_fields(const std::vector<std::string>& labels) {
  std::string id2label = "{", label2id = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    id2label += (i ? ", " : "") + json_string(std::to_string(i)) + ": " + json_string(labels[i]);
    label2id += (i ? ", " : "") + json_string(labels[i]) + ": " + std::to_string(i);
  }
  return {{"id2label", id2label + "}"}, {"label2id", label2id + "}"}};
}

}  // namespace kglm::train::tasks
