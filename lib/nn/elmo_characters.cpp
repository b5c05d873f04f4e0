#include "nn/elmo_characters.hpp"

#include <algorithm>

namespace kglm::nn {

void elmo_character_ids(std::string_view token, int64_t max_characters, int64_t characters, int32_t* out) {
  const int32_t offset = characters == 262 ? 1 : 0;
  std::fill(out, out + max_characters, kPaddingChar + offset);
  out[0] = kBeginWordChar + offset;
  if (token == kBeginSentence || token == kEndSentence) {
    out[1] = (token == kBeginSentence ? kBeginSentenceChar : kEndSentenceChar) + offset;
    out[2] = kEndWordChar + offset;
    return;
  }
  // Bytes, not code points: a multi-byte character cut at the limit leaves a partial sequence, as
  // in bilm-tf.
  const auto bytes = static_cast<int64_t>(std::min<size_t>(token.size(), static_cast<size_t>(max_characters - 2)));
  for (int64_t i = 0; i < bytes; ++i) out[1 + i] = static_cast<unsigned char>(token[i]) + offset;
  out[1 + bytes] = kEndWordChar + offset;
}

}  // namespace kglm::nn
