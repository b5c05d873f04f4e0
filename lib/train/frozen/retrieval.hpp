// `finetune retrieve`: Tatoeba-style parallel sentence retrieval with no training (the multilingual
// ELMo paper's §3.3 and XTREME's protocol). Each sentence is embedded as `pretrain embed` does —
// the mean over its positions of one layer's vectors, L2-normalised (transformers: every token,
// the special ones included, of layer L/2 + 1 by default, XTREME's layer 7 of mBERT's 12 and 13
// of XLM-R's 24; ELMo: every word, ICU word breaks, of the top LSTM layer by default) — and each
// English sentence retrieves its nearest neighbour by cosine among the other language's: the
// accuracy is the share that find their own translation (the paper's and XTREME's direction),
// the reverse direction reported beside it. Results as the fine-tuning tasks' table (one "seed":
// the method is deterministic).
#pragma once

#include "train/finetune.hpp"

namespace kglm::train::frozen {

struct RetrieveOptions : FinetuneCommon {
  std::string model;               // an ELMo or a transformer model directory
  std::vector<std::string> pairs;  // LANG=XX_FILE,EN_FILE: line i of one translates line i of the other
  int64_t layer = -1;              // -1: the default above
  bool whitespace = false;         // ELMo: whitespace-separated words instead of ICU word breaks
  std::string output;              // PREFIX of PREFIX.tsv and PREFIX.json
};

int run_retrieve(const RetrieveOptions& options);

// The accuracy of retrieving row i of `queries` as row i of `index` by the largest dot product
// (both [n, dim], row-major; the first of equal maxima wins).
double retrieval_accuracy(const std::vector<float>& queries, const std::vector<float>& index, int64_t n, int64_t dim);

}  // namespace kglm::train::frozen
