// The semantic-quality filter of KELM's corpus (Agarwal et al. 2021, §2.3 and §3): a sequence-pair
// classifier over "[CLS] serialized triples [SEP] sentence" that scores how fully and faithfully a
// sentence says its triples. TEKGEN fine-tunes BERT on WebNLG's human ratings; lacking ratings,
// kglm trains on aligned pairs as positives and two negatives per pair: the triples with one
// object replaced by another pair's, and the sentence of another pair. It is finetune's sequence
// task (an XLM-R or BERT encoder checkpoint, --init) on those pairs; verbalize filter then scores
// generated sentences and drops the lowest (KELM: the bottom 1%) or those under a threshold.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/stats.hpp"
#include "nn/tensor.hpp"
#include "verbalize/verbalizer_training.hpp"

namespace kglm::verbalize {

struct FilterTrainOptions : RunSettings {
  // data: aligned pairs with triples (kg-align, verbalize render --mode pairs)
  std::string init;       // the encoder to fine-tune (a Hugging Face XLM-R or BERT directory)
  std::string out;        // the run directory (finetune's: seed-S/best is the filter)
  double held_out = 0.1;  // share of the pairs whose examples are held out (by the pair's index)
  int64_t epochs = 2, batch = 32, max_len = 128;
  double lr = 5e-5;
};

// Trains the filter and reports the held-out AUC of true pairs against corrupted ones.
int run_filter_train(const FilterTrainOptions& options);

struct FilterOptions {
  std::vector<std::string> inputs;  // verbalize generate's JSON lines
  std::string output;
  std::string model;          // a filter model directory, or a filter run (its seed-*/best, the lowest seed)
  double threshold = -1;      // ≥ 0: keep the sentences scored at least this
  double drop_fraction = -1;  // ≥ 0: drop this share of the lowest-scored (KELM: 0.01)
  int64_t batch = 64, max_len = 128;
  nn::Device device = nn::Device::Cpu;  // where the filter scores
  unsigned threads = 1;
  bool quiet = false;
  ErrorLimit max_errors;
};

// Adds "score" (the probability that the sentence says its triples) to every record and writes
// those kept, in input order.
Stats run_filter(const FilterOptions& options);

// The area under the ROC curve of scores for positives against negatives: the probability that a
// random positive scores above a random negative, ties counting one half (Mann–Whitney).
double roc_auc(const std::vector<double>& scores, const std::vector<uint8_t>& positive);

}  // namespace kglm::verbalize
