// Token ids of the verbaliser's inputs and targets, and the packed batches the T5 model reads.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nn/t5.hpp"
#include "tok/tokenizer.hpp"

namespace kglm::verbalize {

struct EncodedPair {
  std::vector<int32_t> source, target;  // each ends with </s> (target: empty when there is none)
};

// text's tokens then </s>, cut to max_len tokens in all (</s> kept last). `truncated` counts cuts.
std::vector<int32_t> encode_text(const tok::Tokenizer& tokenizer, const std::string& text, int64_t max_len,
                                 int64_t& truncated);

// The model's and the tokenizer's special ids must agree (T5: pad 0, </s> 1); kglm::Error saying
// which differs otherwise.
void check_special_tokens(const tok::Tokenizer& tokenizer, const nn::T5Config& config);

// Host tensors of one packed batch: the examples `rows` of `pairs`, their sources and targets
// (no padding), the decoder input shifted right from the labels.
nn::Seq2SeqBatch make_seq2seq_batch(std::span<const EncodedPair> pairs, std::span<const uint32_t> rows,
                                    const nn::T5Config& config);

// Sources only (generation): a packed batch, ids I32 [sources.tokens()].
struct SourceBatch {
  nn::PackedSequences sequences;
  nn::Tensor input_ids;
  int64_t batch() const { return sequences.sequences(); }
};
SourceBatch make_source_batch(std::span<const std::vector<int32_t>> sources);

}  // namespace kglm::verbalize
