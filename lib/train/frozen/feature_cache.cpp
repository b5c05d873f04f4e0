#include "train/frozen/feature_cache.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace kglm::train::frozen {

FeatureCache::FeatureCache(FrozenEncoder& encoder, std::span<const Words> sentences, int64_t layer)
    : layers_(layer < 0 ? encoder.layers() : 1), width_(encoder.width()) {
  if (layer >= encoder.layers())
    throw UsageError("--layer " + std::to_string(layer) + ": the " + encoder.kind() + " encoder has layers 0 to " +
                     std::to_string(encoder.layers() - 1));
  first_.reserve(sentences.size() + 1);
  first_.push_back(0);
  for (const Words& s : sentences) first_.push_back(first_.back() + static_cast<int64_t>(s.size()));
  const int64_t total = first_.back();
  data_.resize(static_cast<size_t>(layers_ * total * width_));
  const int64_t from = layer < 0 ? 0 : layer;
  encoder.encode(sentences, [&](size_t i, const float* vectors) {
    const int64_t n = words(i);
    for (int64_t l = 0; l < layers_; ++l)
      std::copy_n(vectors + (from + l) * n * width_, n * width_, data_.data() + (l * total + first_[i]) * width_);
  });
}

nn::Tensor FeatureCache::gather(std::span<const uint32_t> sentences, nn::Device device) const {
  int64_t n = 0;
  for (uint32_t s : sentences) n += words(s);
  nn::Tensor x = nn::Tensor::empty({layers_, n, width_}, nn::DType::F32);
  const int64_t total = first_.back();
  float* out = x.data<float>();
  for (int64_t l = 0; l < layers_; ++l)
    for (uint32_t s : sentences) {
      const int64_t count = words(s) * width_;
      out = std::copy_n(data_.data() + (l * total + first_[s]) * width_, count, out);
    }
  return device == nn::Device::Cpu ? x : x.to(device);
}

}  // namespace kglm::train::frozen
