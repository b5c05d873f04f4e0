// The options of BERT's WordPiece tokenizer, as HF BertTokenizer names them in tokenizer_config.json.
// Apart from wordpiece_tokenizer.hpp so that code including SentencePiece's header, whose
// absl::string_view clashes with Abseil's, can use them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kglm::tok {

struct WordPieceOptions {
  bool lower_case = true;
  std::optional<bool> strip_accents;  // unset: strip when lower-casing (BertTokenizer's strip_accents=None)
  bool tokenize_chinese_chars = true;
  uint32_t max_input_chars_per_word = 100;
  std::string unk_token = "[UNK]", cls_token = "[CLS]", sep_token = "[SEP]", pad_token = "[PAD]", mask_token = "[MASK]";

  bool strips_accents() const { return strip_accents.value_or(lower_case); }
  bool operator==(const WordPieceOptions&) const = default;
};

}  // namespace kglm::tok
