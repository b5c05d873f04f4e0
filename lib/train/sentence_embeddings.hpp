// `pretrain embed`: sentence embeddings of a text file from an encoder (a kglm checkpoint, a
// transformers BERT / XLM-R directory, or sentence-transformers' all-MiniLM-L6-v2): each line is
// tokenised with the model's tokenizer between its [CLS]/<s> and [SEP]/</s>, truncated to --max-len,
// run through the encoder without gradients, and one layer's states pooled — mean over the real
// tokens (special tokens included), the first token, or the maximum — and optionally L2-normalised.
// With --pool mean --normalize and the model's max_seq_length this is what sentence-transformers'
// encode() computes for all-MiniLM-L6-v2 (tests/references/embeddings_check.py compares the two).
// Output: HDF5 with "embeddings" float32 [lines, hidden], row i for line i. An ELMo model directory
// gives word vectors instead (train/elmo_embeddings.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "nn/tensor.hpp"

namespace kglm::train {

enum class SentencePooling : uint8_t { mean, cls, max };
SentencePooling parse_sentence_pooling(const std::string& name);  // mean | cls | max; UsageError otherwise

struct EmbedOptions {
  std::string model;                // model directory
  std::vector<std::string> inputs;  // text files, one sentence a line ("-": stdin)
  std::string output;               // the HDF5 file
  SentencePooling pooling = SentencePooling::mean;
  int64_t layer = -1;      // -1: the last; 0: the embeddings' output; l: layer l's output
  bool normalize = false;  // L2-normalise each embedding
  int64_t max_len = 0;     // tokens with the special ones; 0: sentence_bert_config.json's, else the positions'
  int64_t batch = 64;
  std::string elmo_layers = "all";  // an ELMo model (train/elmo_embeddings.hpp): all | average | top
  nn::Device device = nn::Device::Cpu;
  std::string precision = "fp32";  // fp32 or bf16 (the CPU's products: nn/cpu_precision.hpp)
  unsigned threads = 1;
  bool quiet = false;
  std::string command_line;
};

Stats run_embed(const EmbedOptions& options);

// The embeddings of `lines` (one sentence each) from the encoder in options.model, pooled and
// normalised as options say (the inputs and output are not read): what run_embed writes.
struct SentenceEmbeddings {
  std::vector<float> vectors;  // [lines, hidden]
  int64_t hidden = 0, layer = 0, max_len = 0;
};
SentenceEmbeddings embed_lines(const EmbedOptions& options, const std::vector<std::string>& lines, Stats& stats);

}  // namespace kglm::train
