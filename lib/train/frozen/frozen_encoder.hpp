// The encoder of the frozen-feature tasks (the multilingual ELMo paper's §3.3 evaluation): a
// pre-trained model run without gradients that gives every word of a sentence one vector per
// layer, for a task head to mix (nn/scalar_mix.hpp) or pick one layer of.
//  - ELMo (an options.json + weights.hdf5 directory): layer 0 the character encoder's token vector
//    twice ([x; x], as AllenNLP does), layer l the forward and backward LSTM outputs of layer l side
//    by side; each sentence read from a zero state between <S> and </S>, which are left out.
//  - A transformer encoder (kglm checkpoint, XLM-R or BERT directory): layer 0 the embeddings'
//    output, layer l the l-th layer's; each word is tokenised on its own (as the token task does)
//    and represented by its first sub-token; the sentence between [CLS]/<s> and [SEP]/</s>. Words
//    past the model's positions get zero vectors (counted in cut_words()).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nn/tensor.hpp"

namespace kglm::train::frozen {

using Words = std::vector<std::string>;

class FrozenEncoder {
 public:
  virtual ~FrozenEncoder() = default;
  // The representations a mix can weigh: ELMo 1 + LSTM layers, transformers 1 + layers.
  int64_t layers() const { return layers_; }
  int64_t width() const { return width_; }
  // "elmo" or the transformer's architecture ("xlm-roberta", "bert").
  const std::string& kind() const { return kind_; }
  uint64_t cut_words() const { return cut_words_; }

  // Calls take(i, vectors) for every sentence i, in an order of the encoder's choosing; vectors is
  // F32 [layers, words_i, width] row-major (valid during the call; nullptr for no words).
  using Take = std::function<void(size_t sentence, const float* vectors)>;
  void encode(std::span<const Words> sentences, const Take& take);

 protected:
  // One batch of sentences (indices into `sentences`), each written through take.
  virtual void encode_batch(std::span<const Words> sentences, std::span<const size_t> batch, const Take& take) = 0;
  // ELMo needs equal lengths in a batch (one window per sentence, no padding).
  virtual bool equal_lengths() const = 0;
  friend std::unique_ptr<FrozenEncoder> open_frozen_encoder(const std::string&, nn::Device, int64_t);
  std::string kind_;
  int64_t layers_ = 0, width_ = 0, batch_ = 32;
  uint64_t cut_words_ = 0;
};

// The encoder in `dir` (an ELMo or a transformer model directory) on `device`, `batch` sentences
// at a time. Throws Error saying why when the directory holds neither.
std::unique_ptr<FrozenEncoder> open_frozen_encoder(const std::string& dir, nn::Device device, int64_t batch);

}  // namespace kglm::train::frozen
