// `pretrain`: masked-language-model pre-training of an XLM-R or BERT encoder on a token dataset,
// on the CPU or GPUs, in one process or data-parallel across MPI ranks (one per GPU or CPU socket).
#pragma once

#include <cstdint>
#include <string>

#include "nn/optimizer.hpp"
#include "train/objectives/whole_word.hpp"

namespace kglm::train {

struct PretrainOptions {
  std::string data;         // token dataset (pretrain prepare): a path, a comma-separated list or a glob
  double cache_mb = 4096;   // token blocks held in memory; a larger dataset streams (TokenDatasetOptions)
  std::string tokenizer;    // tokenizer files copied into checkpoints (default: the dataset's)
  std::string init;         // HF model directory to start from ("" = random init)
  std::string resume;       // checkpoint directory written by pretrain ("" = fresh run)
  std::string out;          // checkpoint directory (rewritten atomically at every save)
  std::string log;          // metrics JSONL ("" = none)
  std::string tensorboard;  // a directory of TensorBoard event files mirroring the log ("" = none)
  std::string drawn;        // TSV: how often each sequence was drawn into this run's batches ("" = none)

  // Architecture of a randomly initialised model.
  std::string architecture;  // "xlm-roberta" | "bert" | "elmo" | "" (from the tokenizer kind)
  std::string elmo_options;  // elmo: bilm-tf's options.json (sizes, dropout, batch, unroll, negatives)
  int64_t layers = 4, hidden = 256, heads = 4, ffn = 1024;
  int64_t max_positions = 0;  // 0: the dataset's max_len (+ 2 for RoBERTa's offset)
  float dropout = 0.1f;

  // batch/accumulate 0: the checkpoint's when resuming, else 32 and 1.
  int64_t batch = 0, accumulate = 0, steps = 1000;
  nn::OptimizerOptions optimizer;
  MaskingOptions masking;
  // Objectives per sequence kind (objective_table.hpp); "" = the defaults (or the checkpoint's).
  std::string objectives;
  std::string entity_objective;  // EntityCS sentences' objective; "" = pep-ms+mlm (the paper's best)
  double kmlm_alpha = -1;        // α of L_MLM + α(L_K + L_R); < 0 = 0.3 (or the checkpoint's)
  // "all", or "last:K": only the embeddings, the last K layers and the MLM head (EntityCS §3);
  // "last:K,frozen-embeddings" freezes the embeddings too. "" = all (or the checkpoint's).
  std::string train_layers;
  double lang_alpha = -1;  // ≥ 0: one language per batch, q ∝ p^α

  double eval_fraction = 0.01;  // held-out sequences (chosen by a hash of the index)
  int64_t eval_max = 1000;      // at most this many of them
  int64_t eval_every = 0;       // steps; 0 = only at the end
  int64_t save_every = 0;       // steps; 0 = only at the end
  int64_t log_every = 10;       // progress lines on stderr

  double bucket_mb = 25;  // data parallelism: gradients are summed across ranks in buckets of this size
  int zero = 0;           // 1: ZeRO stage 1, AdamW's moments sharded across the ranks

  nn::Device device = nn::Device::Cpu;    // where the model, its gradients and AdamW's moments live
  nn::DType save_dtype = nn::DType::F32;  // model.safetensors' dtype: F32, BF16 or F16
  // "fp32", "bf16" (Ampere and newer) or "fp16" (with dynamic loss scaling): the dtype the model
  // computes in on CUDA, over F32 master weights and AdamW moments. "" = fp32 (or the checkpoint's).
  std::string precision;

  uint64_t seed = 0;
  bool seed_given = false;  // a resumed run refuses a different explicit --seed
  unsigned threads = 1;
  bool quiet = false;
  std::string stats_file;
  std::string command_line;
};

// The exit status of a run stopped early by SIGUSR1 after writing its checkpoint (EX_TEMPFAIL: run
// it again with --resume).
inline constexpr int kExitStopped = 75;

// Returns the exit status: 0, or kExitStopped.
int run_pretrain(const PretrainOptions& options);

}  // namespace kglm::train
