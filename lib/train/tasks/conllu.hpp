// CoNLL-U, the format of Universal Dependencies v2 (universaldependencies.org/format.html): a
// sentence is '#' comment lines, then one line per token or word with ten TAB-separated columns
// (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC), then a blank line. IDs are words (1, 2, …,
// consecutive), multiword-token ranges ("1-2", before the words they cover) and empty nodes ("5.1",
// enhanced graphs only). Tasks read the syntactic words, as the CoNLL 2018 shared task's evaluator
// scores them: ranges and empty nodes are kept only to be written back unchanged.
// A bad line is reported as FILE:LINE and costs its sentence only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace kglm::train::tasks {

inline constexpr int32_t kNoHead = -1;  // HEAD "_": unannotated (a file to parse)

struct ConlluWord {
  std::string form, lemma, upos, xpos, feats, deprel, deps, misc;
  int32_t head = kNoHead;  // 0: the root; 1..n the word of that ID
};

struct ConlluSentence {
  uint64_t line = 0;                 // the sentence's first line in its file
  std::vector<std::string> lines;    // every line as read (comments, ranges, words, empty nodes)
  std::vector<uint32_t> word_lines;  // the index in lines of word i + 1
  std::vector<ConlluWord> words;     // the syntactic words, ID i + 1 at [i]

  // The universal relation of word i: DEPREL up to its first ':' (the 2018 evaluator's LAS).
  std::string_view universal_deprel(size_t i) const;
};

// Every well-formed sentence of the file ("-": stdin; gzip, bzip2 and zstd are read as such); bad
// lines go to `errors` with their location and drop their sentence. Throws Error when the input is
// not text or no sentence is valid although some were bad.
std::vector<ConlluSentence> read_conllu(const std::string& path, ErrorCounter& errors);

// One sentence parsed from text (the lines of one sentence, a trailing blank line optional), for
// tests; throws Error "NAME:LINE: reason" at the first bad line.
ConlluSentence parse_conllu_sentence(std::string_view text, std::string_view name = "<text>");

// The sentence as CoNLL-U text (its blank line included) with, for each word whose entry is given
// (non-empty vectors, one per word), UPOS, XPOS, HEAD and DEPREL replaced; every other line unchanged.
struct ConlluReplacement {
  std::vector<std::string> upos, xpos;
  std::vector<int32_t> heads;
  std::vector<std::string> deprels;
};
std::string write_conllu_sentence(const ConlluSentence& sentence, const ConlluReplacement& replace = {});

// Whether the text looks like CoNLL-U: its first line that is neither blank nor a comment has ten
// TAB-separated columns and an ID.
bool looks_like_conllu(std::string_view head);

}  // namespace kglm::train::tasks
