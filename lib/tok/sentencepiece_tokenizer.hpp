// SentencePiece with the id mapping of XLM-R (fairseq, HF XLMRobertaTokenizer): <s>=0, <pad>=1,
// </s>=2, <unk>=3, every other piece its SentencePiece id + 1, and <mask> after the last piece; or
// with SentencePiece's own ids, as T5 and mT5 (HF T5Tokenizer) use them: the model's <pad>, </s>
// and <unk> pieces are the special tokens, there is no <s> and no mask.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tok/tokenizer.hpp"

// Declared only: sentencepiece_processor.h defines absl::string_view as std::string_view, which
// clashes with Abseil's own, so it is included in the .cpp alone.
namespace sentencepiece {
class SentencePieceProcessor;
}

namespace kglm::tok {

enum class SentencePieceIds : uint8_t { Fairseq, Native };

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // model_bytes: the contents of model_file; source: what load_tokenizer() was given. Throws
  // kglm::Error naming model_file when the bytes are not a usable model (Native: one without
  // <pad> and </s> pieces).
  SentencePieceTokenizer(std::string model_bytes, std::filesystem::path source, const std::filesystem::path& model_file,
                         SentencePieceIds ids = SentencePieceIds::Fairseq);
  ~SentencePieceTokenizer() override;

  TokenizerKind kind() const override { return TokenizerKind::SentencePiece; }
  void encode(std::string_view text, Encoding& out) const override;
  int32_t vocab_size() const override { return vocab_size_; }
  const SpecialTokens& special() const override { return special_; }
  std::string piece(int32_t id) const override;
  int32_t piece_to_id(std::string_view piece) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  const std::filesystem::path& source() const override { return source_; }
  void save_hf_files(const std::filesystem::path& dir) const override;

 private:
  bool native() const { return ids_ == SentencePieceIds::Native; }
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  SentencePieceIds ids_;
  std::string model_bytes_;           // kept to save an exact copy
  std::vector<int32_t> id_of_piece_;  // SentencePiece id -> our id
  int32_t vocab_size_ = 0;
  SpecialTokens special_;
  std::filesystem::path source_;
};

// Loads a SentencePiece .model file; `source` is what load_tokenizer() was given.
std::unique_ptr<Tokenizer> load_sentencepiece(const std::filesystem::path& model_file,
                                              const std::filesystem::path& source,
                                              SentencePieceIds ids = SentencePieceIds::Fairseq);

}  // namespace kglm::tok
