#include "tok/wordpiece_tokenizer.hpp"

#include <limits>

#include "core/error.hpp"
#include "tok/bert_basic_tokenizer.hpp"
#include "tok/hf_tokenizer_files.hpp"

namespace kglm::tok {

namespace {

constexpr std::string_view kContinuationPrefix = "##";

// Appends one token to an Encoding.
void push_token(Encoding& out, int32_t id, uint32_t begin, uint32_t end, bool word_start) {
  out.ids.push_back(id);
  out.begin.push_back(begin);
  out.end.push_back(end);
  out.word_start.push_back(word_start ? 1 : 0);
}

void truncate(Encoding& out, size_t size) {
  out.ids.resize(size);
  out.begin.resize(size);
  out.end.resize(size);
  out.word_start.resize(size);
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> pieces, WordPieceOptions options,
                                       std::filesystem::path source)
    : pieces_(std::move(pieces)), options_(std::move(options)), source_(std::move(source)) {
  if (pieces_.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw Error(location(source_.string()) + "vocabulary too large");
  }
  word_initial_.reserve(pieces_.size());
  for (size_t id = 0; id < pieces_.size(); ++id) {
    const std::string& piece = pieces_[id];
    // A token listed twice keeps its last id, as in BertTokenizer's vocabulary dict.
    word_initial_.insert_or_assign(piece, static_cast<int32_t>(id));
    longest_initial_ = std::max(longest_initial_, piece.size());
    if (piece.size() > kContinuationPrefix.size() && piece.starts_with(kContinuationPrefix)) {
      continuation_.insert_or_assign(piece.substr(kContinuationPrefix.size()), static_cast<int32_t>(id));
      longest_continuation_ = std::max(longest_continuation_, piece.size() - kContinuationPrefix.size());
    }
  }
  auto require = [&](const std::string& token) {
    auto it = word_initial_.find(token);
    if (it == word_initial_.end()) {
      throw Error(location(source_.string()) + "the vocabulary has no special token " + token);
    }
    return it->second;
  };
  special_.unk = require(options_.unk_token);
  special_.bos = require(options_.cls_token);
  special_.eos = require(options_.sep_token);
  special_.pad = require(options_.pad_token);
  special_.mask = require(options_.mask_token);
}

void WordPieceTokenizer::encode(std::string_view text, Encoding& out) const {
  out.clear();
  if (text.size() > std::numeric_limits<uint32_t>::max()) throw Error("text too long to tokenize (over 4 GiB)");
  // Scratch space reused across calls, one per thread, so encode() stays const and thread-safe.
  thread_local BasicWords words;
  const BasicTokenizerOptions basic{options_.lower_case, options_.strips_accents(), options_.tokenize_chinese_chars};
  basic_tokenize(text, basic, words);

  for (size_t w = 0; w < words.word_count(); ++w) {
    const uint32_t first = words.word_first[w], last = words.word_first[w + 1];
    const uint32_t word_begin = words.source_begin[first], word_end = words.source_end[last - 1];
    if (last - first > options_.max_input_chars_per_word) {
      push_token(out, special_.unk, word_begin, word_end, true);
      continue;
    }
    // Greedy longest match first: the longest piece starting at `start`, then again after it.
    const size_t word_tokens = out.size();
    bool matched_all = true;
    for (uint32_t start = first; start < last;) {
      const bool initial = start == first;
      const PieceMap& pieces = initial ? word_initial_ : continuation_;
      const size_t longest = initial ? longest_initial_ : longest_continuation_;
      int32_t id = -1;
      uint32_t end = last;
      for (; end > start; --end) {
        const size_t length = words.char_offset[end] - words.char_offset[start];
        if (length > longest) continue;
        auto it = pieces.find(std::string_view(words.chars).substr(words.char_offset[start], length));
        if (it != pieces.end()) {
          id = it->second;
          break;
        }
      }
      if (id < 0) {
        matched_all = false;
        break;
      }
      push_token(out, id, words.source_begin[start], words.source_end[end - 1], initial);
      start = end;
    }
    if (!matched_all) {  // a word with an unmatched remainder is one [UNK] as a whole
      truncate(out, word_tokens);
      push_token(out, special_.unk, word_begin, word_end, true);
    }
  }
}

std::string WordPieceTokenizer::piece(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= pieces_.size()) {
    throw Error("token id " + std::to_string(id) + " out of range [0, " + std::to_string(pieces_.size()) + ")");
  }
  return pieces_[static_cast<size_t>(id)];
}

int32_t WordPieceTokenizer::piece_to_id(std::string_view piece) const {
  auto it = word_initial_.find(piece);
  return it == word_initial_.end() ? special_.unk : it->second;
}

std::string WordPieceTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  for (int32_t id : ids) {
    const std::string p = piece(id);
    if (p.starts_with("##") && !text.empty()) {
      text.append(p, 2);
    } else {
      if (!text.empty()) text += ' ';
      text += p;
    }
  }
  return text;
}

void WordPieceTokenizer::save_hf_files(const std::filesystem::path& dir) const {
  std::string vocab_text;
  for (const std::string& piece : pieces_) {
    vocab_text += piece;
    vocab_text += '\n';
  }
  write_bert_hf_files(dir, vocab_text, options_);
}

std::unique_ptr<Tokenizer> load_wordpiece(const std::filesystem::path& vocab_file, const WordPieceOptions& options,
                                          const std::filesystem::path& source) {
  const std::string text = read_whole_file(vocab_file);
  std::vector<std::string> pieces;
  for (size_t line_begin = 0; line_begin < text.size();) {
    size_t line_end = text.find('\n', line_begin);
    if (line_end == std::string::npos) line_end = text.size();
    std::string_view line(text.data() + line_begin, line_end - line_begin);
    if (line.ends_with('\r')) line.remove_suffix(1);  // a vocabulary saved with CRLF line ends
    pieces.emplace_back(line);
    line_begin = line_end + 1;
  }
  if (pieces.empty()) throw Error(location(vocab_file.string()) + "empty vocabulary");
  return std::make_unique<WordPieceTokenizer>(std::move(pieces), options, source);
}

}  // namespace kglm::tok
