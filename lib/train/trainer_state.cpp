#include "train/trainer_state.hpp"

#include <simdjson.h>
#include <cerrno>
#include <cstring>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/output_stream.hpp"
#include "nn/safetensors.hpp"

namespace kglm::train {

namespace {

constexpr const char* kFormat = "kglm-trainer-state";

}  // namespace

void write_trainer_state(const std::filesystem::path& dir, const TrainerState& s, const nn::Tensor& exp_avg,
                         const nn::Tensor& exp_avg_sq) {
  std::string j = "{\n  \"format\": \"" + std::string(kFormat) + "\",\n  \"version\": 1,\n";
  auto field = [&](const char* key, const std::string& value) {
    j += "  \"" + std::string(key) + "\": " + value + ",\n";
  };
  field("step", std::to_string(s.step));
  field("seed", std::to_string(s.seed));
  field("batch", std::to_string(s.batch));
  field("accumulate", std::to_string(s.accumulate));
  field("lr", json_number(s.optimizer.lr, 17));
  field("beta1", json_number(s.optimizer.beta1, 17));
  field("beta2", json_number(s.optimizer.beta2, 17));
  field("eps", json_number(s.optimizer.eps, 17));
  field("weight_decay", json_number(s.optimizer.weight_decay, 17));
  field("max_grad_norm", json_number(s.optimizer.max_grad_norm, 17));
  field("warmup_steps", std::to_string(s.optimizer.warmup_steps));
  field("total_steps", std::to_string(s.optimizer.total_steps));
  field("mask_probability", json_number(s.masking.probability, 17));
  field("mask_fraction", json_number(s.masking.mask_fraction, 17));
  field("random_fraction", json_number(s.masking.random_fraction, 17));
  std::string text;
  append_json_string(text, s.objectives);
  field("objectives", text);
  field("kmlm_alpha", json_number(s.kmlm_alpha, 17));
  text.clear();
  append_json_string(text, s.train_layers);
  field("train_layers", text);
  field("lang_alpha", json_number(s.lang_alpha, 17));
  field("eval_fraction", json_number(s.eval_fraction, 17));
  std::string data;
  append_json_string(data, s.data);
  field("data", data);
  field("data_sequences", std::to_string(s.data_sequences));
  field("tokens_seen", std::to_string(s.tokens_seen));
  text.clear();
  append_json_string(text, s.precision);
  field("precision", text);
  field("loss_scale", json_number(s.loss_scale, 17));
  field("clean_steps", std::to_string(s.clean_steps));
  j += "  \"cursors\": [";
  for (size_t i = 0; i < s.cursors.size(); ++i)
    j += (i ? ", [" : "[") + std::to_string(s.cursors[i].epoch) + ", " + std::to_string(s.cursors[i].position) + "]";
  j += "]\n}\n";
  write_file_atomically((dir / "trainer_state.json").string(), j);
  nn::write_safetensors(dir / "optimizer.safetensors",
                        {{"exp_avg", exp_avg.to(nn::Device::Cpu)}, {"exp_avg_sq", exp_avg_sq.to(nn::Device::Cpu)}},
                        {{"format", kFormat}, {"step", std::to_string(s.step)}});
}

TrainerState read_trainer_state(const std::filesystem::path& dir) {
  const std::string path = (dir / "trainer_state.json").string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open (is this a kglm pretrain checkpoint?): " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  if (parser.parse(simdjson::padded_string(ss.str())).get(o) != simdjson::SUCCESS) throw Error(path + ": not JSON");
  std::string_view format;
  if (o["format"].get(format) != simdjson::SUCCESS || format != kFormat)
    throw Error(path + ": not a kglm trainer state");
  // Every number within what a run can have written: a damaged value fails here, naming the field,
  // not later (a "batch" of 0 made --resume evaluate for ever).
  auto integer = [&](const char* key, int64_t low = 0, int64_t high = INT64_MAX) {
    int64_t v;
    if (o[key].get(v) != simdjson::SUCCESS) throw Error(path + ": \"" + key + "\" missing or not an integer");
    if (v < low || v > high)
      throw Error(path + ": \"" + key + "\" is " + std::to_string(v) + ", outside " + std::to_string(low) + " to " +
                  std::to_string(high) + " (a damaged file?)");
    return v;
  };
  auto real = [&](const char* key, double low, double high) {
    double v;
    if (o[key].get(v) != simdjson::SUCCESS) throw Error(path + ": \"" + key + "\" missing or not a number");
    if (!(v >= low && v <= high))
      throw Error(path + ": \"" + key + "\" is " + json_number(v) + ", outside " + json_number(low) + " to " +
                  json_number(high) + " (a damaged file?)");
    return v;
  };
  constexpr double kHuge = 1e30;
  TrainerState s;
  s.step = integer("step");
  uint64_t seed;
  if (o["seed"].get(seed) != simdjson::SUCCESS) throw Error(path + ": \"seed\" missing");
  s.seed = seed;
  s.batch = integer("batch", 1, int64_t(1) << 30);
  s.accumulate = integer("accumulate", 1, int64_t(1) << 30);
  s.optimizer.lr = real("lr", 0, kHuge);
  s.optimizer.beta1 = real("beta1", 0, 1);
  s.optimizer.beta2 = real("beta2", 0, 1);
  s.optimizer.eps = real("eps", 0, kHuge);
  s.optimizer.weight_decay = real("weight_decay", 0, kHuge);
  s.optimizer.max_grad_norm = real("max_grad_norm", 0, kHuge);
  s.optimizer.warmup_steps = integer("warmup_steps");
  s.optimizer.total_steps = integer("total_steps");
  s.masking.probability = real("mask_probability", 0, 1);
  s.masking.mask_fraction = real("mask_fraction", 0, 1);
  s.masking.random_fraction = real("random_fraction", 0, 1);
  // Fields added after version 1 came out: absent, they mean what those runs did.
  std::string_view text;
  if (o["objectives"].get(text) == simdjson::SUCCESS) s.objectives = std::string(text);
  if (o["kmlm_alpha"].error() == simdjson::SUCCESS) s.kmlm_alpha = real("kmlm_alpha", 0, kHuge);
  if (o["train_layers"].get(text) == simdjson::SUCCESS) s.train_layers = std::string(text);
  s.lang_alpha = real("lang_alpha", -kHuge, kHuge);
  s.eval_fraction = real("eval_fraction", 0, 1);
  std::string_view data;
  if (o["data"].get(data) == simdjson::SUCCESS) s.data = std::string(data);
  s.data_sequences = static_cast<uint64_t>(integer("data_sequences"));
  s.tokens_seen = static_cast<uint64_t>(integer("tokens_seen"));
  if (o["precision"].get(text) == simdjson::SUCCESS) s.precision = std::string(text);
  if (s.precision != "fp32" && s.precision != "bf16" && s.precision != "fp16")
    throw Error(path + ": \"precision\" must be fp32, bf16 or fp16, not '" + s.precision + "'");
  if (o["loss_scale"].error() == simdjson::SUCCESS) s.loss_scale = real("loss_scale", 0, kHuge);
  if (o["clean_steps"].error() == simdjson::SUCCESS) s.clean_steps = integer("clean_steps");
  simdjson::dom::array cursors;
  if (o["cursors"].get(cursors) != simdjson::SUCCESS) throw Error(path + ": \"cursors\" missing");
  for (simdjson::dom::element c : cursors) {
    simdjson::dom::array pair;
    uint64_t epoch, position;
    if (c.get(pair) != simdjson::SUCCESS || pair.size() != 2 || pair.at(0).get(epoch) != simdjson::SUCCESS ||
        pair.at(1).get(position) != simdjson::SUCCESS)
      throw Error(path + ": a cursor is not [epoch, position]");
    s.cursors.push_back({epoch, position});
  }
  return s;
}

void restore_optimizer(const std::filesystem::path& dir, nn::AdamW& optimizer, int64_t steps_done) {
  auto file = nn::SafetensorsFile::open(dir / "optimizer.safetensors");
  nn::Tensor m = file.read("exp_avg"), v = file.read("exp_avg_sq");
  const nn::Shape expected{optimizer.full_state_size()};
  if (m.shape() != expected || v.shape() != expected)
    throw Error(file.source() + ": the optimizer state does not match the model's " +
                std::to_string(optimizer.full_state_size()) + " parameters");
  optimizer.restore(m, v, steps_done);
}

}  // namespace kglm::train
