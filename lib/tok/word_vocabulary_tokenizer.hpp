// ELMo's word-level "tokenizer": each word of a text (an ICU word-break segment, or with
// `whitespace` a whitespace-separated token of pre-tokenised text, as `pretrain vocab` counts them)
// becomes its id in an ELMo vocab.txt (<S>, </S>, <UNK>, then the words), <UNK> when absent. <S> and
// </S> frame sequences (bos, eos); there is no padding or mask token. The characters of every word
// stay available to the model (nn/elmo_characters.hpp) whatever its id.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tok/tokenizer.hpp"

namespace kglm::tok {

// The first three lines of every ELMo vocabulary: bos, eos and the unknown word.
inline constexpr const char* kVocabularyMarkers[] = {"<S>", "</S>", "<UNK>"};

class WordVocabularyTokenizer : public Tokenizer {
 public:
  // Reads vocab.txt (one word a line; the first three must be <S>, </S>, <UNK>); kglm::Error
  // naming the file and line otherwise, or on a repeated word.
  WordVocabularyTokenizer(const std::filesystem::path& vocab_txt, bool whitespace);
  ~WordVocabularyTokenizer() override;
  WordVocabularyTokenizer(const WordVocabularyTokenizer&) = delete;  // ids_ views words_
  WordVocabularyTokenizer& operator=(const WordVocabularyTokenizer&) = delete;

  TokenizerKind kind() const override { return TokenizerKind::Words; }
  void encode(std::string_view text, Encoding& out) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(words_.size()); }
  const SpecialTokens& special() const override { return special_; }
  std::string piece(int32_t id) const override;
  int32_t piece_to_id(std::string_view piece) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;  // words joined by spaces
  const std::filesystem::path& source() const override { return source_; }
  void save_hf_files(const std::filesystem::path& dir) const override;  // dir/vocab.txt
  bool whitespace() const { return whitespace_; }

 private:
  std::filesystem::path source_;
  bool whitespace_;
  std::vector<std::string> words_;
  std::unordered_map<std::string_view, int32_t> ids_;  // views of words_
  SpecialTokens special_;
};

}  // namespace kglm::tok
