#include "train/pretrain.hpp"

#include "core/error.hpp"
#include "dist/communicator.hpp"
#include "nn/threads.hpp"
#include "train/trainer.hpp"

namespace kglm::train {

namespace {

// The schedule of a pre-training run; the Trainer does the work.
void train(const PretrainOptions& o, const std::shared_ptr<dist::Communicator>& comm) {
  Trainer trainer(o, comm);
  while (!trainer.done()) {
    const int64_t step = trainer.step().step;
    if (o.eval_every > 0 && step % o.eval_every == 0) trainer.evaluate();
    if (o.save_every > 0 && step % o.save_every == 0 && step != o.steps) trainer.save();
  }
  if (o.eval_every == 0 || trainer.steps_done() % o.eval_every != 0) trainer.evaluate();
  trainer.save();

  if (!o.stats_file.empty() || !o.quiet) {
    const Stats stats = trainer.stats();  // every rank: the statistics are summed across ranks
    if (comm->rank() != 0) return;
    if (!o.stats_file.empty()) stats.write_json(o.stats_file);
    if (!o.quiet) stats.print();
  }
}

}  // namespace

void run_pretrain(const PretrainOptions& o) {
  nn::set_compute_threads(static_cast<int>(o.threads));
  if (o.out.empty()) throw UsageError("--out CKPT_DIR is required");
  if (o.batch < 0 || o.accumulate < 0 || o.steps < 1) throw UsageError("--batch, --accumulate and --steps must be ≥ 1");
  nn::require_device(o.device);
  const std::shared_ptr<dist::Communicator> comm = dist::make_communicator(o.device);
  if (comm->size() == 1) return train(o, comm);
  // One rank's error would leave the others waiting in a collective: it ends the whole job.
  try {
    train(o, comm);
  } catch (const UsageError& e) {
    comm->abort("pretrain: rank " + std::to_string(comm->rank()) + ": " + e.what(), 2);
  } catch (const std::exception& e) {
    comm->abort("pretrain: error: rank " + std::to_string(comm->rank()) + ": " + e.what(), 1);
  }
  comm->barrier();  // rank 0 may still be writing the checkpoint
}

}  // namespace kglm::train
