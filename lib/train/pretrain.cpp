#include "train/pretrain.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/log.hpp"
#include "core/rng.hpp"
#include "core/stats.hpp"
#include "nn/checkpoint.hpp"
#include "nn/heads.hpp"
#include "nn/threads.hpp"
#include "sample/language_sampler.hpp"
#include "tok/tokenizer.hpp"
#include "train/batch_order.hpp"
#include "train/metrics_log.hpp"
#include "train/mlm_batch.hpp"
#include "train/token_dataset.hpp"
#include "train/trainer_state.hpp"

namespace kglm::train {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kTrainStream = 0x6d6c6d74;  // "mlmt"
constexpr uint32_t kEvalStream = 0x6d6c6d65;   // "mlme"

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Held-out sequences are chosen by a hash of their index alone, so every run on the same dataset
// (any seed, resumed or not) evaluates on the same ones.
bool held_out(uint32_t index, double fraction) {
  return fraction > 0 && Rng(0x6576616c, index, 0).uniform() < fraction;
}

nn::ModelConfig fresh_config(const PretrainOptions& o, const TokenDataset& data) {
  nn::Architecture arch;
  if (o.architecture == "xlm-roberta" || o.architecture == "roberta") {
    arch = nn::Architecture::XlmRoberta;
  } else if (o.architecture == "bert") {
    arch = nn::Architecture::Bert;
  } else if (o.architecture.empty()) {
    arch =
        data.tokenizer_kind() == tok::TokenizerKind::WordPiece ? nn::Architecture::Bert : nn::Architecture::XlmRoberta;
  } else {
    throw UsageError("--architecture must be xlm-roberta or bert, not '" + o.architecture + "'");
  }
  nn::ModelConfig c = nn::default_config(arch, data.vocab_size());
  c.layers = o.layers;
  c.hidden = o.hidden;
  c.heads = o.heads;
  c.intermediate = o.ffn;
  c.pad_token_id = data.special().pad;
  c.bos_token_id = data.special().bos;
  c.eos_token_id = data.special().eos;
  const int64_t offset = arch == nn::Architecture::XlmRoberta ? c.pad_token_id + 1 : 0;
  c.max_positions = o.max_positions > 0 ? o.max_positions : static_cast<int64_t>(data.max_len()) + offset;
  return c;
}

// The model being trained: parameters, encoder and MLM head.
struct MlmModel {
  nn::ModelConfig config;
  nn::ParameterStore params;
  std::optional<nn::Encoder> encoder;
  std::optional<nn::MlmHead> head;
  nn::Workspace scratch;  // the hidden states' gradient, whose shape follows the batch

  explicit MlmModel(const nn::ModelConfig& c) : config(c) {
    encoder.emplace(config, params);
    head.emplace(config, params, encoder->word_embeddings());
    params.allocate();
  }
};

struct EvalResult {
  double loss = 0, accuracy = 0;
  int64_t masked = 0;
};

EvalResult evaluate(MlmModel& model, const TokenDataset& data, const std::vector<uint32_t>& eval,
                    const WholeWordMasker& masker, int64_t batch, uint64_t seed) {
  EvalResult r;
  double loss = 0;
  int64_t correct = 0;
  for (size_t begin = 0, number = 0; begin < eval.size(); begin += static_cast<size_t>(batch), ++number) {
    size_t end = std::min(eval.size(), begin + static_cast<size_t>(batch));
    std::span<const uint32_t> seqs(eval.data() + begin, end - begin);
    MlmBatch b = make_mlm_batch(data, seqs, masker, seed, number, kEvalStream);
    if (b.masked() == 0) continue;
    const nn::Tensor& hidden = model.encoder->forward(b.encoder, nn::DropoutContext{});
    nn::CrossEntropyResult ce = model.head->forward(hidden, b.rows, b.targets, false, 1.0);
    loss += ce.loss_sum;
    correct += ce.correct;
    r.masked += ce.counted;
  }
  if (r.masked > 0) {
    r.loss = loss / static_cast<double>(r.masked);
    r.accuracy = static_cast<double>(correct) / static_cast<double>(r.masked);
  }
  return r;
}

void save_checkpoint(const fs::path& dir, MlmModel& model, nn::AdamW& optimizer, const TrainerState& state,
                     const tok::Tokenizer* tokenizer) {
  const char* arch_name =
      model.config.architecture == nn::Architecture::Bert ? "BertForMaskedLM" : "XLMRobertaForMaskedLM";
  nn::write_model_dir(dir, model.params, {{"format", "pt"}, {"producer", "kglm pretrain"}}, [&](const fs::path& tmp) {
    nn::write_model_config(tmp / "config.json", model.config, arch_name);
    if (tokenizer) tokenizer->save_hf_files(tmp);
    write_trainer_state(tmp, state, optimizer);
  });
}

void check_same(bool explicit_value_differs, const char* option) {
  if (explicit_value_differs)
    throw UsageError(std::string("--resume: ") + option +
                     " differs from the checkpoint's; a resumed run keeps the original settings");
}

}  // namespace

void run_pretrain(const PretrainOptions& o) {
  nn::set_compute_threads(static_cast<int>(o.threads));
  if (o.out.empty()) throw UsageError("--out CKPT_DIR is required");
  if (o.batch < 0 || o.accumulate < 0 || o.steps < 1) throw UsageError("--batch, --accumulate and --steps must be ≥ 1");

  TokenDataset data = TokenDataset::open(o.data);
  if (data.size() == 0) throw Error(o.data + ": the dataset has no sequences");

  // Settings: from the options, or from the checkpoint when resuming.
  TrainerState state;
  state.seed = o.seed;
  state.batch = o.batch > 0 ? o.batch : 32;
  state.accumulate = o.accumulate > 0 ? o.accumulate : 1;
  state.optimizer = o.optimizer;
  state.masking = o.masking;
  state.lang_alpha = o.lang_alpha;
  state.eval_fraction = o.eval_fraction;
  if (!o.resume.empty()) {
    state = read_trainer_state(o.resume);
    check_same(state.data_sequences != data.size(), "the dataset (sequence count)");
    check_same(o.batch > 0 && o.batch != state.batch, "--batch");
    check_same(o.accumulate > 0 && o.accumulate != state.accumulate, "--accumulate");
    check_same(o.seed_given && o.seed != state.seed, "--seed");
  }
  const int64_t saved_total = state.optimizer.total_steps;
  state.optimizer.total_steps = o.optimizer.total_steps > 0 ? o.optimizer.total_steps : o.steps;
  if (!o.resume.empty() && state.optimizer.total_steps != saved_total)
    log_warning("--resume: the learning-rate schedule now decays to step " +
                std::to_string(state.optimizer.total_steps) + " (the run that wrote the checkpoint used " +
                std::to_string(saved_total) + ")");
  state.data = std::filesystem::weakly_canonical(std::filesystem::absolute(o.data)).string();
  state.data_sequences = data.size();

  // Model.
  nn::ModelConfig config;
  std::string weights;
  if (!o.resume.empty()) {
    config = nn::read_model_config(fs::path(o.resume) / "config.json");
    weights = (fs::path(o.resume) / "model.safetensors").string();
  } else if (!o.init.empty()) {
    config = nn::read_model_config(fs::path(o.init) / "config.json");
    weights = (fs::path(o.init) / "model.safetensors").string();
    config.hidden_dropout = config.attention_dropout = o.dropout;
  } else {
    config = fresh_config(o, data);
    config.hidden_dropout = config.attention_dropout = o.dropout;
  }
  if (config.vocab_size != data.vocab_size())
    throw Error(o.data + ": the dataset's vocabulary (" + std::to_string(data.vocab_size()) +
                ") differs from the model's (" + std::to_string(config.vocab_size) + ")");
  MlmModel model(config);
  model.params.initialize(state.seed, config.initializer_range);
  if (!weights.empty()) {
    nn::LoadReport report = nn::load_parameters(nn::SafetensorsFile::open(weights), model.params, o.resume.empty());
    if (!report.missing.empty())
      log_warning(weights + ": " + std::to_string(report.missing.size()) +
                  " parameters not in the file start random (first: " + report.missing.front() + ")");
    if (!report.unexpected.empty())
      log_warning(weights + ": " + std::to_string(report.unexpected.size()) +
                  " tensors ignored (first: " + report.unexpected.front() + ")");
  }
  nn::AdamW optimizer(model.params, state.optimizer);
  if (!o.resume.empty()) restore_optimizer(o.resume, optimizer, state.step);

  // Tokenizer files for the checkpoints.
  std::unique_ptr<tok::Tokenizer> tokenizer;
  std::string tokenizer_path = !o.tokenizer.empty() ? o.tokenizer
                               : !o.resume.empty()  ? o.resume
                               : !o.init.empty()    ? o.init
                                                    : data.tokenizer_source();
  // A checkpoint without its tokenizer cannot be used by anyone: a missing one is an error.
  try {
    tokenizer = tok::load_tokenizer(tokenizer_path);
  } catch (const Error& e) {
    if (!o.tokenizer.empty() || !o.resume.empty() || !o.init.empty()) throw;
    throw Error(std::string(e.what()) + " (the tokenizer " + o.data +
                " was prepared with; give --tokenizer where it is now)");
  }
  if (tokenizer->vocab_size() != data.vocab_size())
    throw Error(tokenizer_path + ": the tokenizer's vocabulary differs from the dataset's");
  if (!data.tokenizer_checksum().empty() && tok::vocabulary_checksum(*tokenizer) != data.tokenizer_checksum())
    throw Error(tokenizer_path + ": not the tokenizer " + o.data + " was prepared with (vocabulary checksum " +
                tok::vocabulary_checksum(*tokenizer) + ", the dataset's " + data.tokenizer_checksum() + ")");

  // Data: held-out sequences, then the training order.
  std::vector<uint32_t> eval;
  std::vector<std::vector<uint32_t>> groups(state.lang_alpha >= 0 ? data.languages().size() : 1);
  for (uint32_t i = 0; i < data.size(); ++i) {
    if (static_cast<int64_t>(eval.size()) < o.eval_max && held_out(i, state.eval_fraction)) {
      eval.push_back(i);
    } else {
      groups[state.lang_alpha >= 0 ? data.sequence(i).lang : 0].push_back(i);
    }
  }
  std::optional<sample::LanguageSampler> sampler;
  if (state.lang_alpha >= 0) {
    std::vector<double> sizes;
    for (const auto& g : groups) sizes.push_back(static_cast<double>(g.size()));
    sampler.emplace(data.languages(), sizes, state.lang_alpha, state.seed);
  }
  BatchOrder order(groups, sampler, state.seed);
  if (!o.resume.empty()) order.restore(state.cursors);
  WholeWordMasker masker(state.masking, data.special(), data.vocab_size());

  std::ofstream log;
  if (!o.log.empty()) {
    if (!o.resume.empty()) {
      if (uint64_t dropped = truncate_metrics_log(o.log, state.step); dropped > 0)
        log_info(o.log + ": dropped " + std::to_string(dropped) + " lines after step " + std::to_string(state.step) +
                 ", the checkpoint's");
    }
    log.open(o.log, o.resume.empty() ? std::ios::trunc : std::ios::app);
    if (!log) throw Error(o.log + ": cannot open the metrics log");
  }
  if (!o.quiet)
    log_info(config.model_type() + " " + std::to_string(config.layers) + "×" + std::to_string(config.hidden) + ", " +
             std::to_string(model.params.count()) + " parameters; " + std::to_string(data.size() - eval.size()) +
             " training and " + std::to_string(eval.size()) + " held-out sequences; steps " +
             std::to_string(state.step) + " → " + std::to_string(o.steps));

  auto run_eval = [&](int64_t step) {
    if (eval.empty()) return;
    EvalResult r = evaluate(model, data, eval, masker, state.batch, state.seed);
    std::string line = "{\"step\": " + std::to_string(step) + ", \"eval_loss\": " + number(r.loss) +
                       ", \"eval_ppl\": " + number(std::exp(r.loss)) + ", \"eval_accuracy\": " + number(r.accuracy) +
                       ", \"eval_masked\": " + std::to_string(r.masked) + "}\n";
    if (log.is_open()) log << line << std::flush;
    if (!o.quiet) log_info("step " + std::to_string(step) + " held-out perplexity " + number(std::exp(r.loss)));
  };
  auto save = [&]() {
    state.cursors = order.cursors();
    save_checkpoint(o.out, model, optimizer, state, tokenizer.get());
  };

  const Clock::time_point start = Clock::now();
  std::vector<uint32_t> seqs;
  std::vector<MlmBatch> micro(static_cast<size_t>(state.accumulate));
  double last_loss = NAN;
  int64_t steps_run = 0;
  for (; state.step < o.steps; ++state.step, ++steps_run) {
    const Clock::time_point step_start = Clock::now();
    int64_t masked = 0, tokens = 0;
    for (int64_t k = 0; k < state.accumulate; ++k) {
      const uint64_t number = static_cast<uint64_t>(state.step * state.accumulate + k);
      seqs.clear();
      order.next(number, static_cast<size_t>(state.batch), seqs);
      micro[static_cast<size_t>(k)] = make_mlm_batch(data, seqs, masker, state.seed, number, kTrainStream);
      masked += micro[static_cast<size_t>(k)].masked();
      tokens += micro[static_cast<size_t>(k)].tokens;
    }
    // The loss is the mean over every masked token of the accumulated micro-batches.
    const double scale = masked > 0 ? 1.0 / static_cast<double>(masked) : 0.0;
    double loss_sum = 0;
    for (int64_t k = 0; k < state.accumulate; ++k) {
      MlmBatch& b = micro[static_cast<size_t>(k)];
      if (b.masked() == 0) continue;
      nn::DropoutContext dropout{true, state.seed, static_cast<uint64_t>(state.step * state.accumulate + k)};
      const nn::Tensor& hidden = model.encoder->forward(b.encoder, dropout);
      loss_sum += model.head->forward(hidden, b.rows, b.targets, true, scale).loss_sum;
      model.scratch.begin();
      nn::Tensor dhidden = model.scratch.buffer(hidden.shape());
      dhidden.zero();
      model.head->backward(dhidden);
      model.encoder->backward(dhidden);
    }
    nn::StepReport report = optimizer.step();
    model.params.zero_grads();
    state.tokens_seen += static_cast<uint64_t>(tokens);
    last_loss = loss_sum * scale;
    const double step_seconds = seconds_since(step_start);
    const int64_t step = state.step + 1;
    if (log.is_open())
      log << "{\"step\": " << step << ", \"loss\": " << number(last_loss) << ", \"lr\": " << number(report.lr)
          << ", \"grad_norm\": " << number(report.grad_norm) << ", \"masked\": " << masked << ", \"tokens\": " << tokens
          << ", \"tokens_per_s\": " << number(tokens / step_seconds)
          << ", \"elapsed_s\": " << number(seconds_since(start)) << "}\n"
          << std::flush;
    if (!o.quiet && o.log_every > 0 && (step % o.log_every == 0 || step == o.steps))
      log_info("step " + std::to_string(step) + "/" + std::to_string(o.steps) + " loss " + number(last_loss) + " lr " +
               number(report.lr) + " " + number(tokens / step_seconds) + " tokens/s");
    if (o.eval_every > 0 && step % o.eval_every == 0) run_eval(step);
    if (o.save_every > 0 && step % o.save_every == 0 && step != o.steps) {
      state.step = step;  // the checkpoint is taken after this step
      save();
      state.step = step - 1;
    }
  }
  if (o.eval_every == 0 || state.step % o.eval_every != 0) run_eval(state.step);
  save();

  if (!o.stats_file.empty() || !o.quiet) {
    Stats stats;
    stats.set("steps", state.step);
    stats.set("steps_run", steps_run);
    stats.set("tokens_seen", static_cast<int64_t>(state.tokens_seen));
    stats.set("parameters", model.params.count());
    stats.set("train_sequences", static_cast<int64_t>(data.size() - eval.size()));
    stats.set("eval_sequences", static_cast<int64_t>(eval.size()));
    stats.set("milliseconds", static_cast<int64_t>(seconds_since(start) * 1000));
    if (!o.stats_file.empty()) stats.write_json(o.stats_file);
    if (!o.quiet) stats.print();
  }
}

}  // namespace kglm::train
