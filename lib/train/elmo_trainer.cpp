#include "train/elmo_trainer.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/log.hpp"
#include "core/output_stream.hpp"
#include "core/rng.hpp"
#include "core/temporaries.hpp"
#include "nn/convert.hpp"
#include "nn/cuda/runtime.hpp"
#include "nn/elmo_characters.hpp"
#include "nn/elmo_checkpoint.hpp"
#include "nn/safetensors.hpp"
#include "tok/word_vocabulary_tokenizer.hpp"
#include "train/metrics_log.hpp"
#include "train/token_shards.hpp"

namespace kglm::train {

namespace {

namespace fs = std::filesystem;

constexpr const char* kStateFile = "elmo_state.safetensors";
// AllenNLP's name for the weights; the file that marks a directory as an ELMo model directory.
constexpr const char* kElmoWeightsFile = "weights.hdf5";
constexpr int32_t kUnknownWord = 2;  // vocab.txt: <S>, </S>, <UNK>, then the words by frequency

std::string state_name(int direction, size_t layer, const char* which) {
  return "state/" + std::to_string(direction) + "/" + std::to_string(layer) + "/" + which;
}

// The Rng record of a window's negatives: one draw per direction and micro-batch, the same on every
// rank (a window's rows share them, as bilm-tf's batch does).
uint64_t negatives_record(uint64_t batch_number, int direction) { return batch_number * 2 + direction; }

}  // namespace

ElmoTrainer::ElmoTrainer(const PretrainOptions& options, std::shared_ptr<dist::Communicator> comm)
    : options_(on_usable_device(options)),
      comm_(comm ? std::move(comm) : dist::make_communicator(options_.device)),
      data_paths_(dataset_paths(options_.data)),
      data_(TokenDataset::open(data_paths_, {cache_bytes(options_.cache_mb)})) {
  if (data_.size() == 0) throw Error(options_.data + ": the dataset has no sequences");
  check_directory_output(options_.out, "model directory", kElmoWeightsFile);  // before any work
  if (comm_->rank() == 0) output_lock_ = OutputLock(options_.out, "model directory");
  if (data_.tokenizer_kind() != tok::TokenizerKind::Words)
    throw UsageError(options_.data + ": ELMo trains on a word-level dataset (pretrain prepare --words --vocab " +
                     "vocab.txt), not a " + tok::tokenizer_kind_name(data_.tokenizer_kind()) + " one");
  settle_settings();
  if (state_.batch % comm_->size() != 0)
    throw UsageError("--batch " + std::to_string(state_.batch) + " is the global batch of windows: it must be a " +
                     "multiple of the " + std::to_string(comm_->size()) + " ranks");
  rows_ = static_cast<size_t>(state_.batch / comm_->size());
  first_row_ = rows_ * static_cast<size_t>(comm_->rank());
  load_words();
  build_model();
  split_data();
  open_log();
  if (verbose())
    log_info("ELMo " + std::to_string(elmo_.layers) + "×" + std::to_string(elmo_.cell) + "→" +
             std::to_string(elmo_.projection) + ", " + std::to_string(params_->parameter_count()) +
             " parameters; softmax over " + std::to_string(state_.vocabulary) + " of " +
             std::to_string(data_.vocab_size()) + " words, " +
             (state_.negatives > 0 ? std::to_string(state_.negatives) + " negatives per window"
                                   : std::string("full softmax in training")) +
             "; " + std::to_string(data_.size() - eval_.size()) + " training and " + std::to_string(eval_.size()) +
             " held-out sentences; " + std::to_string(state_.batch) + " windows of " + std::to_string(state_.unroll) +
             " tokens; steps " + std::to_string(state_.step) + " → " + std::to_string(options_.steps) +
             (options_.device == nn::Device::Cuda ? "; on " + nn::cuda::device_description() : "") +
             (state_.precision != "fp32" ? " in " + state_.precision : "") +
             (comm_->size() > 1 ? "; " + std::to_string(comm_->size()) + " ranks (" + comm_->backend() + ")" : ""));
  start_ = TrainClock::now();
}

ElmoTrainer::~ElmoTrainer() = default;

void ElmoTrainer::settle_settings() {
  const PretrainOptions& o = options_;
  if (!o.init.empty())
    throw UsageError("--init starts from a Hugging Face encoder; an ELMo run continues with --resume");
  if (o.lang_alpha >= 0)
    throw UsageError(
        "--lang-alpha samples languages per batch for the masked LM; sample ELMo's corpora beforehand "
        "(sample-lang), as the paper does");
  if (o.zero != 0) throw UsageError("--zero shards AdamW's moments; ELMo trains with Adagrad (no --zero)");
  if (!o.resume.empty()) {
    elmo_ = nn::read_elmo_options(fs::path(o.resume) / "options.json");
    state_ = read_elmo_trainer_state(o.resume);
    check_same(state_.data_sequences != data_.size(), "the dataset (sequence count)");
    check_same(o.batch > 0 && o.batch != state_.batch, "--batch");
    check_same(o.accumulate > 0 && o.accumulate != state_.accumulate, "--accumulate");
    check_same(o.seed_given && o.seed != state_.seed, "--seed");
    check_same(!o.precision.empty() && o.precision != state_.precision, "--precision");
    if (!o.elmo_options.empty()) log_warning("--resume: the checkpoint's options.json is used, not " + o.elmo_options);
    if (state_.vocabulary > data_.vocab_size())
      throw Error(o.resume + ": its softmax has " + std::to_string(state_.vocabulary) + " words, the dataset " +
                  std::to_string(data_.vocab_size()));
  } else {
    if (o.elmo_options.empty())
      throw UsageError(
          "--architecture elmo needs --options options.json (data/elmo/options-small.json, "
          "options-paper.json)");
    elmo_ = nn::read_elmo_options(o.elmo_options);
    state_.seed = o.seed;
    state_.batch = o.batch > 0 ? o.batch : elmo_.batch_size;
    state_.accumulate = o.accumulate > 0 ? o.accumulate : 1;
    state_.unroll = elmo_.unroll_steps;
    state_.vocabulary =
        elmo_.vocabulary > 0 ? std::min<int64_t>(elmo_.vocabulary, data_.vocab_size()) : data_.vocab_size();
    if (elmo_.vocabulary > data_.vocab_size() && comm_->rank() == 0)
      log_warning(o.elmo_options + ": n_tokens_vocab is " + std::to_string(elmo_.vocabulary) + ", the dataset has " +
                  std::to_string(data_.vocab_size()) + " words: the softmax covers those");
    // Sampling as many classes as the softmax has is the full softmax (TensorFlow refuses it).
    state_.negatives = elmo_.negative_samples < state_.vocabulary ? elmo_.negative_samples : 0;
    state_.adagrad.lr = o.optimizer.lr;
    state_.adagrad.clip_norm = o.optimizer.max_grad_norm >= 0 ? o.optimizer.max_grad_norm : elmo_.clip_norm;
    state_.eval_fraction = o.eval_fraction;
    state_.precision = o.precision.empty() ? "fp32" : o.precision;
  }
  elmo_.batch_size = state_.batch;
  elmo_.vocabulary = state_.vocabulary;
  elmo_.negative_samples = state_.negatives;
  elmo_.clip_norm = state_.adagrad.clip_norm;
  state_.data.clear();
  for (const std::string& path : data_paths_)
    state_.data += (state_.data.empty() ? "" : ",") + fs::weakly_canonical(fs::absolute(path)).string();
  state_.data_sequences = data_.size();
}

// The words behind the dataset's ids: the characters the model reads. A checkpoint's vocab.txt has
// only the softmax's words, so they come from the vocabulary the dataset was prepared with.
void ElmoTrainer::load_words() {
  const std::string path = !options_.tokenizer.empty() ? options_.tokenizer : data_.tokenizer_source();
  std::unique_ptr<tok::WordVocabularyTokenizer> vocabulary;
  try {
    vocabulary = std::make_unique<tok::WordVocabularyTokenizer>(path, true);
  } catch (const Error& e) {
    if (!options_.tokenizer.empty()) throw;
    throw Error(std::string(e.what()) + " (the vocabulary " + options_.data +
                " was prepared with; give --tokenizer where it is now)");
  }
  if (vocabulary->vocab_size() != data_.vocab_size())
    throw Error(path + ": the vocabulary has " + std::to_string(vocabulary->vocab_size()) + " words, the dataset " +
                std::to_string(data_.vocab_size()));
  const std::string checksum = tok::vocabulary_checksum(*vocabulary);
  if (!data_.tokenizer_checksum().empty() && checksum != data_.tokenizer_checksum())
    throw Error(path + ": not the vocabulary " + options_.data + " was prepared with (checksum " + checksum +
                ", the dataset's " + data_.tokenizer_checksum() + ")");
  words_.resize(static_cast<size_t>(vocabulary->vocab_size()));
  for (int32_t id = 0; id < vocabulary->vocab_size(); ++id) words_[static_cast<size_t>(id)] = vocabulary->piece(id);
}

void ElmoTrainer::build_model() {
  const PretrainOptions& o = options_;
  params_ = std::make_unique<nn::ParameterStore>(o.device, compute_dtype(state_.precision, o.device));
  model_ = std::make_unique<nn::ElmoModel>(elmo_, state_.vocabulary, *params_);
  params_->allocate();
  model_->initialize(state_.seed);
  optimizer_ = std::make_unique<nn::Adagrad>(*params_, state_.adagrad);
  scaler_ = nn::LossScaler(state_.precision == "fp16");
  model_->reset_state(static_cast<int64_t>(rows_));
  if (o.resume.empty()) return;
  nn::read_bilm_weights(fs::path(o.resume) / kElmoWeightsFile, elmo_, false, *params_);
  const nn::SafetensorsFile file = nn::SafetensorsFile::open(fs::path(o.resume) / kStateFile);
  for (const char* name : {"softmax/W", "softmax/b"}) {
    nn::Parameter& p = params_->get(name);
    const nn::Tensor saved = file.read_f32(name);
    if (saved.shape() != p.shape) throw Error(file.source() + ": " + name + " does not match the model");
    p.value.copy_from(saved);
  }
  params_->refresh_compute();
  optimizer_->restore(file.read_f32("adagrad_accumulators"), state_.step);
  scaler_.restore(state_.loss_scale, state_.clean_steps);
  // This rank's rows of the carried state.
  std::vector<nn::Tensor> state = model_->carried_state();
  size_t i = 0;
  for (int d = 0; d < (elmo_.bidirectional ? 2 : 1); ++d)
    for (size_t l = 0; l < static_cast<size_t>(elmo_.layers); ++l)
      for (const char* which : {"h", "c"}) {
        nn::Tensor& t = state[i++];
        const nn::Tensor all = file.read_f32(state_name(d, l, which));
        if (all.shape() != nn::Shape{state_.batch, t.dim(1)})
          throw Error(file.source() + ": " + state_name(d, l, which) + " does not match the run");
        nn::Tensor mine = all.rows(static_cast<int64_t>(first_row_), static_cast<int64_t>(first_row_ + rows_));
        if (t.dtype() != nn::DType::F32) mine = nn::from_f32(mine.clone(), t.dtype());
        t = mine.to(o.device);
      }
  model_->restore_state(state);
}

void ElmoTrainer::split_data() {
  std::vector<uint32_t> training;
  for (uint32_t i = 0; i < data_.size(); ++i) {
    if (static_cast<int64_t>(eval_.size()) < options_.eval_max && held_out(i, state_.eval_fraction)) {
      eval_.push_back(i);
    } else {
      training.push_back(i);
    }
  }
  windows_ = std::make_unique<ElmoWindows>(data_, std::move(training), static_cast<size_t>(state_.batch), state_.seed);
  for (uint32_t i : eval_) {  // read once: every evaluation runs on the same streams
    const Sequence s = data_.sequence(i);
    eval_streams_[0].insert(eval_streams_[0].end(), s.ids.begin(), s.ids.end());
    eval_streams_[1].insert(eval_streams_[1].end(), s.ids.rbegin(), s.ids.rend());
  }
  if (!options_.resume.empty()) windows_->restore(state_.cursors);
}

void ElmoTrainer::open_log() {
  if (comm_->rank() == 0) log_.open(options_.log, options_.tensorboard, !options_.resume.empty(), state_.step);
}

void ElmoTrainer::fill_stream(const int32_t* ids, int64_t windows, int64_t steps, size_t width,
                              nn::ElmoStream& out) const {
  const int64_t chars = elmo_.max_characters;
  nn::Tensor characters = nn::Tensor::empty({steps * windows, chars}, nn::DType::I32);
  nn::Tensor targets = nn::Tensor::empty({steps * windows}, nn::DType::I32);
  for (int64_t t = 0; t < steps; ++t)
    for (int64_t b = 0; b < windows; ++b) {
      const int64_t row = t * windows + b;
      const int32_t* at = ids + static_cast<size_t>(b) * width + static_cast<size_t>(t);
      nn::elmo_character_ids(words_[static_cast<size_t>(at[0])], chars, 261, characters.data<int32_t>() + row * chars);
      targets.data<int32_t>()[row] = at[1] < state_.vocabulary ? at[1] : kUnknownWord;
    }
  out.characters = characters.to(options_.device);
  out.targets = targets.to(options_.device);
}

ElmoStepResult ElmoTrainer::step() {
  const TrainClock::time_point step_start = TrainClock::now();
  ElmoStepResult r;
  r.loss_scale = scaler_.scale();
  const auto windows = static_cast<int64_t>(rows_), steps = state_.unroll;
  // d(unroll · ½(mean_f + mean_b))/dθ over the step's batch · accumulate · unroll predictions per
  // direction, as gradients of each direction's summed loss.
  const double grad_scale = r.loss_scale * 0.5 / static_cast<double>(state_.batch * state_.accumulate);
  std::array<double, 2> sums{};
  ElmoWindowTokens tokens;
  for (int64_t k = 0; k < state_.accumulate; ++k) {
    const auto batch_number = static_cast<uint64_t>(state_.step * state_.accumulate + k);
    windows_->peek(static_cast<size_t>(steps), first_row_, first_row_ + rows_, tokens);
    windows_->advance(static_cast<size_t>(steps));
    nn::ElmoBatch batch;
    batch.windows = windows, batch.steps = steps;
    fill_stream(tokens.forward.data(), windows, steps, tokens.steps + 1, batch.streams[0]);
    fill_stream(tokens.backward.data(), windows, steps, tokens.steps + 1, batch.streams[1]);
    std::array<nn::SampledClasses, 2> samples;
    std::array<const nn::SampledClasses*, 2> sampled{nullptr, nullptr};
    if (state_.negatives > 0)
      for (int d = 0; d < 2; ++d) {
        Rng rng(state_.seed, negatives_record(batch_number, d), 0x6e656773u);  // "negs"
        samples[d] = nn::sample_log_uniform(state_.negatives, state_.vocabulary, rng, options_.device);
        sampled[d] = &samples[d];
      }
    const nn::DropoutContext dropout{true, state_.seed, batch_number, first_row_, rows_};
    const nn::ElmoLoss loss = model_->forward(batch, dropout, sampled, grad_scale);
    model_->backward();
    for (int d = 0; d < 2; ++d) sums[d] += loss.directions[d].loss_sum;
  }
  const TrainClock::time_point comm_start = TrainClock::now();
  if (comm_->size() > 1) comm_->all_reduce(params_->grads(), dist::ReduceOp::Sum);
  comm_seconds_ += seconds_since(comm_start);
  r.report = optimizer_->step(r.loss_scale);
  params_->zero_grads();
  std::array<int64_t, 1> stop{requested_stop() != 0};
  comm_->all_reduce(sums, dist::ReduceOp::Sum);
  comm_->all_reduce(stop, dist::ReduceOp::Sum);
  r.stop_requested = stop[0] > 0;
  if (scaler_.update(r.report.skipped) && verbose())
    log_info("step " + std::to_string(state_.step + 1) + ": " +
             (r.report.skipped ? "gradients overflowed in fp16, step skipped; " : "") + "loss scale " +
             json_number(r.loss_scale, 6) + " → " + json_number(scaler_.scale(), 6));
  r.tokens = state_.batch * state_.accumulate * steps;
  for (int d = 0; d < 2; ++d) r.directions[d] = sums[d] / static_cast<double>(r.tokens);
  r.loss = 0.5 * (r.directions[0] + r.directions[1]);
  state_.tokens_seen += static_cast<uint64_t>(r.tokens);
  r.seconds = seconds_since(step_start);
  r.step = ++state_.step;
  ++steps_run_;
  if (log_.is_open()) {
    std::ostringstream line;
    line << "{\"step\": " << r.step << ", \"loss\": " << json_number(r.loss)
         << ", \"loss_forward\": " << json_number(r.directions[0])
         << ", \"loss_backward\": " << json_number(r.directions[1]) << ", \"lr\": " << json_number(r.report.lr)
         << ", \"grad_norm\": " << json_number(r.report.grad_norm)
         << (scaler_.dynamic() ? ", \"loss_scale\": " + json_number(r.loss_scale) : std::string())
         << (r.report.skipped ? ", \"skipped\": true" : "") << ", \"tokens\": " << r.tokens
         << ", \"tokens_per_s\": " << json_number(static_cast<double>(r.tokens) / r.seconds)
         << ", \"elapsed_s\": " << json_number(seconds_since(start_)) << "}";
    log_.write(line.str());
  }
  if (verbose() && options_.log_every > 0 && (r.step % options_.log_every == 0 || r.step == options_.steps))
    log_info("step " + std::to_string(r.step) + "/" + std::to_string(options_.steps) + " loss " +
             json_number(r.loss, 6) + " (sampled perplexity " + json_number(std::exp(r.loss), 6) + ") " +
             json_number(static_cast<double>(r.tokens) / r.seconds, 6) + " tokens/s");
  return r;
}

// The held-out sentences end to end (and each reversed, for the backward model), cut into one
// stream per row, run `unroll` tokens at a time from a zero state with the full softmax.
ElmoEvalResult ElmoTrainer::evaluate() {
  ElmoEvalResult r;
  if (eval_.empty()) return r;
  const std::vector<int32_t>& forward = eval_streams_[0];
  const std::vector<int32_t>& backward = eval_streams_[1];
  const auto predictions = static_cast<int64_t>(forward.size()) - 1;
  const int64_t rows = std::min(state_.batch, predictions), length = predictions / rows;
  const int64_t ranks = comm_->size(), rank = comm_->rank();
  const int64_t begin = rows * rank / ranks, end = rows * (rank + 1) / ranks, mine = end - begin;
  std::array<double, 2> sums{};
  if (mine > 0) {
    const std::vector<nn::Tensor> training_state = model_->carried_state();
    model_->reset_state(mine);
    std::vector<int32_t> ids_forward, ids_backward;
    for (int64_t t0 = 0; t0 < length; t0 += state_.unroll) {
      const int64_t steps = std::min(state_.unroll, length - t0);
      const auto width = static_cast<size_t>(steps + 1);
      ids_forward.resize(static_cast<size_t>(mine) * width);
      ids_backward.resize(ids_forward.size());
      for (int64_t b = 0; b < mine; ++b) {
        const auto from = static_cast<size_t>((begin + b) * length + t0);
        std::copy_n(forward.begin() + static_cast<std::ptrdiff_t>(from), width,
                    ids_forward.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(b) * width));
        std::copy_n(backward.begin() + static_cast<std::ptrdiff_t>(from), width,
                    ids_backward.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(b) * width));
      }
      nn::ElmoBatch batch;
      batch.windows = mine, batch.steps = steps;
      fill_stream(ids_forward.data(), mine, steps, width, batch.streams[0]);
      fill_stream(ids_backward.data(), mine, steps, width, batch.streams[1]);
      const nn::ElmoLoss loss = model_->forward(batch, nn::DropoutContext{}, {nullptr, nullptr}, 0);
      for (int d = 0; d < 2; ++d) sums[d] += loss.directions[d].loss_sum;
    }
    model_->restore_state(training_state);
  }
  comm_->all_reduce(sums, dist::ReduceOp::Sum);
  r.tokens = rows * length;
  for (int d = 0; d < 2; ++d) r.directions[d] = sums[d] / static_cast<double>(r.tokens);
  r.loss = 0.5 * (r.directions[0] + r.directions[1]);
  if (log_.is_open()) {
    std::ostringstream line;
    line << "{\"step\": " << state_.step << ", \"eval_loss\": " << json_number(r.loss)
         << ", \"eval_ppl\": " << json_number(std::exp(r.loss))
         << ", \"eval_ppl_forward\": " << json_number(std::exp(r.directions[0]))
         << ", \"eval_ppl_backward\": " << json_number(std::exp(r.directions[1])) << ", \"eval_tokens\": " << r.tokens
         << "}";
    log_.write(line.str());
  }
  if (verbose())
    log_info("step " + std::to_string(state_.step) + " held-out perplexity " + json_number(std::exp(r.loss), 6) +
             " (forward " + json_number(std::exp(r.directions[0]), 6) + ", backward " +
             json_number(std::exp(r.directions[1]), 6) + "; " + std::to_string(r.tokens) + " tokens)");
  return r;
}

void ElmoTrainer::save() {
  // The carried state of every row: each rank adds its rows into zeros (exact), then rank 0 writes.
  std::vector<std::pair<std::string, nn::Tensor>> tensors;
  const std::vector<nn::Tensor> state = model_->carried_state();
  size_t i = 0;
  for (int d = 0; d < (elmo_.bidirectional ? 2 : 1); ++d)
    for (size_t l = 0; l < static_cast<size_t>(elmo_.layers); ++l)
      for (const char* which : {"h", "c"}) {
        const nn::Tensor mine = nn::to_f32(state[i++].to(nn::Device::Cpu));
        nn::Tensor all = nn::Tensor::zeros({state_.batch, mine.dim(1)});
        all.rows(static_cast<int64_t>(first_row_), static_cast<int64_t>(first_row_ + rows_)).copy_from(mine);
        if (comm_->size() > 1) {
          all = all.to(comm_->device());
          comm_->all_reduce(all, dist::ReduceOp::Sum);
          all = all.to(nn::Device::Cpu);
        }
        tensors.emplace_back(state_name(d, l, which), all);
      }
  if (comm_->rank() != 0) return;  // every rank holds the same model and optimizer
  state_.cursors = windows_->cursors();
  state_.loss_scale = scaler_.scale();
  state_.clean_steps = scaler_.clean_steps();
  for (const char* name : {"softmax/W", "softmax/b"})
    tensors.emplace_back(name, params_->get(name).value.to(nn::Device::Cpu));
  tensors.emplace_back("adagrad_accumulators", optimizer_->accumulators().to(nn::Device::Cpu));
  // options.json as a finished model's: 262 characters (AllenNLP, simple_elmo), the run's sizes.
  nn::ElmoOptions finished = elmo_;
  finished.characters = 262;
  uint64_t training_tokens = data_.total_tokens();
  for (uint32_t e : eval_) training_tokens -= data_.length(e);
  finished.train_tokens = static_cast<int64_t>(training_tokens);
  write_directory_atomically(options_.out, "model directory", kElmoWeightsFile, [&](const fs::path& tmp) {
    nn::write_elmo_options(tmp / "options.json", finished);
    nn::write_bilm_weights(tmp / kElmoWeightsFile, *params_, elmo_, false);
    std::string vocab;
    for (int64_t w = 0; w < state_.vocabulary; ++w) vocab += words_[static_cast<size_t>(w)] + '\n';
    write_file_atomically((tmp / "vocab.txt").string(), vocab);
    write_elmo_trainer_state(tmp, state_);
    nn::write_safetensors(tmp / kStateFile, tensors,
                          {{"format", kElmoTrainerStateFormat}, {"step", std::to_string(state_.step)}});
  });
}

Stats ElmoTrainer::stats() const {
  Stats stats;
  stats.set("steps", state_.step);
  stats.set("steps_run", steps_run_);
  stats.set("tokens_seen", static_cast<int64_t>(state_.tokens_seen));
  stats.set("parameters", params_->parameter_count());
  stats.set("softmax_vocabulary", state_.vocabulary);
  stats.set("train_sequences", static_cast<int64_t>(data_.size() - eval_.size()));
  stats.set("eval_sequences", static_cast<int64_t>(eval_.size()));
  stats.set("ranks", comm_->size());
  stats.set("data_files", static_cast<int64_t>(data_.files()));
  stats.set("data_streaming", data_.streaming() ? 1 : 0);
  add_memory_stats(stats, options_.device);
  if (comm_->size() > 1) stats.set("comm_milliseconds", static_cast<int64_t>(comm_seconds_ * 1000));
  stats.set("milliseconds", static_cast<int64_t>(seconds_since(start_) * 1000));
  return stats;
}

}  // namespace kglm::train
