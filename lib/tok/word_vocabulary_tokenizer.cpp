#include "tok/word_vocabulary_tokenizer.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.hpp"
#include "sample/corpus.hpp"
#include "text/word_splitter.hpp"

namespace kglm::tok {

WordVocabularyTokenizer::WordVocabularyTokenizer(const std::filesystem::path& vocab_txt, bool whitespace)
    : source_(vocab_txt), whitespace_(whitespace) {
  std::ifstream in(vocab_txt, std::ios::binary);
  if (!in) throw Error(vocab_txt.string() + ": cannot open the vocabulary: " + std::strerror(errno));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    words_.push_back(line);
  }
  for (size_t i = 0; i < 3; ++i)
    if (words_.size() <= i || words_[i] != kVocabularyMarkers[i])
      throw Error(vocab_txt.string() + ":" + std::to_string(i + 1) +
                  ": an ELMo vocabulary starts with <S>, </S>, <UNK>" + " (pretrain vocab writes one)");
  ids_.reserve(words_.size());
  for (size_t i = 0; i < words_.size(); ++i) {
    if (words_[i].empty()) throw Error(vocab_txt.string() + ":" + std::to_string(i + 1) + ": an empty word");
    if (!ids_.emplace(words_[i], static_cast<int32_t>(i)).second)
      throw Error(vocab_txt.string() + ":" + std::to_string(i + 1) + ": \"" + words_[i] + "\" is listed twice");
  }
  special_.bos = 0, special_.eos = 1, special_.unk = 2;
}

WordVocabularyTokenizer::~WordVocabularyTokenizer() = default;

void WordVocabularyTokenizer::encode(std::string_view text, Encoding& out) const {
  out.clear();
  auto add = [&](size_t begin, size_t end) {
    out.ids.push_back(piece_to_id(text.substr(begin, end - begin)));
    out.begin.push_back(static_cast<uint32_t>(begin));
    out.end.push_back(static_cast<uint32_t>(end));
    out.word_start.push_back(1);
  };
  if (whitespace_) {
    sample::for_each_whitespace_token(text, [&](std::string_view w) {
      const auto begin = static_cast<size_t>(w.data() - text.data());
      add(begin, begin + w.size());
    });
    return;
  }
  // ICU's root rules (dictionaries for Chinese, Japanese, Thai, … included); one splitter a thread,
  // since encode() runs on every worker of pretrain prepare.
  thread_local text::WordSplitter splitter("und");
  thread_local std::vector<text::WordSpan> spans;
  splitter.split(text, spans);
  for (const text::WordSpan& s : spans) add(s.begin, s.end);
}

std::string WordVocabularyTokenizer::piece(int32_t id) const {
  if (id < 0 || id >= vocab_size()) throw Error("word vocabulary: id " + std::to_string(id) + " is out of range");
  return words_[static_cast<size_t>(id)];
}

int32_t WordVocabularyTokenizer::piece_to_id(std::string_view piece) const {
  const auto it = ids_.find(piece);
  return it == ids_.end() ? special_.unk : it->second;
}

std::string WordVocabularyTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  for (int32_t id : ids) text += (text.empty() ? "" : " ") + piece(id);
  return text;
}

void WordVocabularyTokenizer::save_hf_files(const std::filesystem::path& dir) const {
  std::filesystem::copy_file(source_, dir / "vocab.txt", std::filesystem::copy_options::overwrite_existing);
}

}  // namespace kglm::tok
