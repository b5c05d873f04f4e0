#include "train/elmo_trainer_state.hpp"

#include "core/error.hpp"
#include "nn/config_json.hpp"

namespace kglm::train {

void write_elmo_trainer_state(const std::filesystem::path& dir, const ElmoTrainerState& s) {
  nn::ConfigJsonWriter j;
  j.text("format", kElmoTrainerStateFormat);
  j.field("version", 1);
  j.field("step", s.step);
  j.field("seed", static_cast<int64_t>(s.seed));  // the bits of the seed, read back as they were
  j.field("batch", s.batch);
  j.field("accumulate", s.accumulate);
  j.field("unroll_steps", s.unroll);
  j.field("negative_samples", s.negatives);
  j.field("softmax_vocabulary", s.vocabulary);
  j.number("lr", s.adagrad.lr);
  j.number("initial_accumulator", s.adagrad.initial_accumulator);
  j.number("clip_norm", s.adagrad.clip_norm);
  j.number("eval_fraction", s.eval_fraction);
  j.text("data", s.data);
  j.field("data_sequences", static_cast<int64_t>(s.data_sequences));
  j.field("tokens_seen", static_cast<int64_t>(s.tokens_seen));
  j.text("precision", s.precision);
  j.number("loss_scale", s.loss_scale);
  j.field("clean_steps", s.clean_steps);
  std::string cursors = "[";
  for (size_t i = 0; i < s.cursors.size(); ++i)
    cursors += (i ? ", [" : "[") + std::to_string(s.cursors[i].epoch) + ", " + std::to_string(s.cursors[i].index) +
               ", " + std::to_string(s.cursors[i].offset) + "]";
  j.field("cursors", cursors + "]");
  j.write(dir / "trainer_state.json");
}

ElmoTrainerState read_elmo_trainer_state(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "trainer_state.json";
  if (!std::filesystem::exists(path)) throw Error(path.string() + ": missing (is this a kglm pretrain checkpoint?)");
  const nn::ConfigJsonReader j(path);
  if (j.string("format") != std::string(kElmoTrainerStateFormat))
    j.fail("not the state of an ELMo run (pretrain --architecture elmo)");
  ElmoTrainerState s;
  int64_t seed = 0, sequences = 0, tokens = 0;
  j.integer("step", s.step, true);
  j.integer("seed", seed, true);
  s.seed = static_cast<uint64_t>(seed);
  j.integer("batch", s.batch, true);
  j.integer("accumulate", s.accumulate, true);
  j.integer("unroll_steps", s.unroll, true);
  j.integer("negative_samples", s.negatives, true);
  j.integer("softmax_vocabulary", s.vocabulary, true);
  j.real("lr", s.adagrad.lr);
  j.real("initial_accumulator", s.adagrad.initial_accumulator);
  j.real("clip_norm", s.adagrad.clip_norm);
  j.real("eval_fraction", s.eval_fraction);
  s.data = j.string("data").value_or("");
  j.integer("data_sequences", sequences, true);
  j.integer("tokens_seen", tokens, true);
  s.data_sequences = static_cast<uint64_t>(sequences);
  s.tokens_seen = static_cast<uint64_t>(tokens);
  s.precision = j.string("precision").value_or("fp32");
  if (s.precision != "fp32" && s.precision != "bf16" && s.precision != "fp16")
    j.fail("\"precision\" must be fp32, bf16 or fp16, not '" + s.precision + "'");
  j.real("loss_scale", s.loss_scale);
  j.integer("clean_steps", s.clean_steps);
  if (s.step < 0 || s.batch < 1 || s.accumulate < 1 || s.unroll < 1 || s.negatives < 0 || s.vocabulary < 1)
    j.fail("a step, batch, accumulation, unroll, sample or vocabulary size out of range");
  try {
    nn::check_size_limits("the ELMo trainer state", {{"batch", s.batch, int64_t(1) << 20},
                                                     {"accumulate", s.accumulate, int64_t(1) << 20},
                                                     {"unroll_steps", s.unroll, int64_t(1) << 16},
                                                     {"negative_samples", s.negatives, int64_t(1) << 24},
                                                     {"softmax_vocabulary", s.vocabulary, int64_t(1) << 24}});
  } catch (const Error& e) {
    j.fail(e.what());
  }
  if (!(s.adagrad.lr >= 0 && s.adagrad.lr < 1e30) || !(s.adagrad.initial_accumulator >= 0) ||
      !(s.adagrad.clip_norm >= 0) || !(s.eval_fraction >= 0 && s.eval_fraction <= 1) || !(s.loss_scale > 0) ||
      s.clean_steps < 0)
    j.fail("lr, initial_accumulator, clip_norm, eval_fraction, loss_scale or clean_steps out of range");
  for (const std::vector<int64_t>& c : j.integer_arrays("/cursors").value_or(std::vector<std::vector<int64_t>>{})) {
    if (c.size() != 3 || c[0] < 0 || c[1] < 0 || c[2] < 0) j.fail("a cursor is not [epoch, sentence, offset]");
    s.cursors.push_back({static_cast<uint64_t>(c[0]), static_cast<uint64_t>(c[1]), static_cast<uint64_t>(c[2])});
  }
  if (s.cursors.size() != static_cast<size_t>(s.batch))
    j.fail("it has " + std::to_string(s.cursors.size()) + " row cursors for a batch of " + std::to_string(s.batch));
  return s;
}

}  // namespace kglm::train
