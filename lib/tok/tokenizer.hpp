// Subword tokenizers behind one interface: SentencePiece with XLM-R's fairseq id mapping, and
// BERT's WordPiece. Both report byte offsets into the input for every token (to map entity spans
// of annotated text onto tokens) and whether a token starts a word (for whole-word masking).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kglm::tok {

enum class TokenizerKind : uint8_t { SentencePiece, WordPiece, Words };
// "sentencepiece", "wordpiece", "words" (ELMo's word vocabulary).
const char* tokenizer_kind_name(TokenizerKind kind);

// Ids of the special tokens. XLM-R: bos=<s>, eos=</s>; BERT: bos=[CLS], eos=[SEP].
struct SpecialTokens {
  int32_t bos = -1, eos = -1, pad = -1, unk = -1, mask = -1;
};

// The tokens of one text, without special tokens. begin/end are byte offsets into the encoded
// string_view (end exclusive); a token produced from no input bytes (rare) has begin == end.
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<uint32_t> begin, end;
  std::vector<uint8_t> word_start;  // 1 when the token starts a word (SentencePiece '▁', WordPiece not '##')
  size_t size() const { return ids.size(); }
  void clear();
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual TokenizerKind kind() const = 0;
  // Overwrites `out` with the tokens of `text` (UTF-8; invalid bytes are handled, never a crash).
  virtual void encode(std::string_view text, Encoding& out) const = 0;
  virtual int32_t vocab_size() const = 0;
  virtual const SpecialTokens& special() const = 0;
  virtual std::string piece(int32_t id) const = 0;                // kglm::Error when out of range
  virtual int32_t piece_to_id(std::string_view piece) const = 0;  // unk when absent
  // The text of a token sequence, as the library's own decoder writes it (SentencePiece: '▁' as
  // a space, byte pieces joined, the leading space dropped; WordPiece: "##" pieces joined to the
  // word before). Special tokens appear as their pieces. kglm::Error for an id out of range.
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  // What load_tokenizer() was given, for provenance and checkpoints.
  virtual const std::filesystem::path& source() const = 0;
  // Copies the files that define this tokenizer into a Hugging Face model directory
  // (sentencepiece.bpe.model or vocab.txt, tokenizer_config.json, special_tokens_map.json).
  virtual void save_hf_files(const std::filesystem::path& dir) const = 0;
};

// "fnv1a64:<16 hex digits>" over the kind, the special ids and every piece in id order: the same
// for a .model file and the Hugging Face directory saved from it, different for any other
// vocabulary. Token datasets record it so that pretrain can tell the tokenizer it finds is theirs.
std::string vocabulary_checksum(const Tokenizer& tokenizer);

// Loads from a Hugging Face model directory (sentencepiece.bpe.model → XLM-R SentencePiece;
// spiece.model → T5's SentencePiece;
// vocab.txt → WordPiece, options from tokenizer_config.json), or directly from a .model file
// (SentencePiece, XLM-R mapping) or a vocab.txt file (WordPiece, cased unless told otherwise).
// Throws kglm::Error naming the path on anything unusable.
std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& model_or_dir);

// T5's tokenizer: SentencePiece with its own ids, from a model directory's spiece.model or a .model
// file (trained with <pad> and </s> pieces).
std::unique_ptr<Tokenizer> load_t5_tokenizer(const std::filesystem::path& model_or_dir);

}  // namespace kglm::tok
