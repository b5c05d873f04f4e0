#include "train/trainer_state.hpp"

#include <simdjson.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "nn/safetensors.hpp"

namespace kglm::train {

namespace {

constexpr const char* kFormat = "kglm-trainer-state";

std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

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
  field("lr", exact(s.optimizer.lr));
  field("beta1", exact(s.optimizer.beta1));
  field("beta2", exact(s.optimizer.beta2));
  field("eps", exact(s.optimizer.eps));
  field("weight_decay", exact(s.optimizer.weight_decay));
  field("max_grad_norm", exact(s.optimizer.max_grad_norm));
  field("warmup_steps", std::to_string(s.optimizer.warmup_steps));
  field("total_steps", std::to_string(s.optimizer.total_steps));
  field("mask_probability", exact(s.masking.probability));
  field("mask_fraction", exact(s.masking.mask_fraction));
  field("random_fraction", exact(s.masking.random_fraction));
  std::string text;
  append_json_string(text, s.objectives);
  field("objectives", text);
  field("kmlm_alpha", exact(s.kmlm_alpha));
  text.clear();
  append_json_string(text, s.train_layers);
  field("train_layers", text);
  field("lang_alpha", exact(s.lang_alpha));
  field("eval_fraction", exact(s.eval_fraction));
  std::string data;
  append_json_string(data, s.data);
  field("data", data);
  field("data_sequences", std::to_string(s.data_sequences));
  field("tokens_seen", std::to_string(s.tokens_seen));
  text.clear();
  append_json_string(text, s.precision);
  field("precision", text);
  field("loss_scale", exact(s.loss_scale));
  field("clean_steps", std::to_string(s.clean_steps));
  j += "  \"cursors\": [";
  for (size_t i = 0; i < s.cursors.size(); ++i)
    j += (i ? ", [" : "[") + std::to_string(s.cursors[i].epoch) + ", " + std::to_string(s.cursors[i].position) + "]";
  j += "]\n}\n";
  std::ofstream f(dir / "trainer_state.json", std::ios::binary);
  f << j;
  if (!f.flush()) throw Error((dir / "trainer_state.json").string() + ": cannot write");
  nn::write_safetensors(dir / "optimizer.safetensors",
                        {{"exp_avg", exp_avg.to(nn::Device::Cpu)}, {"exp_avg_sq", exp_avg_sq.to(nn::Device::Cpu)}},
                        {{"format", kFormat}, {"step", std::to_string(s.step)}});
}

TrainerState read_trainer_state(const std::filesystem::path& dir) {
  const std::string path = (dir / "trainer_state.json").string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open (is this a kglm pretrain checkpoint?)");
  std::stringstream ss;
  ss << in.rdbuf();
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  if (parser.parse(simdjson::padded_string(ss.str())).get(o) != simdjson::SUCCESS) throw Error(path + ": not JSON");
  std::string_view format;
  if (o["format"].get(format) != simdjson::SUCCESS || format != kFormat)
    throw Error(path + ": not a kglm trainer state");
  auto integer = [&](const char* key) {
    int64_t v;
    if (o[key].get(v) != simdjson::SUCCESS) throw Error(path + ": \"" + key + "\" missing or not an integer");
    return v;
  };
  auto real = [&](const char* key) {
    double v;
    if (o[key].get(v) != simdjson::SUCCESS) throw Error(path + ": \"" + key + "\" missing or not a number");
    return v;
  };
  TrainerState s;
  s.step = integer("step");
  uint64_t seed;
  if (o["seed"].get(seed) != simdjson::SUCCESS) throw Error(path + ": \"seed\" missing");
  s.seed = seed;
  s.batch = integer("batch");
  s.accumulate = integer("accumulate");
  s.optimizer.lr = real("lr");
  s.optimizer.beta1 = real("beta1");
  s.optimizer.beta2 = real("beta2");
  s.optimizer.eps = real("eps");
  s.optimizer.weight_decay = real("weight_decay");
  s.optimizer.max_grad_norm = real("max_grad_norm");
  s.optimizer.warmup_steps = integer("warmup_steps");
  s.optimizer.total_steps = integer("total_steps");
  s.masking.probability = real("mask_probability");
  s.masking.mask_fraction = real("mask_fraction");
  s.masking.random_fraction = real("random_fraction");
  // Fields added after version 1 came out: absent, they mean what those runs did.
  std::string_view text;
  if (o["objectives"].get(text) == simdjson::SUCCESS) s.objectives = std::string(text);
  if (o["kmlm_alpha"].error() == simdjson::SUCCESS) s.kmlm_alpha = real("kmlm_alpha");
  if (o["train_layers"].get(text) == simdjson::SUCCESS) s.train_layers = std::string(text);
  s.lang_alpha = real("lang_alpha");
  s.eval_fraction = real("eval_fraction");
  std::string_view data;
  if (o["data"].get(data) == simdjson::SUCCESS) s.data = std::string(data);
  s.data_sequences = static_cast<uint64_t>(integer("data_sequences"));
  s.tokens_seen = static_cast<uint64_t>(integer("tokens_seen"));
  if (o["precision"].get(text) == simdjson::SUCCESS) s.precision = std::string(text);
  if (s.precision != "fp32" && s.precision != "bf16" && s.precision != "fp16")
    throw Error(path + ": \"precision\" must be fp32, bf16 or fp16, not '" + s.precision + "'");
  if (o["loss_scale"].error() == simdjson::SUCCESS) s.loss_scale = real("loss_scale");
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
