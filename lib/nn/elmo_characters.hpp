// ELMo's characters of a token (bilm-tf's UnicodeCharsVocabulary, AllenNLP's ELMoCharacterMapper):
// its UTF-8 bytes, cut to max − 2, between a begin-of-word and an end-of-word character and padded
// to max; the sentence markers <S> and </S> are [begin-of-word, begin|end-of-sentence, end-of-word,
// padding…]. A model trained with 261 characters reads these ids as they are; one with 262 (the
// public models, and every model after training) reads each id + 1, keeping 0 for the padding of
// whole words (masked positions).
#pragma once

#include <cstdint>
#include <string_view>

namespace kglm::nn {

inline constexpr int32_t kBeginSentenceChar = 256, kEndSentenceChar = 257, kBeginWordChar = 258, kEndWordChar = 259,
                         kPaddingChar = 260;
inline constexpr std::string_view kBeginSentence = "<S>", kEndSentence = "</S>";

// Writes the `max_characters` ids of `token` to out, each + 1 when `characters` is 262.
void elmo_character_ids(std::string_view token, int64_t max_characters, int64_t characters, int32_t* out);

}  // namespace kglm::nn
