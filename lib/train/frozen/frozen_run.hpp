// `finetune --task pos|parse|nli`: the multilingual ELMo paper's evaluation on frozen
// representations (§3.3): the encoder (--init: ELMo or a transformer) runs once over each CoNLL-U
// file (or TSV of sentence pairs) without gradients, its per-word features are cached
// (feature_cache.hpp), and only the task head — a scalar mix of the layers (or --layer), then the
// PoS MLP, the biaffine parser or ESIM — is trained, one
// run per seed, the best on dev kept and scored on every test file (zero-shot transfer when trained
// on one language). Scores follow the CoNLL 2018 shared task's evaluator: every syntactic word
// counts (punctuation included); LAS compares the universal part of DEPREL.
// A saved model is RUN/seed-S/best: model.safetensors (the head) and frozen.json (the task, the
// encoder's directory, the labels and sizes).
#pragma once

#include <filesystem>

#include "train/finetune.hpp"

namespace kglm::train::frozen {

// Whether `name` is a frozen-feature task (pos, parse, nli).
bool is_frozen_task(const std::string& name);
// Whether `dir` is a saved frozen-feature model (it has frozen.json).
bool is_frozen_model(const std::filesystem::path& dir);

int run_frozen_finetune(const FinetuneOptions& options);
int run_frozen_evaluate(const FinetuneEvaluateOptions& options);
// Writes the input CoNLL-U with the predicted UPOS/XPOS (pos) or HEAD and DEPREL (parse), or a
// JSON line per pair with its predicted label (nli).
int run_frozen_predict(const FinetunePredictOptions& options);

}  // namespace kglm::train::frozen
