// pretrain vocab: the word vocabulary of an ELMo model, as bilm-tf reads it (vocab.txt: <S>, </S>,
// <UNK>, then the words by falling frequency, ties in byte order; the sort matters because the
// sampled softmax draws classes log-uniformly by rank). Words are ICU word-break segments of each
// line (UAX #29, the language's rules), or whitespace-separated tokens for pre-tokenised text such
// as the paper's UDPipe output. Counts are kept per language (the sampled corpora of sample-lang:
// LANG=PATH or a directory of LANG.* files).
#pragma once

#include <cstdint>
#include <string>

#include "core/cli.hpp"
#include "core/stats.hpp"

namespace kglm::train {

struct VocabularyOptions : RunOptions {
  // From RunOptions: inputs (LANG=PATH, a directory of LANG.* files, or a mixed JSONL stream with
  // "lang" and "text"; each gzip, bzip2, zstd or plain), output (vocab.txt), threads, batch_bytes,
  // quiet, command_line.
  bool whitespace = false;  // split on Unicode white space instead of ICU word breaks
  int64_t max_words = 0;    // words kept besides the three markers; 0: every word
  int64_t min_count = 1;    // words seen fewer times are left out
  std::string counts;       // optional TSV: word, total and one count per language, in vocabulary order
};

// Counts the words of the inputs and writes the vocabulary (atomically). Statistics: lines,
// tokens, types, words (kept, markers excluded), coverage_per_million (of the tokens, by the kept
// words), languages, tokens.LANG and types.LANG.
Stats build_word_vocabulary(const VocabularyOptions& options);

}  // namespace kglm::train
