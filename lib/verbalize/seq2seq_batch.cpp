#include "verbalize/seq2seq_batch.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "nn/ops/cross_entropy.hpp"

namespace kglm::verbalize {

std::vector<int32_t> encode_text(const tok::Tokenizer& tokenizer, const std::string& text, int64_t max_len,
                                 int64_t& truncated) {
  thread_local tok::Encoding encoding;
  tokenizer.encode(text, encoding);
  std::vector<int32_t> ids(encoding.ids.begin(), encoding.ids.end());
  if (static_cast<int64_t>(ids.size()) + 1 > max_len) {
    ids.resize(static_cast<size_t>(std::max<int64_t>(max_len - 1, 0)));
    ++truncated;
  }
  ids.push_back(tokenizer.special().eos);
  return ids;
}

void check_special_tokens(const tok::Tokenizer& tokenizer, const nn::T5Config& config) {
  const tok::SpecialTokens& s = tokenizer.special();
  if (s.pad != config.pad_token_id || s.eos != config.eos_token_id)
    throw Error("the tokenizer's <pad> and </s> are " + std::to_string(s.pad) + " and " + std::to_string(s.eos) +
                ", the model's pad_token_id and eos_token_id " + std::to_string(config.pad_token_id) + " and " +
                std::to_string(config.eos_token_id) + ": not the model's tokenizer");
  if (tokenizer.vocab_size() > config.vocab_size)
    throw Error("the tokenizer has " + std::to_string(tokenizer.vocab_size()) + " pieces, the model's vocabulary " +
                std::to_string(config.vocab_size));
}

nn::Seq2SeqBatch make_seq2seq_batch(std::span<const EncodedPair> pairs, std::span<const uint32_t> rows,
                                    const nn::T5Config& config, int64_t source_len, int64_t target_len) {
  std::vector<std::vector<int32_t>> sources;
  sources.reserve(rows.size());
  for (uint32_t r : rows) sources.push_back(pairs[r].source);
  const SourceBatch source = make_source_batch(sources, config, source_len);
  nn::Seq2SeqBatch b;
  b.batch = source.batch;
  b.source_len = source.length;
  b.input_ids = source.input_ids;
  b.attention_mask = source.attention_mask;
  b.target_len = target_len;
  for (uint32_t r : rows) b.target_len = std::max<int64_t>(b.target_len, static_cast<int64_t>(pairs[r].target.size()));
  std::vector<int32_t> labels(static_cast<size_t>(b.batch * b.target_len), nn::kIgnoreIndex);
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::vector<int32_t>& t = pairs[rows[i]].target;
    std::copy(t.begin(), t.end(), labels.begin() + static_cast<int64_t>(i) * b.target_len);
  }
  b.labels = nn::Tensor::from<int32_t>({b.batch * b.target_len}, labels);
  b.decoder_input_ids = nn::shift_right(b.labels, b.batch, b.target_len, config);
  return b;
}

SourceBatch make_source_batch(std::span<const std::vector<int32_t>> sources, const nn::T5Config& config,
                              int64_t length) {
  SourceBatch b;
  b.batch = static_cast<int64_t>(sources.size());
  b.length = length;
  for (const auto& s : sources) b.length = std::max<int64_t>(b.length, static_cast<int64_t>(s.size()));
  std::vector<int32_t> ids(static_cast<size_t>(b.batch * b.length), static_cast<int32_t>(config.pad_token_id));
  std::vector<int32_t> mask(ids.size(), 0);
  for (size_t i = 0; i < sources.size(); ++i) {
    std::copy(sources[i].begin(), sources[i].end(), ids.begin() + static_cast<int64_t>(i) * b.length);
    std::fill_n(mask.begin() + static_cast<int64_t>(i) * b.length, sources[i].size(), 1);
  }
  b.input_ids = nn::Tensor::from<int32_t>({b.batch * b.length}, ids);
  b.attention_mask = nn::Tensor::from<int32_t>({b.batch * b.length}, mask);
  return b;
}

}  // namespace kglm::verbalize
