// The hyper-parameters of a T5 encoder-decoder (T5 v1.0, v1.1, mT5), read from and written to a
// Hugging Face config.json (model_type "t5" or "mt5").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace kglm::nn {

// T5 v1.0: ReLU; v1.1 and mT5: gated GELU (tanh approximation), "gated-gelu".
enum class FeedForward : uint8_t { Relu, GatedGelu };

struct T5Config {
  std::string model_type = "t5";  // or "mt5" (the same architecture)
  int64_t vocab_size = 0;
  int64_t d_model = 512;
  int64_t d_kv = 64;  // per head; heads · d_kv need not equal d_model
  int64_t d_ff = 2048;
  int64_t layers = 6;          // encoder blocks
  int64_t decoder_layers = 6;  // decoder blocks
  int64_t heads = 8;
  int64_t buckets = 32;  // relative_attention_num_buckets
  int64_t max_distance = 128;
  float dropout = 0.1f;
  double layer_norm_eps = 1e-6;
  double initializer_factor = 1.0;
  FeedForward feed_forward = FeedForward::Relu;
  // Shared input embeddings and LM head; the decoder output is then scaled by d_model^-½ first.
  bool tie_embeddings = true;
  int64_t pad_token_id = 0;
  int64_t eos_token_id = 1;
  int64_t decoder_start_token_id = 0;

  int64_t inner() const { return heads * d_kv; }
  // Throws kglm::Error naming the first inconsistent field.
  void validate() const;
};

T5Config read_t5_config(const std::filesystem::path& config_json);
// Writes config.json atomically, with what Hugging Face needs to load T5ForConditionalGeneration
// (MT5ForConditionalGeneration for model_type mt5).
void write_t5_config(const std::filesystem::path& config_json, const T5Config& config);
// Whether a config.json describes a T5 model (model_type t5 or mt5), without validating it.
bool is_t5_config(const std::filesystem::path& config_json);

}  // namespace kglm::nn
