#include "probe/masked_lm.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "nn/checkpoint.hpp"
#include "nn/ops/cross_entropy.hpp"
#include "nn/torch_checkpoint.hpp"

namespace kglm::probe {

namespace fs = std::filesystem;

MaskedLm::MaskedLm(const fs::path& dir, nn::Device device, int64_t batch, int64_t batch_tokens)
    : config_(nn::read_model_config(dir / "config.json")),
      tokenizer_(tok::load_tokenizer(dir)),
      params_(device),
      batch_(std::max<int64_t>(batch, 1)),
      batch_tokens_(batch_tokens) {
  if (tokenizer_->special().mask < 0) throw Error(dir.string() + ": the tokenizer has no mask token");
  if (tokenizer_->vocab_size() > config_.vocab_size)
    throw Error(dir.string() + ": the tokenizer's " + std::to_string(tokenizer_->vocab_size()) +
                " tokens do not fit the model's vocabulary of " + std::to_string(config_.vocab_size));
  encoder_.emplace(config_, params_);
  head_.emplace(config_, params_, encoder_->word_embeddings());
  params_.allocate(1, false);  // forward passes only: no gradient buffers
  try {
    nn::load_parameters(nn::open_model_weights(dir), params_, false);
  } catch (const Error& e) {
    throw Error(dir.string() + ": not a masked language model with its MLM head: " + e.what());
  }
  params_.refresh_compute();
}

int64_t MaskedLm::max_sequence() const {
  // RoBERTa numbers positions from pad + 1.
  const int64_t offset = config_.architecture == nn::Architecture::XlmRoberta ? config_.pad_token_id + 1 : 0;
  return config_.max_positions - offset;
}

void MaskedLm::fill(std::span<const FillRequest> requests, std::vector<std::vector<TokenGuess>>& out) {
  out.assign(requests.size(), {});
  // Longest first: batches of similar lengths, whose attention costs are even.
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].ids->size() > requests[b].ids->size(); });
  for (size_t first = 0; first < order.size();) {
    size_t count = 0;
    if (batch_tokens_ > 0) {  // at least one sequence, then as many as fit the budget
      size_t tokens = 0;
      while (first + count < order.size() &&
             (count == 0 || tokens + requests[order[first + count]].ids->size() <= static_cast<size_t>(batch_tokens_)))
        tokens += requests[order[first + count++]].ids->size();
    } else {
      count = std::min(order.size() - first, static_cast<size_t>(batch_));
    }
    run_batch(requests, std::span<const size_t>(order).subspan(first, count), out);
    first += count;
  }
}

void MaskedLm::run_batch(std::span<const FillRequest> requests, std::span<const size_t> order,
                         std::vector<std::vector<TokenGuess>>& out) {
  const int64_t b = static_cast<int64_t>(order.size());
  int64_t t = 0;
  for (size_t i : order) t = std::max<int64_t>(t, static_cast<int64_t>(requests[i].ids->size()));
  if (t > max_sequence())
    throw Error("probe: a sequence of " + std::to_string(t) + " tokens is longer than the model's " +
                std::to_string(max_sequence()) + " positions");
  std::vector<std::vector<int32_t>> ids;
  std::vector<int32_t> rows;
  int32_t row0 = 0;  // the packed row of the sequence's first token
  for (size_t i : order) {
    const FillRequest& request = requests[i];
    ids.push_back(*request.ids);
    for (int32_t p : request.positions) {
      if (p < 0 || static_cast<size_t>(p) >= request.ids->size())
        throw Error("probe: position " + std::to_string(p) + " outside a sequence of " +
                    std::to_string(request.ids->size()));
      rows.push_back(row0 + p);
    }
    row0 += static_cast<int32_t>(request.ids->size());
  }
  const nn::EncoderBatch batch = nn::pack_sequences(ids, {}, config_);
  const nn::Tensor& hidden = encoder_->forward(batch, nn::DropoutContext{});
  ++forward_passes_;
  sequences_ += b;
  if (rows.empty()) return;
  const nn::Tensor row_tensor = nn::Tensor::from<int32_t>({static_cast<int64_t>(rows.size())}, rows);
  nn::best_classes(head_->predict(hidden, row_tensor), classes_, log_probs_);
  size_t k = 0;
  for (size_t i : order) {
    std::vector<TokenGuess>& guesses = out[i];
    guesses.resize(requests[i].positions.size());
    for (TokenGuess& g : guesses) {
      g = {classes_[k], log_probs_[k]};
      ++k;
    }
  }
}

}  // namespace kglm::probe
