#include "tok/sentencepiece_tokenizer.hpp"

#include <sentencepiece_processor.h>
#include <unicode/uchar.h>

#include <algorithm>
#include <array>
#include <limits>

#include "core/error.hpp"
#include "tok/hf_tokenizer_files.hpp"
#include "tok/utf8.hpp"

namespace kglm::tok {

namespace {

// fairseq's dictionary starts with these four, in this order; the pieces follow with offset 1.
constexpr std::array<std::string_view, 4> kFairseqSpecials = {"<s>", "<pad>", "</s>", "<unk>"};
constexpr int32_t kBos = 0, kPad = 1, kEos = 2, kUnk = 3;
constexpr int32_t kFairseqOffset = 1;
constexpr std::string_view kMaskPiece = "<mask>";
constexpr std::string_view kWordBoundary = "\xE2\x96\x81";  // U+2581 '▁', SentencePiece's space

int32_t fairseq_special_id(std::string_view piece) {
  for (size_t id = 0; id < kFairseqSpecials.size(); ++id) {
    if (piece == kFairseqSpecials[id]) return static_cast<int32_t>(id);
  }
  return -1;
}

// The first byte of [begin, end) of text that is not whitespace (end when all of it is).
// SentencePiece counts the spaces before a word in the span of its '▁' piece.
uint32_t skip_whitespace(std::string_view text, uint32_t begin, uint32_t end) {
  size_t i = begin;
  while (i < end) {
    const size_t next_begin = i;
    const int32_t cp = next_code_point(text, i);
    if (cp < 0 || !u_isUWhiteSpace(cp)) return static_cast<uint32_t>(next_begin);
  }
  return end;
}

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(std::string model_bytes, std::filesystem::path source,
                                               const std::filesystem::path& model_file, SentencePieceIds ids)
    : processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()),
      ids_(ids),
      model_bytes_(std::move(model_bytes)),
      source_(std::move(source)) {
  const std::string where = location(model_file.string());
  const auto status = processor_->LoadFromSerializedProto(model_bytes_);
  if (!status.ok()) throw Error(where + "not a SentencePiece model: " + status.ToString());
  const int piece_count = processor_->GetPieceSize();
  if (piece_count <= 0 || piece_count > std::numeric_limits<int32_t>::max() - 2) {
    throw Error(where + "SentencePiece model with " + std::to_string(piece_count) + " pieces");
  }
  if (native()) {
    // T5's convention: the pieces' own ids; the model must have been trained with <pad> and </s>.
    auto id_of = [&](std::string_view p) {
      const int id = processor_->PieceToId(p);
      return id == processor_->unk_id() ? -1 : id;
    };
    special_ = {.bos = -1, .eos = id_of("</s>"), .pad = id_of("<pad>"), .unk = processor_->unk_id(), .mask = -1};
    if (special_.eos < 0 || special_.pad < 0)
      throw Error(where + "a T5 vocabulary needs <pad> and </s> pieces (spm_train --pad_id=0 --eos_id=1 --unk_id=2 " +
                  "--bos_id=-1, as T5's)");
    id_of_piece_.resize(static_cast<size_t>(piece_count));
    for (int id = 0; id < piece_count; ++id) id_of_piece_[static_cast<size_t>(id)] = id;
    vocab_size_ = piece_count;
    return;
  }
  // As XLMRobertaTokenizer converts a piece: one of fairseq's specials by its string, SentencePiece's
  // unknown as <unk>, anything else shifted by the offset.
  id_of_piece_.resize(static_cast<size_t>(piece_count));
  for (int id = 0; id < piece_count; ++id) {
    int32_t mapped = fairseq_special_id(processor_->IdToPiece(id));
    if (processor_->IsUnknown(id)) mapped = kUnk;
    if (mapped < 0) mapped = id + kFairseqOffset;
    id_of_piece_[static_cast<size_t>(id)] = mapped;
  }
  special_ = {.bos = kBos, .eos = kEos, .pad = kPad, .unk = kUnk, .mask = piece_count + kFairseqOffset};
  vocab_size_ = piece_count + kFairseqOffset + 1;
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

void SentencePieceTokenizer::encode(std::string_view text, Encoding& out) const {
  out.clear();
  if (text.size() > std::numeric_limits<uint32_t>::max()) throw Error("text too long to tokenize (over 4 GiB)");
  // The proto API reports, for every piece, the bytes of the original (unnormalized) input it covers.
  // One proto per thread: Encode() clears it but keeps its allocations for the next text.
  thread_local sentencepiece::ImmutableSentencePieceText pieces;
  const auto status = processor_->Encode(text, pieces.mutable_proto());
  if (!status.ok()) throw Error(location(source_.string()) + "SentencePiece encoding failed: " + status.ToString());
  const size_t count = pieces.pieces_size();
  out.ids.reserve(count);
  out.begin.reserve(count);
  out.end.reserve(count);
  out.word_start.reserve(count);
  for (size_t k = 0; k < count; ++k) {
    const auto piece = pieces.pieces(static_cast<int>(k));
    const uint32_t spm_id = piece.id();
    const bool word_start = std::string_view(piece.piece()).starts_with(kWordBoundary);
    const uint32_t end = std::min<uint32_t>(piece.end(), static_cast<uint32_t>(text.size()));
    const uint32_t begin = std::min(piece.begin(), end);
    out.ids.push_back(spm_id < id_of_piece_.size() ? id_of_piece_[spm_id] : kUnk);
    // Spans cover the bytes that spell the token, like the offsets of HF's fast tokenizers.
    out.begin.push_back(word_start ? skip_whitespace(text, begin, end) : begin);
    out.end.push_back(end);
    out.word_start.push_back(word_start ? 1 : 0);
  }
}

std::string SentencePieceTokenizer::piece(int32_t id) const {
  if (id < 0 || id >= vocab_size_) {
    throw Error("token id " + std::to_string(id) + " out of range [0, " + std::to_string(vocab_size_) + ")");
  }
  if (native()) return processor_->IdToPiece(id);
  if (id < static_cast<int32_t>(kFairseqSpecials.size())) return std::string(kFairseqSpecials[static_cast<size_t>(id)]);
  if (id == special_.mask) return std::string(kMaskPiece);
  return processor_->IdToPiece(id - kFairseqOffset);
}

int32_t SentencePieceTokenizer::piece_to_id(std::string_view piece) const {
  if (native()) return processor_->PieceToId(piece);
  if (const int32_t special = fairseq_special_id(piece); special >= 0) return special;
  if (piece == kMaskPiece) return special_.mask;
  const int spm_id = processor_->PieceToId(piece);  // SentencePiece's unknown id when absent
  if (spm_id < 0 || static_cast<size_t>(spm_id) >= id_of_piece_.size()) return kUnk;
  return id_of_piece_[static_cast<size_t>(spm_id)];
}

std::string SentencePieceTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  std::vector<int> run;  // SentencePiece ids of ordinary pieces, decoded together
  auto flush = [&] {
    if (run.empty()) return;
    std::string part;
    const auto status = processor_->Decode(run, &part);
    if (!status.ok()) throw Error("SentencePiece decode: " + std::string(status.message()));
    text += part;
    run.clear();
  };
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size_) {
      throw Error("token id " + std::to_string(id) + " out of range [0, " + std::to_string(vocab_size_) + ")");
    }
    if (native()) {
      run.push_back(id);  // SentencePiece leaves its control pieces (<pad>, </s>) out of the text
      continue;
    }
    if (id < static_cast<int32_t>(kFairseqSpecials.size()) || id == special_.mask) {
      flush();
      text += piece(id);
      continue;
    }
    run.push_back(id - kFairseqOffset);
  }
  flush();
  return text;
}

void SentencePieceTokenizer::save_hf_files(const std::filesystem::path& dir) const {
  if (native()) {
    write_t5_hf_files(dir, model_bytes_);
  } else {
    write_xlmr_hf_files(dir, model_bytes_);
  }
}

std::unique_ptr<Tokenizer> load_sentencepiece(const std::filesystem::path& model_file,
                                              const std::filesystem::path& source, SentencePieceIds ids) {
  return std::make_unique<SentencePieceTokenizer>(read_whole_file(model_file), source, model_file, ids);
}

}  // namespace kglm::tok
