// BERT's basic tokenization, the step before WordPiece: clean the text, isolate CJK ideographs,
// lower-case and strip accents, split on whitespace and punctuation. Every normalized code point
// remembers the input bytes it came from, so WordPiece tokens map back to the original text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kglm::tok {

struct BasicTokenizerOptions {
  bool lower_case = true;
  bool strip_accents = true;
  bool split_cjk_ideographs = true;
};

// The words of one text, as normalized code points stored back to back.
struct BasicWords {
  std::string chars;                  // the normalized words, UTF-8, without separators
  std::vector<uint32_t> char_offset;  // per code point: its first byte in `chars`; plus chars.size() at the end
  std::vector<uint32_t> source_begin, source_end;  // per code point: the input bytes it came from
  std::vector<uint32_t> word_first;  // per word: its first code point; plus the code point count at the end

  size_t word_count() const { return word_first.empty() ? 0 : word_first.size() - 1; }
  void clear();
};

// Replaces `words` with the words of `text`. Invalid UTF-8 bytes are dropped, like U+FFFD.
void basic_tokenize(std::string_view text, const BasicTokenizerOptions& options, BasicWords& words);

}  // namespace kglm::tok
