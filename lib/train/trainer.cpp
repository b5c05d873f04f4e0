#include "train/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <span>
#include <sstream>
#include <string_view>
#include <utility>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/log.hpp"
#include "core/output_stream.hpp"
#include "core/rng.hpp"
#include "core/temporaries.hpp"
#include "nn/checkpoint.hpp"
#include "nn/cuda/runtime.hpp"
#include "nn/torch_checkpoint.hpp"
#include "train/loss_terms.hpp"
#include "train/metrics_log.hpp"
#include "train/token_shards.hpp"
#include "train/train_layers.hpp"
#include "train/trainer_support.hpp"

namespace kglm::train {

namespace {

namespace fs = std::filesystem;
using Clock = TrainClock;

nn::ModelConfig fresh_config(const PretrainOptions& o, const TokenDataset& data) {
  if (data.tokenizer_kind() == tok::TokenizerKind::Words)
    throw UsageError(
        "the dataset is word-level (pretrain prepare --words): train ELMo on it (--architecture elmo "
        "--options options.json); XLM-R and BERT train on a subword dataset (pretrain prepare --tokenizer)");
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

std::string term_numbers(const char* prefix, const TermLosses& t) {
  std::string s;
  for (size_t i = 0; i < kLossTermCount; ++i)
    s += std::string(", \"") + prefix + "loss_" + loss_term_name(static_cast<LossTerm>(i)) +
         "\": " + json_number(t.loss[i]) + ", \"" + prefix + "masked_" + loss_term_name(static_cast<LossTerm>(i)) +
         "\": " + std::to_string(t.masked[i]);
  return s;
}

}  // namespace

MlmModel::MlmModel(const nn::ModelConfig& c, nn::Device device, nn::DType compute, int64_t shards)
    : config(c), params(device, compute), scratch(device) {
  encoder.emplace(config, params);
  const size_t first_head_parameter = params.size();
  head.emplace(config, params, encoder->word_embeddings());
  params.allocate(shards);
  head_offset = params[first_head_parameter].offset;
}

Trainer::Trainer(const PretrainOptions& options, std::shared_ptr<dist::Communicator> comm)
    : options_(on_usable_device(options)),
      comm_(comm ? std::move(comm) : dist::make_communicator(options_.device)),
      data_paths_(dataset_paths(options_.data)),
      data_(TokenDataset::open(data_paths_, {cache_bytes(options_.cache_mb)})) {
  if (data_.size() == 0) throw Error(options_.data + ": the dataset has no sequences");
  check_directory_output(options_.out, "model directory", nn::kModelWeightsFile);  // before any work
  if (comm_->rank() == 0) output_lock_ = OutputLock(options_.out, "model directory");
  settle_settings();
  if (state_.batch % comm_->size() != 0)
    throw UsageError("--batch " + std::to_string(state_.batch) + " is the global batch: it must be a multiple of the " +
                     std::to_string(comm_->size()) + " ranks");
  build_model();
  load_tokenizer();
  split_data();
  open_log();
  if (verbose())
    log_info(model_->config.model_type() + " " + std::to_string(model_->config.layers) + "×" +
             std::to_string(model_->config.hidden) + ", " + std::to_string(model_->params.parameter_count()) +
             " parameters; " + std::to_string(data_.size() - eval_.size()) + " training and " +
             std::to_string(eval_.size()) + " held-out sequences; steps " + std::to_string(state_.step) + " → " +
             std::to_string(options_.steps) +
             (options_.device == nn::Device::Cuda ? "; on " + nn::cuda::device_description() : "") +
             (state_.precision != "fp32" ? " in " + state_.precision : "") +
             (data_.streaming() ? "; streaming " + std::to_string(data_.total_tokens()) + " tokens through a " +
                                      json_number(options_.cache_mb, 6) + " MB cache"
                                : "") +
             (comm_->size() > 1 ? "; " + std::to_string(comm_->size()) + " ranks (" + comm_->backend() + "), " +
                                      std::to_string(state_.batch / comm_->size()) + " sequences each per micro-batch"
                                : ""));
  if (verbose()) {
    // Which objective each kind of sequence present gets: a kind missing from the data, or an
    // objective that was not meant for it, shows here before any time is spent.
    std::array<uint64_t, kSequenceKindCount> per_kind{};
    for (size_t i = 0; i < data_.size(); ++i) ++per_kind[static_cast<size_t>(data_.kind(i))];
    std::string line = "objectives:";
    for (size_t k = 0; k < kSequenceKindCount; ++k)
      if (per_kind[k] > 0) {
        const auto kind = static_cast<SequenceKind>(k);
        line += std::string(" ") + sequence_kind_name(kind) + "=" + objective_name(masker_->table()[kind]) + " (" +
                std::to_string(per_kind[k]) + ")";
      }
    if (model_->params.trainable_count() < model_->params.parameter_count())
      line += "; training " + std::to_string(model_->params.trainable_count()) + " parameters (--train-layers " +
              state_.train_layers + ")";
    log_info(line);
  }
  start_ = Clock::now();
}

void Trainer::warn(const std::string& message) const {
  if (comm_->rank() == 0) log_warning(message);
}

// Settings: from the options, or from the checkpoint when resuming.
void Trainer::settle_settings() {
  const PretrainOptions& o = options_;
  state_.seed = o.seed;
  state_.batch = o.batch > 0 ? o.batch : 32;
  state_.accumulate = o.accumulate > 0 ? o.accumulate : 1;
  state_.optimizer = o.optimizer;
  state_.masking = o.masking;
  state_.objectives = make_objective_table(o.entity_objective, o.objectives).to_string();
  state_.kmlm_alpha = o.kmlm_alpha >= 0 ? o.kmlm_alpha : 0.3;
  state_.train_layers = o.train_layers.empty() ? "all" : o.train_layers;
  state_.lang_alpha = o.lang_alpha;
  state_.eval_fraction = o.eval_fraction;
  state_.precision = o.precision.empty() ? "fp32" : o.precision;
  if (!o.resume.empty()) {
    state_ = read_trainer_state(o.resume);
    check_same(state_.data_sequences != data_.size(), "the dataset (sequence count)");
    check_same(o.batch > 0 && o.batch != state_.batch, "--batch");
    check_same(o.accumulate > 0 && o.accumulate != state_.accumulate, "--accumulate");
    check_same(o.seed_given && o.seed != state_.seed, "--seed");
    if (state_.objectives.empty()) state_.objectives = ObjectiveTable().to_string();  // older kglm: all defaults
    check_same((!o.objectives.empty() || !o.entity_objective.empty()) &&
                   make_objective_table(o.entity_objective, o.objectives).to_string() != state_.objectives,
               "--objective/--entity-objective");
    check_same(o.kmlm_alpha >= 0 && o.kmlm_alpha != state_.kmlm_alpha, "--kmlm-alpha");
    check_same(!o.train_layers.empty() && o.train_layers != state_.train_layers, "--train-layers");
    check_same(!o.precision.empty() && o.precision != state_.precision, "--precision");
  }
  const int64_t saved_total = state_.optimizer.total_steps;
  state_.optimizer.total_steps = o.optimizer.total_steps > 0 ? o.optimizer.total_steps : o.steps;
  if (!o.resume.empty() && state_.optimizer.total_steps != saved_total)
    warn("--resume: the learning-rate schedule now decays to step " + std::to_string(state_.optimizer.total_steps) +
         " (the run that wrote the checkpoint used " + std::to_string(saved_total) + ")");
  state_.data.clear();
  for (const std::string& path : data_paths_)
    state_.data += (state_.data.empty() ? "" : ",") + fs::weakly_canonical(fs::absolute(path)).string();
  state_.data_sequences = data_.size();
}

// The model: a checkpoint's (resume), a Hugging Face directory's (init) or a fresh one; AdamW.
void Trainer::build_model() {
  const PretrainOptions& o = options_;
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
    config = fresh_config(o, data_);
    config.hidden_dropout = config.attention_dropout = o.dropout;
  }
  if (config.vocab_size != data_.vocab_size())
    throw Error(o.data + ": the dataset's vocabulary (" + std::to_string(data_.vocab_size()) +
                ") differs from the model's (" + std::to_string(config.vocab_size) + ")");
  const TrainLayers trained = parse_train_layers(state_.train_layers, config.layers);
  if (o.zero != 0 && o.zero != 1) throw UsageError("--zero must be 0 or 1, not " + std::to_string(o.zero));
  const int64_t ranks = comm_->size();
  model_ = std::make_unique<MlmModel>(config, o.device, compute_dtype(state_.precision, o.device), o.zero ? ranks : 1);
  model_->params.initialize(state_.seed, config.initializer_range);
  if (!weights.empty()) {
    // --init may name a transformers directory with pytorch_model.bin only.
    const nn::SafetensorsFile file =
        o.resume.empty() ? nn::open_model_weights(o.init) : nn::SafetensorsFile::open(weights);
    weights = file.source();
    if (!o.resume.empty() && std::any_of(file.entries().begin(), file.entries().end(),
                                         [](const nn::SafetensorsEntry& e) { return e.dtype_name != "F32"; }))
      warn(weights +
           ": weights saved below F32 (--save-dtype); the resumed run starts from rounded "
           "weights and is not bit-identical to an uninterrupted one");
    nn::LoadReport report = nn::load_parameters(file, model_->params, o.resume.empty());
    nn::require_encoder_tensors(report, config.prefix(), weights);
    if (!report.missing.empty())
      warn(weights + ": " + std::to_string(report.missing.size()) +
           " parameters not in the file start random (first: " + report.missing.front() + ")");
    if (!report.unexpected.empty())
      warn(weights + ": " + std::to_string(report.unexpected.size()) +
           " tensors ignored (first: " + report.unexpected.front() + ")");
  }
  if (!trained.all) model_->encoder->freeze_below(trained.last, trained.embeddings);
  nn::ParameterRange shard;  // ZeRO-1: this rank's equal share of the (padded) flat parameters
  if (o.zero) {
    const int64_t size = model_->params.count() / ranks;
    shard = {size * comm_->rank(), size * (comm_->rank() + 1)};
  }
  optimizer_ = std::make_unique<nn::AdamW>(model_->params, state_.optimizer, shard);
  if (ranks > 1 && !o.zero) {
    if (!(o.bucket_mb > 0)) throw UsageError("--bucket-mb must be positive");
    const auto elements = std::max<int64_t>(1, static_cast<int64_t>(o.bucket_mb * (1 << 20) / sizeof(float)));
    buckets_ = std::make_unique<dist::GradientBuckets>(*comm_, model_->params.grads(), elements);
  }
  scaler_ = nn::LossScaler(state_.precision == "fp16");
  if (!o.resume.empty()) {
    restore_optimizer(o.resume, *optimizer_, state_.step);
    scaler_.restore(state_.loss_scale, state_.clean_steps);
  }
}

// The tokenizer whose files go into checkpoints. A checkpoint without its tokenizer cannot be used
// by anyone: a missing one is an error, and so is one that is not the dataset's (by checksum).
void Trainer::load_tokenizer() {
  const PretrainOptions& o = options_;
  const std::string path = !o.tokenizer.empty() ? o.tokenizer
                           : !o.resume.empty()  ? o.resume
                           : !o.init.empty()    ? o.init
                                                : data_.tokenizer_source();
  try {
    tokenizer_ = tok::load_tokenizer(path);
  } catch (const Error& e) {
    if (!o.tokenizer.empty() || !o.resume.empty() || !o.init.empty()) throw;
    throw Error(std::string(e.what()) + " (the tokenizer " + o.data +
                " was prepared with; give --tokenizer where it is now)");
  }
  if (tokenizer_->vocab_size() != data_.vocab_size())
    throw Error(path + ": the tokenizer's vocabulary differs from the dataset's");
  const std::string checksum = tok::vocabulary_checksum(*tokenizer_);
  if (!data_.tokenizer_checksum().empty() && checksum != data_.tokenizer_checksum())
    throw Error(path + ": not the tokenizer " + o.data + " was prepared with (vocabulary checksum " + checksum +
                ", the dataset's " + data_.tokenizer_checksum() + ")");
}

// Held-out sequences, then the training order (one group per language with --lang-alpha).
void Trainer::split_data() {
  const bool by_language = state_.lang_alpha >= 0;
  std::vector<std::vector<uint32_t>> groups(by_language ? data_.languages().size() : 1);
  for (uint32_t i = 0; i < data_.size(); ++i) {
    if (static_cast<int64_t>(eval_.size()) < options_.eval_max && held_out(i, state_.eval_fraction)) {
      eval_.push_back(i);
    } else {
      groups[by_language ? data_.lang(i) : 0].push_back(i);
    }
  }
  std::optional<sample::LanguageSampler> sampler;
  if (by_language) {
    std::vector<double> sizes;
    for (const auto& g : groups) sizes.push_back(static_cast<double>(g.size()));
    sampler.emplace(data_.languages(), sizes, state_.lang_alpha, state_.seed);
  }
  order_ = std::make_unique<BatchOrder>(std::move(groups), std::move(sampler), state_.seed);
  if (!options_.resume.empty()) order_->restore(state_.cursors);
  if (!options_.drawn.empty()) drawn_.assign(data_.size(), 0);
  ObjectiveTable table;
  table.assign(state_.objectives);
  masker_ = std::make_unique<ObjectiveMasker>(table, state_.masking, Vocabulary(data_.special(), data_.vocab_size()));
  micro_.resize(static_cast<size_t>(state_.accumulate));
}

void Trainer::open_log() {
  if (comm_->rank() == 0) log_.open(options_.log, options_.tensorboard, !options_.resume.empty(), state_.step);
}

StepResult Trainer::step() {
  const Clock::time_point step_start = Clock::now();
  const double comm_before = comm_seconds_;
  StepResult r;
  // This rank's rows of every micro-batch of the global batch.
  const auto rows = static_cast<size_t>(state_.batch / comm_->size());
  const size_t first_row = rows * static_cast<size_t>(comm_->rank());
  // The step's masked tokens per loss term and its real tokens, over every rank: the gradient
  // weights are w_t / n_t with the global n_t, so the ranks' gradients add up to the step's.
  std::array<int64_t, kLossTermCount + 2> counts{};  // + tokens, + stop requests
  for (int64_t k = 0; k < state_.accumulate; ++k) {
    const uint64_t batch_number = static_cast<uint64_t>(state_.step * state_.accumulate + k);
    sequences_.clear();
    order_->next(batch_number, static_cast<size_t>(state_.batch), sequences_);
    for (uint32_t s : drawn_.empty() ? std::span<const uint32_t>() : std::span<const uint32_t>(sequences_)) ++drawn_[s];
    MlmBatch& b = micro_[static_cast<size_t>(k)];
    b = make_mlm_batch(data_, sequences_, *masker_, state_.seed, batch_number, kTrainStream, model_->config,
                       {first_row, first_row + rows});
    for (size_t t = 0; t < kLossTermCount; ++t) counts[t] += b.term_counts[t];
    counts[kLossTermCount] += b.tokens;
    tally_ += b.tally;
  }
  counts[kLossTermCount + 1] = requested_stop() != 0;
  comm_->all_reduce(counts, dist::ReduceOp::Sum);
  r.stop_requested = counts[kLossTermCount + 1] > 0;
  std::array<int64_t, kLossTermCount> term_counts{};
  std::copy_n(counts.begin(), kLossTermCount, term_counts.begin());
  for (int64_t n : term_counts) r.masked += n;
  r.tokens = counts[kLossTermCount];
  LossTerms terms(term_counts, state_.kmlm_alpha);
  r.loss_scale = scaler_.scale();
  for (int64_t k = 0; k < state_.accumulate; ++k) {
    MlmBatch& b = micro_[static_cast<size_t>(k)];
    if (b.masked() == 0) continue;
    const uint64_t stream = static_cast<uint64_t>(state_.step * state_.accumulate + k);
    const nn::DropoutContext dropout{true, state_.seed, stream, first_row, rows};
    const nn::Tensor& hidden = model_->encoder->forward(b.encoder, dropout);
    nn::Tensor losses = nn::Tensor::empty({b.masked()}, nn::DType::F64);
    model_->head->forward(hidden, b.rows, b.targets, true, r.loss_scale, terms.row_weights(b.terms), &losses);
    terms.add(b.terms, losses);
    model_->scratch.begin();
    nn::Tensor dhidden = model_->scratch.buffer(hidden.shape(), hidden.dtype());
    dhidden.zero();
    model_->head->backward(dhidden);
    // The last micro-batch's backward pass reduces each gradient bucket as soon as it is final.
    const bool reduce_now = buckets_ && k + 1 == state_.accumulate;
    if (reduce_now) {
      buckets_->ready_from(model_->head_offset);
      model_->encoder->set_gradients_final_hook([this](int64_t offset) { buckets_->ready_from(offset); });
    }
    model_->encoder->backward(dhidden);
    if (reduce_now) model_->encoder->set_gradients_final_hook(nullptr);
  }
  // The gradients first: a blocking collective issued before them would wait for them uncounted.
  r.report = optimizer_step(r.loss_scale);
  terms.all_reduce(*comm_);
  model_->params.zero_grads();
  if (scaler_.update(r.report.skipped) && verbose())
    log_info("step " + std::to_string(state_.step + 1) + ": " +
             (r.report.skipped ? "gradients overflowed in fp16, step skipped; " : "") + "loss scale " +
             json_number(r.loss_scale, 6) + " → " + json_number(scaler_.scale(), 6));
  state_.tokens_seen += static_cast<uint64_t>(r.tokens);
  r.terms = terms.summary();
  r.loss = terms.total();
  r.seconds = seconds_since(step_start);
  r.comm_seconds = comm_seconds_ - comm_before;
  r.step = ++state_.step;
  ++steps_run_;
  if (log_.is_open()) {
    std::ostringstream line;
    line << "{\"step\": " << r.step << ", \"loss\": " << json_number(r.loss) << term_numbers("", r.terms)
         << ", \"lr\": " << json_number(r.report.lr) << ", \"grad_norm\": " << json_number(r.report.grad_norm)
         << (scaler_.dynamic() ? ", \"loss_scale\": " + json_number(r.loss_scale) : std::string())
         << (r.report.skipped ? ", \"skipped\": true" : "") << ", \"masked\": " << r.masked
         << ", \"tokens\": " << r.tokens << ", \"tokens_per_s\": " << json_number(r.tokens / r.seconds)
         << (comm_->size() > 1 ? ", \"comm_s\": " + json_number(r.comm_seconds) : std::string())
         << ", \"elapsed_s\": " << json_number(seconds_since(start_)) << "}";
    log_.write(line.str());
  }
  if (verbose() && options_.log_every > 0 && (r.step % options_.log_every == 0 || r.step == options_.steps))
    log_info("step " + std::to_string(r.step) + "/" + std::to_string(options_.steps) + " loss " +
             json_number(r.loss, 6) + " lr " + json_number(r.report.lr, 6) + " " +
             json_number(r.tokens / r.seconds, 6) + " tokens/s");
  return r;
}

// Sums the step's gradients across ranks: what the buckets have not started yet, then the wait;
// or, with ZeRO, each rank's shard of the sum (reduce-scatter).
void Trainer::reduce_gradients() {
  const Clock::time_point start = Clock::now();
  if (buckets_) buckets_->finish();
  if (options_.zero) comm_->reduce_scatter(model_->params.grads(), optimizer_->gradients(), dist::ReduceOp::Sum);
  comm_seconds_ += seconds_since(start);
}

// The AdamW step on every rank. With ZeRO each rank updates its shard, with the norm of the whole
// gradient (so clipping and fp16's overflow skip are the same on every rank), then the ranks
// gather each other's updated shards.
nn::StepReport Trainer::optimizer_step(double loss_scale) {
  reduce_gradients();
  if (!options_.zero) return optimizer_->step(loss_scale);
  double squares = optimizer_->local_sum_of_squares();
  comm_->all_reduce(std::span<double>(&squares, 1), dist::ReduceOp::Sum);
  const nn::StepReport report = optimizer_->step(loss_scale, squares);
  if (!report.skipped) {
    const Clock::time_point start = Clock::now();
    comm_->all_gather_in_place(model_->params.values());
    comm_seconds_ += seconds_since(start);
    model_->params.refresh_compute();
  }
  return report;
}

EvalResult Trainer::evaluate() {
  EvalResult r;
  if (eval_.empty()) return r;
  double loss = 0;
  int64_t correct = 0;
  LossTerms terms({}, state_.kmlm_alpha);  // unweighted: only the terms' means are read
  const size_t batch = static_cast<size_t>(state_.batch);
  const auto ranks = static_cast<size_t>(comm_->size()), rank = static_cast<size_t>(comm_->rank());
  for (size_t begin = 0, batch_number = 0; begin < eval_.size(); begin += batch, ++batch_number) {
    const size_t end = std::min(eval_.size(), begin + batch);
    std::span<const uint32_t> seqs(eval_.data() + begin, end - begin);
    // This rank's share of the batch (the last one may be short: shares differ by one at most).
    const BatchRows mine{seqs.size() * rank / ranks, seqs.size() * (rank + 1) / ranks};
    if (mine.begin == mine.end) continue;
    MlmBatch b = make_mlm_batch(data_, seqs, *masker_, state_.seed, batch_number, kEvalStream, model_->config, mine);
    if (b.masked() == 0) continue;
    const nn::Tensor& hidden = model_->encoder->forward(b.encoder, nn::DropoutContext{});
    nn::Tensor losses = nn::Tensor::empty({b.masked()}, nn::DType::F64);
    nn::CrossEntropyResult ce = model_->head->forward(hidden, b.rows, b.targets, false, 1.0, nn::Tensor(), &losses);
    terms.add(b.terms, losses);
    loss += ce.loss_sum;
    correct += ce.correct;
    r.masked += ce.counted;
  }
  std::array<int64_t, 2> totals{correct, r.masked};
  comm_->all_reduce(std::span<double>(&loss, 1), dist::ReduceOp::Sum);
  comm_->all_reduce(totals, dist::ReduceOp::Sum);
  correct = totals[0];
  r.masked = totals[1];
  terms.all_reduce(*comm_);
  r.terms = terms.summary();
  if (r.masked > 0) {
    r.loss = loss / static_cast<double>(r.masked);
    r.accuracy = static_cast<double>(correct) / static_cast<double>(r.masked);
  }
  if (log_.is_open()) {
    std::ostringstream line;
    line << "{\"step\": " << state_.step << ", \"eval_loss\": " << json_number(r.loss)
         << ", \"eval_ppl\": " << json_number(std::exp(r.loss)) << ", \"eval_accuracy\": " << json_number(r.accuracy)
         << ", \"eval_masked\": " << r.masked << term_numbers("eval_", r.terms) << "}";
    log_.write(line.str());
  }
  if (verbose())
    log_info("step " + std::to_string(state_.step) + " held-out perplexity " + json_number(std::exp(r.loss), 6));
  return r;
}

void Trainer::save() {
  // ZeRO: every rank's shard of the moments, summed into the full layout (zero outside each shard).
  // A pair, not a structured binding: the lambda below captures it (clang 14 cannot capture those).
  std::pair<nn::Tensor, nn::Tensor> moments = optimizer_->full_moments();
  if (options_.zero) {
    comm_->all_reduce(moments.first, dist::ReduceOp::Sum);
    comm_->all_reduce(moments.second, dist::ReduceOp::Sum);
  }
  if (comm_->rank() != 0) return;  // every rank holds the same model
  state_.cursors = order_->cursors();
  state_.loss_scale = scaler_.scale();
  state_.clean_steps = scaler_.clean_steps();
  const MlmModel& m = *model_;
  const char* arch_name = m.config.architecture == nn::Architecture::Bert ? "BertForMaskedLM" : "XLMRobertaForMaskedLM";
  nn::write_model_dir(options_.out, m.params, options_.save_dtype, {{"format", "pt"}, {"producer", "kglm pretrain"}},
                      [&](const fs::path& tmp) {
                        nn::write_model_config(tmp / "config.json", m.config, arch_name);
                        tokenizer_->save_hf_files(tmp);
                        write_trainer_state(tmp, state_, moments.first, moments.second);
                      });
}

void Trainer::write_drawn() const {
  if (options_.drawn.empty() || comm_->rank() != 0) return;
  std::vector<bool> held(data_.size());
  for (uint32_t i : eval_) held[i] = true;
  OutputStream out(options_.drawn);
  out.write("sequence\tinput\tsource_line\theld_out\tdraws\n");
  std::string line;
  for (size_t i = 0; i < data_.size(); ++i) {
    line = std::to_string(i) + '\t' + std::to_string(data_.input(i)) + '\t' + std::to_string(data_.source_line(i)) +
           '\t' + (held[i] ? "1" : "0") + '\t' + std::to_string(drawn_[i]) + '\n';
    out.write(line);
  }
  out.close();
}

Stats Trainer::stats() const {
  Stats stats;
  stats.set("steps", state_.step);
  stats.set("steps_run", steps_run_);
  stats.set("tokens_seen", static_cast<int64_t>(state_.tokens_seen));
  stats.set("parameters", model_->params.parameter_count());
  stats.set("train_sequences", static_cast<int64_t>(data_.size() - eval_.size()));
  stats.set("eval_sequences", static_cast<int64_t>(eval_.size()));
  stats.set("trainable_parameters", model_->params.trainable_count());
  stats.set("ranks", comm_->size());
  // The token data: files, whether it streamed, and this rank's block cache and memory.
  const TokenCacheStats cache = data_.cache_stats();
  stats.set("data_files", static_cast<int64_t>(data_.files()));
  stats.set("data_streaming", data_.streaming() ? 1 : 0);
  stats.set("token_cache_peak_mb", static_cast<int64_t>(cache.peak_bytes >> 20));
  stats.set("token_read_mb", static_cast<int64_t>(cache.bytes_read >> 20));
  add_memory_stats(stats, options_.device);
  if (comm_->size() > 1) stats.set("comm_milliseconds", static_cast<int64_t>(comm_seconds_ * 1000));
  // The masking tally of every rank's rows (a collective: every rank calls stats()).
  std::array<int64_t, kSequenceKindCount * kMaskCategoryCount> tally{};
  for (size_t k = 0; k < kSequenceKindCount; ++k)
    for (size_t c = 0; c < kMaskCategoryCount; ++c)
      tally[k * kMaskCategoryCount + c] = static_cast<int64_t>(tally_.counts[k][c]);
  comm_->all_reduce(tally, dist::ReduceOp::Sum);
  // Every category (link_slot included, which must stay 0) of every kind that was trained on.
  for (size_t k = 0; k < kSequenceKindCount; ++k) {
    const std::span<const int64_t> counts(tally.data() + k * kMaskCategoryCount, kMaskCategoryCount);
    if (std::all_of(counts.begin(), counts.end(), [](int64_t v) { return v == 0; })) continue;
    for (size_t c = 0; c < kMaskCategoryCount; ++c)
      stats.set(std::string("masked.") + sequence_kind_name(static_cast<SequenceKind>(k)) + "." +
                    mask_category_name(static_cast<MaskCategory>(c)),
                static_cast<int64_t>(counts[c]));
  }
  stats.set("milliseconds", static_cast<int64_t>(seconds_since(start_) * 1000));
  return stats;
}

}  // namespace kglm::train
