// Token ids of the verbaliser's inputs and targets, and the padded batches the T5 model reads.
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

// Host tensors of one batch: the examples `rows` of `pairs`, sources and targets right-padded to
// the batch's longest (or to source_len and target_len when longer: a data-parallel rank pads its
// share as the whole global batch is padded, so that dropout draws alike), the decoder input
// shifted right from the labels (padding ignored).
nn::Seq2SeqBatch make_seq2seq_batch(std::span<const EncodedPair> pairs, std::span<const uint32_t> rows,
                                    const nn::T5Config& config, int64_t source_len = 0, int64_t target_len = 0);

// Sources only (generation): ids I32 [B·S] and mask I32 [B·S], S the longest.
struct SourceBatch {
  int64_t batch = 0, length = 0;
  nn::Tensor input_ids, attention_mask;
};
SourceBatch make_source_batch(std::span<const std::vector<int32_t>> sources, const nn::T5Config& config,
                              int64_t length = 0);

}  // namespace kglm::verbalize
