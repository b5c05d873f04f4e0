#include "tok/tokenizer.hpp"

#include <cstdio>
#include <system_error>

#include "core/error.hpp"
#include "tok/hf_tokenizer_files.hpp"
#include "tok/sentencepiece_tokenizer.hpp"
#include "tok/wordpiece_tokenizer.hpp"

namespace kglm::tok {

void Encoding::clear() {
  ids.clear();
  begin.clear();
  end.clear();
  word_start.clear();
}

const char* tokenizer_kind_name(TokenizerKind kind) {
  switch (kind) {
    case TokenizerKind::SentencePiece:
      return "sentencepiece";
    case TokenizerKind::WordPiece:
      return "wordpiece";
    case TokenizerKind::Words:
      return "words";
  }
  return "unknown";
}

std::string vocabulary_checksum(const Tokenizer& tokenizer) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a: a fingerprint, not a defence against forgery
  auto add = [&](std::string_view bytes) {
    for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
    h = (h ^ 0xffu) * 0x100000001b3ull;  // a separator no UTF-8 piece contains
  };
  add(tokenizer_kind_name(tokenizer.kind()));
  const SpecialTokens& sp = tokenizer.special();
  for (int32_t id : {sp.bos, sp.eos, sp.pad, sp.unk, sp.mask}) add(std::to_string(id));
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) add(tokenizer.piece(id));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string("fnv1a64:") + hex;
}

namespace {

std::unique_ptr<Tokenizer> load_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  const auto spm_model = dir / kSentencePieceModelFile;
  if (std::filesystem::is_regular_file(spm_model, ec)) return load_sentencepiece(spm_model, dir);
  const auto t5_model = dir / kT5SentencePieceFile;
  if (std::filesystem::is_regular_file(t5_model, ec))
    return load_sentencepiece(t5_model, dir, SentencePieceIds::Native);
  const auto vocab = dir / kWordPieceVocabFile;
  if (std::filesystem::is_regular_file(vocab, ec)) {
    // A Hugging Face directory: BertTokenizer's defaults (uncased) unless tokenizer_config.json says otherwise.
    WordPieceOptions options;
    const auto config = dir / kTokenizerConfigFile;
    if (std::filesystem::exists(config, ec)) read_bert_tokenizer_config(config, options);
    return load_wordpiece(vocab, options, dir);
  }
  throw Error(location(dir.string()) + "no tokenizer in this directory (expected " + kSentencePieceModelFile + ", " +
              kT5SentencePieceFile + " or " + kWordPieceVocabFile + ")");
}

}  // namespace

std::unique_ptr<Tokenizer> load_t5_tokenizer(const std::filesystem::path& model_or_dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(model_or_dir, ec)) {
    const auto t5_model = model_or_dir / kT5SentencePieceFile;
    if (!std::filesystem::is_regular_file(t5_model, ec))
      throw Error(location(model_or_dir.string()) + "no " + kT5SentencePieceFile + " (a T5 model directory has one)");
    return load_sentencepiece(t5_model, model_or_dir, SentencePieceIds::Native);
  }
  if (!std::filesystem::exists(model_or_dir, ec)) throw Error(location(model_or_dir.string()) + "no such file");
  return load_sentencepiece(model_or_dir, model_or_dir, SentencePieceIds::Native);
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& model_or_dir) {
  std::error_code ec;
  const auto status = std::filesystem::status(model_or_dir, ec);
  if (!std::filesystem::exists(status)) throw Error(location(model_or_dir.string()) + "no such file or directory");
  if (std::filesystem::is_directory(status)) return load_directory(model_or_dir);
  const auto extension = model_or_dir.extension();
  if (extension == ".model") return load_sentencepiece(model_or_dir, model_or_dir);
  if (extension == ".txt") {
    // A bare vocabulary says nothing about casing: keep the text as it is.
    WordPieceOptions options;
    options.lower_case = false;
    return load_wordpiece(model_or_dir, options, model_or_dir);
  }
  throw Error(location(model_or_dir.string()) +
              "unknown tokenizer file (expected a directory, a SentencePiece .model file or a WordPiece vocab.txt)");
}

}  // namespace kglm::tok
