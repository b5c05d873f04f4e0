// Readers of word-tagged sentences for the token task (NER, POS, slot filling), in the formats
// researchers already have:
//  - XTREME PAN-X (WikiANN): one word a line, "lang:word<TAB>tag", split at the first colon only
//    (a word may hold colons); a blank line ends a sentence.
//  - CoNLL columns (CoNLL-2002/2003, UD-style): whitespace-separated columns, the word first and
//    the tag in any column (the last by default); "-DOCSTART-" lines are skipped; a blank line ends
//    a sentence.
// A bad line (a missing tab, colon or column) is reported as FILE:LINE through the ErrorCounter and
// its whole sentence is skipped, as every kglm reader skips a bad record.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace kglm::train::tasks {

struct TaggedSentence {
  std::vector<std::string> words, tags;
  std::string lang;   // PAN-X's prefix, or the LANG of LANG=PATH (else empty)
  uint64_t line = 0;  // the first line of the sentence in its file
};

enum class TaggedFormat { panx, conll };

struct TaggedReadOptions {
  TaggedFormat format = TaggedFormat::panx;
  int tag_column = -1;  // CoNLL: 0-based, or from the end when negative (-1: the last)
  std::string lang;     // the language of every sentence (LANG=PATH); PAN-X's own prefix otherwise
};

// Reads every sentence of `path` (compressed or not; "-" is stdin). Throws Error when the input is
// not text or has no valid sentence at all.
std::vector<TaggedSentence> read_tagged(const std::string& path, const TaggedReadOptions& options,
                                        ErrorCounter& errors);

}  // namespace kglm::train::tasks
