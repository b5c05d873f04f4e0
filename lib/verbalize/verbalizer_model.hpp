// A trained verbaliser loaded for generation: a T5 model directory (verbalize train's --out, or any
// Hugging Face T5/mT5 directory with model.safetensors and spiece.model) and the lengths it was
// trained with.
#pragma once

#include <filesystem>
#include <memory>

#include "nn/t5.hpp"
#include "tok/tokenizer.hpp"

namespace kglm::verbalize {

struct Verbalizer {
  nn::T5Config config;
  std::unique_ptr<tok::Tokenizer> tokenizer;
  std::unique_ptr<nn::ParameterStore> params;
  std::unique_ptr<nn::T5Model> model;
  int64_t max_source_len = 128, max_target_len = 128;  // verbalizer.json's, else these
};

// Weights without gradients (a model that only predicts), on `device`.
Verbalizer load_verbalizer(const std::filesystem::path& dir, nn::Device device = nn::Device::Cpu);

}  // namespace kglm::verbalize
