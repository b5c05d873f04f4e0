// The encoder's hyper-parameters, read from and written to a Hugging Face config.json
// (model_type "xlm-roberta" or "bert"; "roberta" is read as xlm-roberta's architecture).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace kglm::nn {

enum class Architecture : uint8_t { XlmRoberta, Bert };

struct ModelConfig {
  Architecture architecture = Architecture::XlmRoberta;
  int64_t vocab_size = 0;
  int64_t hidden = 768;
  int64_t layers = 12;
  int64_t heads = 12;
  int64_t intermediate = 3072;
  int64_t max_positions = 514;
  int64_t type_vocab = 1;
  int64_t pad_token_id = 1;
  int64_t bos_token_id = 0;
  int64_t eos_token_id = 2;
  double layer_norm_eps = 1e-5;
  float hidden_dropout = 0.1f;
  float attention_dropout = 0.1f;
  double initializer_range = 0.02;

  // "roberta." or "bert.": the prefix of the encoder's tensor names.
  std::string prefix() const;
  // "xlm-roberta" / "bert".
  std::string model_type() const;
  // Throws kglm::Error naming the first inconsistent field (e.g. hidden not divisible by heads).
  void validate() const;
};

// Defaults of each architecture (positions as RoBERTa's padding offset needs, LayerNorm eps).
ModelConfig default_config(Architecture architecture, int64_t vocab_size);

ModelConfig read_model_config(const std::filesystem::path& config_json);
// Writes config.json (atomically) with the fields Hugging Face needs to load the model, and the
// `extra` members (key, JSON text), e.g. a classifier's id2label.
void write_model_config(const std::filesystem::path& config_json, const ModelConfig& config,
                        const std::string& architectures_name,
                        const std::vector<std::pair<std::string, std::string>>& extra = {});

}  // namespace kglm::nn
