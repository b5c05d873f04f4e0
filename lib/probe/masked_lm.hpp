// A checkpoint that pretrain reads (Hugging Face layout, XLM-R or BERT, with its MLM head) loaded
// for prediction only: forward passes over batches of sequences, the MLM head evaluated only at
// the asked positions, and the best token and its log-probability taken on the device.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include "nn/encoder.hpp"
#include "nn/heads.hpp"
#include "probe/mask_filler.hpp"
#include "tok/tokenizer.hpp"

namespace kglm::probe {

class MaskedLm final : public MaskFiller {
 public:
  // batch: sequences per forward pass; batch_tokens > 0: tokens per forward pass instead. Throws
  // Error naming dir when it is not a usable model (no config.json, no tokenizer, no MLM head
  // weights).
  MaskedLm(const std::filesystem::path& dir, nn::Device device, int64_t batch, int64_t batch_tokens = 0);

  const tok::Tokenizer& tokenizer() const { return *tokenizer_; }
  const nn::ModelConfig& config() const { return config_; }
  // The longest sequence the model's positions allow, special tokens included.
  int64_t max_sequence() const;

  // Requests are run longest first in packed batches, results in request order.
  void fill(std::span<const FillRequest> requests, std::vector<std::vector<TokenGuess>>& out) override;
  int32_t mask_id() const override { return tokenizer_->special().mask; }

  int64_t forward_passes() const { return forward_passes_; }
  int64_t sequences_run() const { return sequences_; }

 private:
  void run_batch(std::span<const FillRequest> requests, std::span<const size_t> order,
                 std::vector<std::vector<TokenGuess>>& out);

  nn::ModelConfig config_;
  std::unique_ptr<tok::Tokenizer> tokenizer_;
  nn::ParameterStore params_;
  std::optional<nn::Encoder> encoder_;
  std::optional<nn::MlmHead> head_;
  int64_t batch_, batch_tokens_;
  int64_t forward_passes_ = 0, sequences_ = 0;
  std::vector<int32_t> classes_;
  std::vector<double> log_probs_;
};

}  // namespace kglm::probe
