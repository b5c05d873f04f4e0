// Hugging Face T5 / mT5 model directories: config.json, model.safetensors (T5ForConditionalGeneration
// tensor names) and the tokenizer's files.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "nn/parameters.hpp"
#include "nn/t5_config.hpp"

namespace kglm::nn {

// Copies DIR/model.safetensors into the T5Model parameters of `params`. The copies of the shared
// embeddings that Hugging Face may store (encoder.embed_tokens.weight, decoder.embed_tokens.weight,
// and lm_head.weight when tied) must equal shared.weight; any other tensor the model does not have,
// and any parameter the file lacks, is an error naming it.
void load_t5_weights(const std::filesystem::path& dir, ParameterStore& params, const T5Config& config);

// Writes DIR atomically: config.json, model.safetensors (weights as `dtype`: F32, BF16 or F16;
// the shared embeddings once, as Hugging Face's safetensors saving does) and what write_files adds.
void save_t5_dir(const std::filesystem::path& dir, const ParameterStore& params, const T5Config& config, DType dtype,
                 const std::vector<std::pair<std::string, std::string>>& metadata,
                 const std::function<void(const std::filesystem::path&)>& write_files);

}  // namespace kglm::nn
