// BERT's WordPiece tokenizer (HF BertTokenizer): basic tokenization, then greedy longest-match-first
// subwords with the "##" continuation prefix.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/string_hash.hpp"
#include "tok/tokenizer.hpp"
#include "tok/wordpiece_options.hpp"

namespace kglm::tok {

class WordPieceTokenizer final : public Tokenizer {
 public:
  // pieces[i] is the token of id i (the lines of vocab.txt). Throws kglm::Error naming `source`
  // when a special token is missing.
  WordPieceTokenizer(std::vector<std::string> pieces, WordPieceOptions options, std::filesystem::path source);

  TokenizerKind kind() const override { return TokenizerKind::WordPiece; }
  void encode(std::string_view text, Encoding& out) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(pieces_.size()); }
  const SpecialTokens& special() const override { return special_; }
  std::string piece(int32_t id) const override;
  int32_t piece_to_id(std::string_view piece) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  const std::filesystem::path& source() const override { return source_; }
  void save_hf_files(const std::filesystem::path& dir) const override;

  const WordPieceOptions& options() const { return options_; }

 private:
  using PieceMap = absl::flat_hash_map<std::string, int32_t, StringHash, std::equal_to<>>;

  std::vector<std::string> pieces_;
  PieceMap word_initial_;                                  // every piece, as written in the vocabulary
  PieceMap continuation_;                                  // the "##" pieces, without the prefix
  size_t longest_initial_ = 0, longest_continuation_ = 0;  // in bytes, to skip hopeless lookups
  WordPieceOptions options_;
  SpecialTokens special_;
  std::filesystem::path source_;
};

// Reads vocab.txt (one token a line, id = line number). Throws kglm::Error naming the file when it
// cannot be read or lacks a special token.
std::unique_ptr<Tokenizer> load_wordpiece(const std::filesystem::path& vocab_file, const WordPieceOptions& options,
                                          const std::filesystem::path& source);

}  // namespace kglm::tok
