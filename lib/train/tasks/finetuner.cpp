#include "train/tasks/finetuner.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/json_writer.hpp"
#include "core/log.hpp"
#include "core/output_stream.hpp"
#include "core/rng.hpp"
#include "core/temporaries.hpp"
#include "nn/checkpoint.hpp"
#include "nn/torch_checkpoint.hpp"
#include "train/metrics_log.hpp"
#include "train/token_batches.hpp"
#include "train/train_layers.hpp"
#include "train/trainer_state.hpp"

namespace kglm::train::tasks {

namespace fs = std::filesystem;

namespace {

constexpr uint32_t kEpochStream = 0x66746570;  // "ftep": the order of each epoch's examples
constexpr const char* kProgressFile = "finetune_state.json";

// Where a seed stands beyond the trainer state: its best dev score so far and whether it finished.
struct SeedProgress {
  double best = -1;
  int64_t best_step = -1;
  bool done = false;
  int64_t batch_tokens = 0;  // the run's --batch-tokens (a resumed run must keep it)
};

void write_progress(const fs::path& path, const SeedProgress& p) {
  OutputStream out(path.string());
  out.write("{\"format\": \"kglm-finetune-progress\", \"best\": " + json_number(p.best, 17) +
            ", \"best_step\": " + std::to_string(p.best_step) + ", \"done\": " + (p.done ? "true" : "false") +
            ", \"batch_tokens\": " + std::to_string(p.batch_tokens) + "}\n");
  out.close();
}

std::optional<SeedProgress> read_progress(const fs::path& path) {
  if (!fs::exists(path)) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  SeedProgress p;
  if (parser.load(path.string()).get(root) || root["best"].get(p.best) || root["best_step"].get(p.best_step) ||
      root["done"].get(p.done))
    throw Error(path.string() + ": not a finetune progress file");
  if (root["batch_tokens"].get(p.batch_tokens)) p.batch_tokens = 0;  // written before --batch-tokens existed
  return p;
}

}  // namespace

fs::path Finetuner::seed_dir(const std::string& run_dir, uint64_t seed) {
  return fs::path(run_dir) / ("seed-" + std::to_string(seed));
}

Finetuner::Finetuner(const FinetuneOptions& options, const FinetuneSetup& setup, uint64_t seed,
                     std::shared_ptr<dist::Communicator> comm)
    : options_(options), setup_(setup), seed_(seed), comm_(std::move(comm)), dir_(seed_dir(options.out, seed)) {
  const auto n = static_cast<int64_t>(setup.train.encoded.size());
  steps_per_epoch_ = (n + options.batch - 1) / options.batch;
  if (options.batch_tokens > 0) {
    // The batch count depends only on the lengths (token_batches.hpp): any order gives it.
    batch_examples(0);
    steps_per_epoch_ = static_cast<int64_t>(token_batches_.size());
    order_epoch_ = -1;
  }
  total_steps_ = steps_per_epoch_ * options.epochs;
  schedule_ = options.optimizer;
  schedule_.total_steps = total_steps_;
  schedule_.warmup_steps =
      options.warmup_steps >= 0
          ? options.warmup_steps
          : static_cast<int64_t>(std::llround(options.warmup_ratio * static_cast<double>(total_steps_)));
  model_ = std::make_unique<TaskModel>(setup.config, setup.task.kind, setup.task.pooling,
                                       static_cast<int64_t>(setup.labels.size()), options.device,
                                       static_cast<int64_t>(setup.intents.size()));
  start_or_resume();
}

// A fresh start (the encoder from --init, the head random from the seed) or the seed's checkpoint.
void Finetuner::start_or_resume() {
  if (options_.resume) {
    if (const std::optional<SeedProgress> p = read_progress(dir_ / kProgressFile); p && p->done) {
      done_ = true;
      best_ = p->best;
      if (verbose()) log_info("seed " + std::to_string(seed_) + ": finished before; its best model is kept");
      return;
    }
  } else if (fs::exists(dir_ / kProgressFile) || fs::exists(dir_ / "checkpoint")) {
    throw UsageError(dir_.string() + " holds a run already: --resume continues it, or give another --out");
  }
  nn::ParameterStore& params = model_->params();
  params.initialize(seed_, setup_.config.initializer_range);
  const fs::path checkpoint = dir_ / "checkpoint";
  const bool resuming = options_.resume && fs::exists(checkpoint / kProgressFile);
  const nn::SafetensorsFile weights = nn::open_model_weights(resuming ? checkpoint : fs::path(options_.init));
  const nn::LoadReport report = nn::load_parameters(weights, params, !resuming);
  nn::require_encoder_tensors(report, setup_.config.prefix(), weights.source());
  if (!resuming && verbose() && !report.missing.empty())
    log_info("seed " + std::to_string(seed_) + ": " + std::to_string(report.missing.size()) + " parameters of the " +
             task_name(setup_.task.kind) + " head start random (" + report.missing.front() +
             (report.missing.size() > 1 ? ", …)" : ")"));
  const TrainLayers trained = parse_train_layers(options_.train_layers, setup_.config.layers);
  if (!trained.all) model_->encoder().freeze_below(trained.last, trained.embeddings);
  optimizer_ = std::make_unique<nn::AdamW>(params, schedule_);
  if (resuming) {
    const TrainerState state = read_trainer_state(checkpoint);
    if (state.seed != seed_ || state.batch != options_.batch || state.optimizer.total_steps != total_steps_ ||
        state.data_sequences != setup_.train.encoded.size())
      throw UsageError(
          "--resume: " + checkpoint.string() +
          " was written with another --batch, --epochs or training file; a resumed run keeps its settings");
    restore_optimizer(checkpoint, *optimizer_, state.step);
    step_ = state.step;
    const SeedProgress progress = *read_progress(checkpoint / kProgressFile);
    if (progress.batch_tokens != options_.batch_tokens)
      throw UsageError("--resume: " + checkpoint.string() + " was written with --batch-tokens " +
                       std::to_string(progress.batch_tokens) + "; a resumed run keeps its settings");
    best_ = progress.best;
    best_step_ = progress.best_step;
    if (verbose()) log_info("seed " + std::to_string(seed_) + ": resuming at step " + std::to_string(step_));
  }
  if (comm_->rank() == 0) {
    fs::create_directories(dir_);
    log_.open((dir_ / "metrics.jsonl").string(), seed_tensorboard_dir(options_, seed_), resuming, step_);
  }
}

std::span<const uint32_t> Finetuner::batch_examples(int64_t step) {
  const int64_t epoch = steps_per_epoch_ > 0 ? step / steps_per_epoch_ : 0;
  if (epoch != order_epoch_) {
    order_epoch_ = epoch;
    order_.resize(setup_.train.encoded.size());
    std::iota(order_.begin(), order_.end(), 0u);
    Rng rng(seed_, static_cast<uint64_t>(epoch), kEpochStream);
    for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng.below(i)]);
    if (options_.batch_tokens > 0) {
      std::vector<int64_t> lengths;
      lengths.reserve(setup_.train.encoded.size());
      for (const EncodedExample& e : setup_.train.encoded) lengths.push_back(static_cast<int64_t>(e.ids.size()));
      token_batches_ = token_budget_batches(order_, lengths, options_.batch_tokens, rng);
    }
  }
  if (steps_per_epoch_ == 0) return {};
  const int64_t k = step % steps_per_epoch_;
  if (options_.batch_tokens > 0) return token_batches_[static_cast<size_t>(k)];
  const auto b = static_cast<size_t>(options_.batch);
  const size_t first = static_cast<size_t>(k) * b;
  return std::span<const uint32_t>(order_.data() + first, std::min(b, order_.size() - first));
}

void Finetuner::log(const std::string& json_line) {
  if (log_.is_open()) log_.write(json_line);
}

double Finetuner::train_step() {
  const std::span<const uint32_t> examples = batch_examples(step_);
  // This rank's share of the global batch (shares differ by one at most when it does not divide).
  const auto ranks = static_cast<size_t>(comm_->size()), rank = static_cast<size_t>(comm_->rank());
  const BatchRows mine{examples.size() * rank / ranks, examples.size() * (rank + 1) / ranks};
  const TaskBatch batch = make_task_batch(setup_.task.kind, setup_.train.encoded, examples, mine, model_->config());
  // The loss is the mean over the global batch's counted targets (slots with intents: plus the
  // weighted mean over its intents): their numbers first.
  std::array<int64_t, 3> counts{batch.counted, batch.intent_counted, requested_stop() != 0};
  comm_->all_reduce(counts, dist::ReduceOp::Sum);
  const double intent_scale = counts[1] > 0 ? setup_.task.intent_weight / static_cast<double>(counts[1]) : 0.0;
  std::array<double, 2> loss_sums{0, 0};
  double& loss_sum = loss_sums[0];
  if (batch.examples > 0 && counts[0] > 0) {
    const auto first_row = static_cast<uint64_t>(mine.begin) * static_cast<uint64_t>(batch.choices);
    const nn::DropoutContext dropout{true, seed_, static_cast<uint64_t>(step_), first_row,
                                     static_cast<uint64_t>(batch.encoder.sequences.sequences())};
    model_->forward(batch, dropout);
    loss_sum = model_->loss(batch, true, 1.0 / static_cast<double>(counts[0]), intent_scale).loss_sum;
    loss_sums[1] = model_->intent_loss().loss_sum;
    model_->backward();
  }
  if (comm_->size() > 1) comm_->all_reduce(model_->params().grads(), dist::ReduceOp::Sum);
  const nn::StepReport report = optimizer_->step();
  model_->params().zero_grads();
  comm_->all_reduce(loss_sums, dist::ReduceOp::Sum);
  ++step_;
  ++steps_run_;
  const double loss = (counts[0] > 0 ? loss_sum / static_cast<double>(counts[0]) : 0) + loss_sums[1] * intent_scale;
  log("{\"step\": " + std::to_string(step_) +
      ", \"epoch\": " + json_number(static_cast<double>(step_) / steps_per_epoch_, 6) +
      ", \"loss\": " + json_number(loss) + ", \"lr\": " + json_number(report.lr) +
      ", \"grad_norm\": " + json_number(report.grad_norm) + ", \"examples\": " + std::to_string(examples.size()) + "}");
  if (verbose() && options_.log_every > 0 && (step_ % options_.log_every == 0 || step_ == total_steps_))
    log_info("seed " + std::to_string(seed_) + " step " + std::to_string(step_) + "/" + std::to_string(total_steps_) +
             " loss " + json_number(loss, 6) + " lr " + json_number(report.lr, 6));
  if (counts[2] > 0) return -1;  // a stop request, seen by every rank at this step
  return loss;
}

double Finetuner::evaluate_dev() {
  const TaskFile& dev = *setup_.dev;
  const TaskScore s =
      score(dev.data, setup_.labels,
            predict(*model_, dev.data, dev.encoded, setup_.labels, options_.batch, setup_.task.qa_decode, intents()),
            entity_rules(options_.tag_scheme));
  std::string line = "{\"step\": " + std::to_string(step_);
  for (const auto& [name, value] : s.details) line += ", \"dev_" + name + "\": " + json_number(value);
  log(line + "}");
  const bool better = s.value > best_;
  if (verbose())
    log_info("seed " + std::to_string(seed_) + " step " + std::to_string(step_) + " dev " + s.metric + " " +
             json_number(100 * s.value, 4) + (better ? " (best so far)" : ""));
  if (better) {
    best_ = s.value;
    best_step_ = step_;
    save_model(dir_ / "best", false);
  }
  return s.value;
}

void Finetuner::save_model(const fs::path& dir, bool checkpoint) {
  if (comm_->rank() != 0) return;
  TrainerState state;
  if (checkpoint) {
    state.step = step_;
    state.seed = seed_;
    state.batch = options_.batch;
    state.optimizer = schedule_;
    state.train_layers = options_.train_layers;
    state.data = setup_.train.data.path;
    state.data_sequences = setup_.train.encoded.size();
  }
  const std::pair<nn::Tensor, nn::Tensor> moments =
      checkpoint ? optimizer_->full_moments() : std::pair<nn::Tensor, nn::Tensor>();
  nn::write_model_dir(dir, model_->params(), nn::DType::F32, {{"format", "pt"}, {"producer", "kglm finetune"}},
                      [&](const fs::path& tmp) {
                        nn::write_model_config(tmp / "config.json", model_->config(), model_->architecture_name(),
                                               hf_label_fields(setup_.task));
                        setup_.tokenizer->save_hf_files(tmp);
                        write_task_config(tmp / "finetune.json", setup_.task);
                        if (!checkpoint) return;
                        write_trainer_state(tmp, state, moments.first, moments.second);
                        write_progress(tmp / kProgressFile, {best_, best_step_, false, options_.batch_tokens});
                      });
}

bool Finetuner::train() {
  if (done_) return true;
  while (step_ < total_steps_) {
    const bool stop = train_step() < 0;
    const bool epoch_end = step_ % steps_per_epoch_ == 0;
    if (setup_.dev && ((options_.eval_every > 0 && step_ % options_.eval_every == 0) || epoch_end)) evaluate_dev();
    const bool time_up = options_.stop_after > 0 && steps_run_ >= options_.stop_after;
    if ((stop || time_up) && step_ < total_steps_) {
      save_model(dir_ / "checkpoint", true);
      if (verbose())
        log_warning("seed " + std::to_string(seed_) + " stopped at step " + std::to_string(step_) + " of " +
                    std::to_string(total_steps_) + (stop ? " on SIGUSR1" : " (--stop-after)") +
                    ": --resume continues from " + (dir_ / "checkpoint").string());
      return false;
    }
    if (options_.save_every > 0 && step_ % options_.save_every == 0 && step_ < total_steps_)
      save_model(dir_ / "checkpoint", true);
  }
  if (!setup_.dev) save_model(dir_ / "best", false);  // no dev set: the last model is the one kept
  if (comm_->rank() == 0) {
    write_progress(dir_ / kProgressFile, {best_, best_step_, true, options_.batch_tokens});
    fs::remove_all(dir_ / "checkpoint");  // finished: the resume state is not needed any more
  }
  comm_->barrier();
  return true;
}

SeedResult Finetuner::test() {
  SeedResult r;
  r.seed = seed_;
  if (setup_.dev) r.dev = best_;
  if (setup_.tests.empty()) return r;
  nn::load_parameters(nn::SafetensorsFile::open(dir_ / "best" / "model.safetensors"), model_->params(), false);
  for (const TaskFile& t : setup_.tests)
    r.tests.emplace_back(t.lang, score(t.data, setup_.labels,
                                       predict(*model_, t.data, t.encoded, setup_.labels, options_.batch,
                                               setup_.task.qa_decode, intents()),
                                       entity_rules(options_.tag_scheme)));
  return r;
}

}  // namespace kglm::train::tasks
