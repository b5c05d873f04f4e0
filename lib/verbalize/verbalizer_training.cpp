#include "verbalize/verbalizer_training.hpp"

#include <simdjson.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <optional>

#include "core/atomic_file.hpp"
#include "core/json_writer.hpp"
#include "core/log.hpp"
#include "core/output_lock.hpp"
#include "core/output_stream.hpp"
#include "core/rng.hpp"
#include "core/stats.hpp"
#include "core/temporaries.hpp"
#include "dist/communicator.hpp"
#include "nn/checkpoint.hpp"
#include "nn/t5.hpp"
#include "nn/t5_checkpoint.hpp"
#include "nn/threads.hpp"
#include "tok/hf_tokenizer_files.hpp"
#include "train/metrics_log.hpp"
#include "train/pretrain.hpp"
#include "train/trainer_state.hpp"
#include "verbalize/seq2seq_batch.hpp"
#include "verbalize/verbalizer_records.hpp"

namespace kglm::verbalize {

namespace fs = std::filesystem;

namespace {

constexpr uint32_t kEpochStream = 0x76657062;  // "vepb": the order of each epoch's pairs

// A model directory's settings beyond config.json: the lengths it was trained with.
void write_lengths(const fs::path& path, int64_t source, int64_t target) {
  write_file_atomically(path.string(),
                        "{\"format\": \"kglm-verbalizer\", \"max_source_len\": " + std::to_string(source) +
                            ", \"max_target_len\": " + std::to_string(target) + "}\n");
}

class Run {
 public:
  Run(const TrainOptions& o, std::shared_ptr<dist::Communicator> comm) : o_(o), comm_(std::move(comm)) {
    start_ = std::chrono::steady_clock::now();
    check_directory_output(o_.out, "model directory", nn::kModelWeightsFile);  // before any work
    if (comm_->rank() == 0) output_lock_ = OutputLock(o_.out, "model directory");
    load_model();
    load_data();
    start_or_resume();
  }

  bool done() const { return step_ >= o_.steps; }

  // One optimizer step over the global batch; false when a stop was requested (every rank sees it).
  bool step() {
    const int64_t n = static_cast<int64_t>(train_.size());
    const auto b = static_cast<size_t>(std::min<int64_t>(o_.batch, n));
    std::vector<uint32_t> rows;
    rows.reserve(b);
    for (size_t i = 0; i < b; ++i) {
      const int64_t position = step_ * static_cast<int64_t>(b) + static_cast<int64_t>(i);
      rows.push_back(train_[epoch_order(position / n)[static_cast<size_t>(position % n)]]);
    }
    const auto ranks = static_cast<size_t>(comm_->size()), rank = static_cast<size_t>(comm_->rank());
    const size_t first = rows.size() * rank / ranks, last = rows.size() * (rank + 1) / ranks;
    const std::span<const uint32_t> mine(rows.data() + first, last - first);
    int64_t counted = 0, tokens = 0;
    for (uint32_t r : mine) {
      counted += static_cast<int64_t>(pairs_[r].target.size());
      tokens += static_cast<int64_t>(pairs_[r].source.size() + pairs_[r].target.size());
    }
    std::array<int64_t, 3> totals{counted, tokens, requested_stop() != 0};
    comm_->all_reduce(totals, dist::ReduceOp::Sum);
    double loss_sum = 0;
    if (!mine.empty()) {
      const nn::Seq2SeqBatch batch = make_seq2seq_batch(pairs_, mine, config_);
      // Sequences numbered by global row: this share draws what one process holding the whole
      // batch draws for it.
      const nn::DropoutContext dropout{true, o_.seed, static_cast<uint64_t>(step_), first, mine.size()};
      loss_sum = model_->forward(batch, dropout, 1.0 / static_cast<double>(totals[0])).loss_sum;
      model_->backward();
    }
    if (comm_->size() > 1) comm_->all_reduce(params_->grads(), dist::ReduceOp::Sum);
    const nn::StepReport report = optimizer_->step();
    params_->zero_grads();
    comm_->all_reduce(std::span<double>(&loss_sum, 1), dist::ReduceOp::Sum);
    ++step_;
    ++steps_run_;
    tokens_seen_ += static_cast<uint64_t>(totals[1]);
    last_loss_ = loss_sum / static_cast<double>(totals[0]);
    log("{\"step\": " + std::to_string(step_) + ", \"loss\": " + json_number(last_loss_) +
        ", \"lr\": " + json_number(report.lr) + ", \"grad_norm\": " + json_number(report.grad_norm) +
        ", \"pairs\": " + std::to_string(rows.size()) + "}");
    if (verbose() && o_.log_every > 0 && (step_ % o_.log_every == 0 || step_ == o_.steps))
      log_info("step " + std::to_string(step_) + "/" + std::to_string(o_.steps) + " loss " +
               json_number(last_loss_, 5) + " lr " + json_number(report.lr, 4));
    return totals[2] == 0;
  }

  // The held-out loss (mean over target tokens), each rank taking its share of the pairs.
  double evaluate() {
    if (eval_.empty()) return NAN;
    const auto ranks = static_cast<size_t>(comm_->size()), rank = static_cast<size_t>(comm_->rank());
    const size_t first = eval_.size() * rank / ranks, last = eval_.size() * (rank + 1) / ranks;
    std::array<double, 2> sums{0, 0};
    for (size_t i = first; i < last; i += static_cast<size_t>(o_.batch)) {
      const std::span<const uint32_t> rows(eval_.data() + i, std::min(last - i, static_cast<size_t>(o_.batch)));
      const nn::CrossEntropyResult ce = model_->forward(make_seq2seq_batch(pairs_, rows, config_), {}, 0);
      sums[0] += ce.loss_sum;
      sums[1] += static_cast<double>(ce.counted);
    }
    comm_->all_reduce(sums, dist::ReduceOp::Sum);
    const double loss = sums[0] / sums[1];
    if (std::isnan(first_eval_)) first_eval_ = loss;
    last_eval_ = loss;
    log("{\"step\": " + std::to_string(step_) + ", \"eval_loss\": " + json_number(loss) +
        ", \"eval_pairs\": " + std::to_string(eval_.size()) + "}");
    if (verbose()) log_info("step " + std::to_string(step_) + " held-out loss " + json_number(loss, 5));
    return loss;
  }

  void save() {
    const std::pair<nn::Tensor, nn::Tensor> moments = optimizer_->full_moments();
    if (comm_->rank() != 0) return;
    train::TrainerState state;
    state.step = step_;
    state.seed = o_.seed;
    state.batch = o_.batch;
    state.optimizer = schedule_;
    state.eval_fraction = o_.eval_data.empty() ? o_.eval_fraction : 0;
    state.data = data_names_;
    state.data_sequences = pairs_.size();
    state.tokens_seen = tokens_seen_;
    nn::save_t5_dir(o_.out, *params_, config_, nn::DType::F32, {{"format", "pt"}, {"producer", "kglm verbalize"}},
                    [&](const fs::path& tmp) {
                      tokenizer_->save_hf_files(tmp);
                      write_lengths(tmp / kVerbalizerFile, o_.max_source_len, o_.max_target_len);
                      train::write_trainer_state(tmp, state, moments.first, moments.second);
                    });
  }

  Stats stats() const {
    Stats s;
    s.set("steps", step_);
    s.set("steps_run", steps_run_);
    s.set("train_pairs", static_cast<int64_t>(train_.size()));
    s.set("eval_pairs", static_cast<int64_t>(eval_.size()));
    s.set("sources_truncated", truncated_sources_);
    s.set("targets_truncated", truncated_targets_);
    s.set("bad_records", static_cast<int64_t>(errors_.count()));
    s.set("parameters", params_->parameter_count());
    s.set("tokens_seen", static_cast<int64_t>(tokens_seen_));
    s.set("ranks", comm_->size());
    // Losses in thousandths (the statistics are integers; the metrics log has them exactly).
    auto milli = [&](const char* key, double v) {
      if (!std::isnan(v)) s.set(key, std::llround(1000 * v));
    };
    milli("last_loss_milli", last_loss_);
    milli("first_eval_loss_milli", first_eval_);
    milli("last_eval_loss_milli", last_eval_);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    s.set("milliseconds", static_cast<int64_t>(1000 * seconds));
    if (seconds > 0) s.set("tokens_per_s", static_cast<int64_t>(static_cast<double>(tokens_run_()) / seconds));
    return s;
  }

  int64_t steps_done() const { return step_; }
  int64_t steps_run() const { return steps_run_; }
  bool verbose() const { return !o_.quiet && comm_->rank() == 0; }

 private:
  uint64_t tokens_run_() const { return tokens_seen_ - tokens_at_start_; }

  // The model: a checkpoint's (--resume), a model directory's (--init), or a new one (--config).
  void load_model() {
    fs::path from;
    if (!o_.resume.empty()) {
      from = o_.resume;
    } else if (!o_.init.empty()) {
      from = o_.init;
    }
    if (!from.empty()) {
      config_ = nn::read_t5_config(from / "config.json");
      tokenizer_ = tok::load_t5_tokenizer(from);
    } else {
      if (o_.config.empty() || o_.tokenizer.empty())
        throw UsageError("a new model needs --config CONFIG.json and --tokenizer SPM.model (or --init MODEL_DIR)");
      config_ = nn::read_t5_config(o_.config);
      tokenizer_ = tok::load_t5_tokenizer(o_.tokenizer);
    }
    if (o_.dropout >= 0) config_.dropout = o_.dropout;
    check_special_tokens(*tokenizer_, config_);
    params_ = std::make_unique<nn::ParameterStore>(o_.device);
    model_ = std::make_unique<nn::T5Model>(config_, *params_);
    params_->allocate();
    model_->initialize(o_.seed);
    if (!from.empty()) nn::load_t5_weights(from, *params_, config_);
  }

  void load_data() {
    std::vector<TrainingPair> pairs;
    for (const std::string& path : o_.data) {
      std::vector<TrainingPair> part = read_training_pairs(path, errors_);
      std::move(part.begin(), part.end(), std::back_inserter(pairs));
      data_names_ += (data_names_.empty() ? "" : ",") + path;
    }
    std::vector<TrainingPair> held;
    if (!o_.eval_data.empty()) held = read_training_pairs(o_.eval_data, errors_);
    errors_.finish(o_.data);
    if (pairs.empty()) throw Error("no training pair in " + data_names_);
    auto encode = [&](const TrainingPair& p) {
      return EncodedPair{encode_text(*tokenizer_, p.source, o_.max_source_len, truncated_sources_),
                         encode_text(*tokenizer_, p.target, o_.max_target_len, truncated_targets_)};
    };
    for (const TrainingPair& p : pairs) pairs_.push_back(encode(p));
    // Held out: a file, or the pairs whose index hashes below the fraction (at most eval_max).
    for (uint32_t i = 0; i < pairs.size(); ++i) {
      const bool held_out = held.empty() && o_.eval_fraction > 0 && static_cast<int64_t>(eval_.size()) < o_.eval_max &&
                            Rng(0x76657262, i, 0).uniform() < o_.eval_fraction;  // by index: any seed alike
      (held_out ? eval_ : train_).push_back(i);
    }
    for (const TrainingPair& p : held) {
      eval_.push_back(static_cast<uint32_t>(pairs_.size()));
      pairs_.push_back(encode(p));
    }
    if (train_.empty()) throw Error("every training pair is held out: lower --eval-fraction");
    if (o_.batch < comm_->size())
      throw UsageError("--batch " + std::to_string(o_.batch) +
                       " is the global batch: it needs a pair for each of the " + std::to_string(comm_->size()) +
                       " ranks");
    if (verbose())
      log_info(std::to_string(train_.size()) + " training pairs, " + std::to_string(eval_.size()) + " held out; " +
               std::to_string(params_->parameter_count()) + " parameters" +
               (comm_->size() > 1 ? "; " + std::to_string(comm_->size()) + " ranks (" + comm_->backend() + ")"
                                  : std::string()));
    if (verbose() && (truncated_sources_ > 0 || truncated_targets_ > 0))
      log_warning(std::to_string(truncated_sources_) + " inputs and " + std::to_string(truncated_targets_) +
                  " sentences were cut to --max-source-len / --max-target-len");
  }

  void start_or_resume() {
    schedule_ = o_.optimizer;
    schedule_.total_steps = o_.steps;
    optimizer_ = std::make_unique<nn::AdamW>(*params_, schedule_);
    if (!o_.resume.empty()) {
      const train::TrainerState state = train::read_trainer_state(o_.resume);
      if (state.seed != o_.seed || state.batch != o_.batch || state.optimizer.total_steps != o_.steps ||
          state.data_sequences != pairs_.size())
        throw UsageError(
            "--resume: " + o_.resume +
            " was written with another --seed, --batch, --steps or data; a resumed run keeps its settings");
      train::restore_optimizer(o_.resume, *optimizer_, state.step);
      step_ = state.step;
      tokens_seen_ = tokens_at_start_ = state.tokens_seen;
      if (verbose()) log_info("resuming at step " + std::to_string(step_));
    }
    if (comm_->rank() == 0) log_.open(o_.log, o_.tensorboard, !o_.resume.empty(), step_);
  }

  const std::vector<uint32_t>& epoch_order(int64_t epoch) {
    if (epoch == order_epoch_) return order_;
    order_epoch_ = epoch;
    order_.resize(train_.size());
    std::iota(order_.begin(), order_.end(), 0u);
    Rng rng(o_.seed, static_cast<uint64_t>(epoch), kEpochStream);
    for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng.below(i)]);
    return order_;
  }

  void log(const std::string& line) {
    if (log_.is_open()) log_.write(line);
  }

  const TrainOptions& o_;
  std::shared_ptr<dist::Communicator> comm_;
  nn::T5Config config_;
  std::unique_ptr<tok::Tokenizer> tokenizer_;
  std::unique_ptr<nn::ParameterStore> params_;
  std::unique_ptr<nn::T5Model> model_;
  std::unique_ptr<nn::AdamW> optimizer_;
  nn::OptimizerOptions schedule_;
  ErrorCounter errors_{ErrorLimit{}};
  std::string data_names_;
  std::vector<EncodedPair> pairs_;
  std::vector<uint32_t> train_, eval_;  // indexes into pairs_
  int64_t truncated_sources_ = 0, truncated_targets_ = 0;
  int64_t step_ = 0, steps_run_ = 0;
  uint64_t tokens_seen_ = 0, tokens_at_start_ = 0;
  double last_loss_ = NAN, first_eval_ = NAN, last_eval_ = NAN;
  int64_t order_epoch_ = -1;
  std::vector<uint32_t> order_;
  OutputLock output_lock_;  // rank 0: --out, for the whole run
  train::MetricsLog log_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

int run_train(const TrainOptions& o) {
  nn::set_compute_threads(static_cast<int>(o.threads));
  if (o.data.empty()) throw UsageError("training pairs are required (FILE...)");
  if (o.out.empty()) throw UsageError("--out DIR is required");
  if (o.steps < 1 || o.batch < 1) throw UsageError("--steps and --batch must be ≥ 1");
  if (o.max_source_len < 2 || o.max_target_len < 2)
    throw UsageError("--max-source-len and --max-target-len must be ≥ 2");
  if (!o.resume.empty() && !o.init.empty()) throw UsageError("--resume continues a run; --init starts one: not both");
  nn::require_device(o.device);
  defer_signal(SIGUSR1);  // checkpoint and stop, rather than be killed
  const std::shared_ptr<dist::Communicator> comm = dist::make_communicator(o.device);
  Run run(o, comm);
  if (run.steps_done() == 0) run.evaluate();  // the start of a fresh run (a resumed one logged it)
  bool stopped = false;
  while (!run.done()) {
    const bool go_on = run.step();
    if (o.eval_every > 0 && run.steps_done() % o.eval_every == 0 && !run.done()) run.evaluate();
    const bool time_up = o.stop_after > 0 && run.steps_run() >= o.stop_after;
    if ((!go_on || time_up) && !run.done()) {
      run.save();
      if (run.verbose())
        log_warning("stopped at step " + std::to_string(run.steps_done()) + " of " + std::to_string(o.steps) +
                    (go_on ? " (--stop-after)" : " on SIGUSR1") + ": --resume " + o.out + " continues");
      stopped = true;
      break;
    }
    if (o.save_every > 0 && run.steps_done() % o.save_every == 0 && !run.done()) run.save();
  }
  if (!stopped) {
    run.evaluate();
    run.save();
  }
  Stats stats = run.stats();
  if (comm->rank() == 0) {
    if (!o.stats_file.empty()) stats.write_json(o.stats_file);
    if (!o.quiet) stats.print();
  }
  return stopped ? train::kExitStopped : 0;
}

}  // namespace kglm::verbalize
