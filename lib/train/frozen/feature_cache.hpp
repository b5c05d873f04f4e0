// The frozen features of a file's sentences, computed once and kept in memory for every epoch and
// seed: the encoder is frozen and runs without dropout, so each epoch would compute exactly the
// same vectors again — caching saves all but the first encoder pass (for ELMo on the CPU, about
// 95% of a frozen PoS run's time). Memory: layers × words × width × 4 bytes (ELMo 3 × 1024 on
// EWT's 204,577 training words: 2.5 GB; one --layer keeps a third of that).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nn/tensor.hpp"
#include "train/frozen/frozen_encoder.hpp"

namespace kglm::train::frozen {

class FeatureCache {
 public:
  // layer < 0: every layer of the encoder; else that layer alone (0 … layers − 1).
  FeatureCache(FrozenEncoder& encoder, std::span<const Words> sentences, int64_t layer);

  int64_t layers() const { return layers_; }
  int64_t width() const { return width_; }
  size_t sentences() const { return first_.size() - 1; }
  int64_t words(size_t sentence) const { return first_[sentence + 1] - first_[sentence]; }
  size_t bytes() const { return data_.size() * sizeof(float); }

  // The features of the sentences' words, in order: F32 [layers, Σ words, width] on `device`.
  nn::Tensor gather(std::span<const uint32_t> sentences, nn::Device device) const;

 private:
  int64_t layers_, width_;
  std::vector<int64_t> first_;  // the first word of each sentence, and the total
  std::vector<float> data_;     // [layers, total words, width]
};

}  // namespace kglm::train::frozen
