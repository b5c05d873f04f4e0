#include "train/pretrain.hpp"

#include "core/error.hpp"
#include "nn/threads.hpp"
#include "train/trainer.hpp"

namespace kglm::train {

// The schedule of a pre-training run; the Trainer does the work.
void run_pretrain(const PretrainOptions& o) {
  nn::set_compute_threads(static_cast<int>(o.threads));
  if (o.out.empty()) throw UsageError("--out CKPT_DIR is required");
  if (o.batch < 0 || o.accumulate < 0 || o.steps < 1) throw UsageError("--batch, --accumulate and --steps must be ≥ 1");

  Trainer trainer(o);
  while (!trainer.done()) {
    const int64_t step = trainer.step().step;
    if (o.eval_every > 0 && step % o.eval_every == 0) trainer.evaluate();
    if (o.save_every > 0 && step % o.save_every == 0 && step != o.steps) trainer.save();
  }
  if (o.eval_every == 0 || trainer.steps_done() % o.eval_every != 0) trainer.evaluate();
  trainer.save();

  if (!o.stats_file.empty() || !o.quiet) {
    const Stats stats = trainer.stats();
    if (!o.stats_file.empty()) stats.write_json(o.stats_file);
    if (!o.quiet) stats.print();
  }
}

}  // namespace kglm::train
