#include "train/pretrain.hpp"

#include <csignal>
#include <type_traits>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/temporaries.hpp"
#include "dist/communicator.hpp"
#include "nn/threads.hpp"
#include "train/elmo_trainer.hpp"
#include "train/trainer.hpp"

namespace kglm::train {

namespace {

// The schedule of a pre-training run; the trainer (the masked LM's or ELMo's) does the work.
// Returns the exit status.
template <typename AnyTrainer>
int train(const PretrainOptions& o, const std::shared_ptr<dist::Communicator>& comm) {
  AnyTrainer trainer(o, comm);
  while (!trainer.done()) {
    const auto r = trainer.step();
    if (r.stop_requested) {
      // Slurm's warning before the time limit (or preemption), seen by every rank at this step.
      trainer.save();
      if (comm->rank() == 0)
        log_warning("stopped at step " + std::to_string(r.step) + " of " + std::to_string(o.steps) +
                    " on SIGUSR1: checkpoint written to " + o.out + "; --resume " + o.out + " continues (exit status " +
                    std::to_string(kExitStopped) + ")");
      return kExitStopped;
    }
    if (o.eval_every > 0 && r.step % o.eval_every == 0) trainer.evaluate();
    if (o.save_every > 0 && r.step % o.save_every == 0 && r.step != o.steps) trainer.save();
  }
  if (o.eval_every == 0 || trainer.steps_done() % o.eval_every != 0) trainer.evaluate();
  trainer.save();
  if constexpr (std::is_same_v<AnyTrainer, Trainer>) trainer.write_drawn();

  if (!o.stats_file.empty() || !o.quiet) {
    const Stats stats = trainer.stats();  // every rank: the statistics are summed across ranks
    if (comm->rank() != 0) return 0;
    if (!o.stats_file.empty()) stats.write_json(o.stats_file);
    if (!o.quiet) stats.print();
  }
  return 0;
}

}  // namespace

int run_pretrain(const PretrainOptions& o) {
  nn::set_compute_threads(static_cast<int>(o.threads));
  if (o.out.empty()) throw UsageError("--out CKPT_DIR is required");
  if (o.batch < 0 || o.accumulate < 0 || o.steps < 1) throw UsageError("--batch, --accumulate and --steps must be ≥ 1");
  defer_signal(SIGUSR1);  // checkpoint and stop, rather than be killed
  const std::shared_ptr<dist::Communicator> comm = dist::make_communicator(o.device);
  return dist::run_on_every_rank(*comm, "pretrain", [&] {
    return o.architecture == "elmo" ? train<ElmoTrainer>(o, comm) : train<Trainer>(o, comm);
  });
}

}  // namespace kglm::train
