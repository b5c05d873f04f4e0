// `finetune`: fine-tuning of a pre-trained encoder on a task (token, sequence, relation, choice)
// over several seeds, with evaluation on dev during training (the best model kept) and on test
// files per language afterwards (the zero-shot cross-lingual protocol of XTREME, KMLM and
// EntityCS); `finetune evaluate` and `finetune predict` on saved models.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "nn/model_config.hpp"
#include "nn/optimizer.hpp"
#include "nn/tensor.hpp"
#include "tok/tokenizer.hpp"
#include "train/tasks/task_config.hpp"
#include "train/tasks/task_data.hpp"
#include "train/tasks/task_model.hpp"

namespace kglm::train {

// What the three commands share.
struct FinetuneCommon {
  tasks::ReadOptions read;
  int64_t batch = 32;
  int64_t batch_tokens = 0;  // > 0: batches by this token budget instead of --batch (token_batches.hpp)
  nn::Device device = nn::Device::Cpu;
  std::string precision = "fp32";  // fp32 or bf16 (the CPU's products: nn/cpu_precision.hpp)
  unsigned threads = 1;
  bool quiet = false;
  ErrorLimit max_errors;
  std::string stats_file;
  std::string command_line;
};

struct FinetuneOptions : FinetuneCommon {
  std::string task;                // token, sequence, relation, choice, qa, wic or slots
  std::string init;                // Hugging Face model directory (pretrain's checkpoints are)
  std::string train, dev;          // PATH or LANG=PATH; dev optional
  std::vector<std::string> tests;  // LANG=PATH
  std::string out;                 // the run directory
  // Set by a caller that checked --out itself (check_run_directory) and then put its own files in
  // it: verbalize train-filter's filter-train.tsv and filter-dev.tsv.
  bool out_checked = false;
  std::string tensorboard;  // TensorBoard event files, one run per seed: DIR/seed-S ("" = none)
  std::vector<uint64_t> seeds{11};
  int64_t epochs = 3, max_len = 128;
  tasks::QaWindowOptions qa_windows;  // qa: --doc-stride, --max-query-len
  tasks::QaDecodeOptions qa_decode;   // qa: --max-answer-len, --n-best
  bool intent = false;                // slots: --intent, an intent head beside the slot tagger
  double intent_weight = 1.0;         // slots: --intent-weight
  nn::OptimizerOptions optimizer;
  double warmup_ratio = 0.1;  // of the run's steps, unless warmup_steps ≥ 0
  int64_t warmup_steps = -1;
  std::string labels;  // "A,B,C" or @FILE (one per line): their order; "" = the training data's, sorted
  std::string pooling = "entity-start";
  std::string train_layers = "all";
  std::string tag_scheme;  // token task: "" = seqeval's default mode, else its strict mode in this scheme
  float dropout = -1;      // < 0: the model's own
  int64_t eval_every = 0, save_every = 0, log_every = 10;
  int64_t stop_after = 0;  // > 0: checkpoint and stop after this many steps of this invocation
  bool resume = false;
  bool frozen = false;  // --frozen: said explicitly (pos and parse always run on frozen features)
  // The frozen-feature tasks (pos, parse; train/frozen/frozen_run.hpp):
  int64_t layer = -1;                                        // the one layer the head reads; -1: a scalar mix of all
  int64_t mlp_size = 256, arc_size = 500, label_size = 100;  // pos MLP; the parser's arc and label MLPs
};

struct FinetuneEvaluateOptions : FinetuneCommon {
  std::string model;               // a run directory (every seed-*/best) or one model directory
  std::vector<std::string> tests;  // LANG=PATH
  std::string output;              // PREFIX of PREFIX.tsv and PREFIX.json
  std::string tag_scheme;          // as FinetuneOptions's
};

struct FinetunePredictOptions : FinetuneCommon {
  std::string model;  // a model directory (RUN_DIR/seed-S/best)
  std::string input;  // PATH or LANG=PATH
  std::string output;
};

// A saved fine-tuned model (finetune.json, config.json, model.safetensors, the tokenizer's files),
// its tokenizer and its task, ready to predict.
struct LoadedModel {
  tasks::TaskConfig task;
  tasks::LabelSet labels;
  tasks::LabelSet intents;  // slots with intents
  nn::ModelConfig config;
  const tasks::LabelSet* intents_or_null() const { return intents.size() > 0 ? &intents : nullptr; }
  std::unique_ptr<tok::Tokenizer> tokenizer;
  std::unique_ptr<tasks::TaskModel> model;
};
LoadedModel load_finetuned_model(const std::filesystem::path& dir, nn::Device device);

// "LANG=PATH" (LANG a language code), or a plain PATH when the language may be left out (UsageError
// naming `option` when it may not).
struct LangPath {
  std::string lang, path;
};
LangPath split_lang_path(const std::string& arg, bool lang_required, const char* option);

// The models of MODEL: one fine-tuned model directory (finetune.json and config.json, or a transformers
// task model's config.json), as seed 0, or a run directory's seed-*/best, by seed; kglm::Error when there is none.
std::vector<std::pair<uint64_t, std::filesystem::path>> finetuned_model_dirs(const std::string& model);

// The exit status: 0, or kExitStopped (75) when stopped by SIGUSR1 or --stop-after.
// A seed's TensorBoard directory: --tensorboard DIR's seed-S (TensorBoard lists each as a run), or
// DIR itself where it is a FIFO or device; "" without --tensorboard.
std::string seed_tensorboard_dir(const FinetuneOptions& options, uint64_t seed);

int run_finetune(const FinetuneOptions& options);

// A run directory may be new, empty, or an earlier fine-tuning run's (finetune.json, or seed-N/ as a
// frozen-feature run leaves): a folder of other things, named by mistake, is refused before any work
// rather than having seeds and results mixed into it (man 7 kglm, OUTPUTS). Throws Error.
void check_run_directory(const std::string& out);
int run_finetune_evaluate(const FinetuneEvaluateOptions& options);
int run_finetune_predict(const FinetunePredictOptions& options);

}  // namespace kglm::train
