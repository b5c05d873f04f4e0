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

namespace {

// The sequences of `parts`, one after the other.
std::vector<int32_t> concatenated(std::span<const std::vector<int32_t>* const> parts, std::vector<int64_t>& lengths) {
  std::vector<int32_t> ids;
  for (const std::vector<int32_t>* p : parts) {
    ids.insert(ids.end(), p->begin(), p->end());
    lengths.push_back(static_cast<int64_t>(p->size()));
  }
  return ids;
}

}  // namespace

nn::Seq2SeqBatch make_seq2seq_batch(std::span<const EncodedPair> pairs, std::span<const uint32_t> rows,
                                    const nn::T5Config& config) {
  std::vector<const std::vector<int32_t>*> sources, targets;
  for (uint32_t r : rows) {
    sources.push_back(&pairs[r].source);
    targets.push_back(&pairs[r].target);
  }
  std::vector<int64_t> source_lengths, target_lengths;
  const std::vector<int32_t> ids = concatenated(sources, source_lengths),
                             labels = concatenated(targets, target_lengths);
  nn::Seq2SeqBatch b;
  b.sources = nn::PackedSequences::from_lengths(source_lengths);
  b.targets = nn::PackedSequences::from_lengths(target_lengths);
  b.input_ids = nn::Tensor::from<int32_t>({b.sources.tokens()}, ids);
  b.labels = nn::Tensor::from<int32_t>({b.targets.tokens()}, labels);
  b.decoder_input_ids = nn::shift_right(b.labels, b.targets, config);
  return b;
}

SourceBatch make_source_batch(std::span<const std::vector<int32_t>> sources) {
  std::vector<const std::vector<int32_t>*> parts;
  for (const auto& s : sources) parts.push_back(&s);
  std::vector<int64_t> lengths;
  const std::vector<int32_t> ids = concatenated(parts, lengths);
  SourceBatch b;
  b.sequences = nn::PackedSequences::from_lengths(lengths);
  b.input_ids = nn::Tensor::from<int32_t>({b.sequences.tokens()}, ids);
  return b;
}

}  // namespace kglm::verbalize
