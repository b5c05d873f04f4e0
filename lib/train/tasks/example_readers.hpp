// Readers of the sentence-level fine-tuning formats (the token task's are in tagged_reader.hpp):
//  - TSV with named columns, for single-sentence and pair classification (XNLI, PAWS-X, intent):
//    a header line names the columns; the text, the optional pair and the label are chosen by name.
//  - RELX (and KBP37, SemEval-2010 task 8): blocks of `ID<TAB>"sentence"` with <e1> … </e1> and
//    <e2> … </e2> around the two entities, then a line with the relation (e.g.
//    org:subsidiaries(e1,e2), no_relation), then blank lines.
//  - Word in context: XL-WiC's TSV (target, PoS, the target's start and end character in each
//    example, the two examples, the label 1/0; test files without the label column take it from
//    the `*gold*` file beside them, line for line) and the English WiC's (target, PoS, "I-J" the
//    target's word index in each space-tokenised example, the two examples; labels T/F in the
//    `.gold.txt` beside `.data.txt`). The column count tells them apart.
// A bad record is reported as FILE:LINE through the ErrorCounter and skipped; a file with no valid
// record at all is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace kglm::train::tasks {

struct SentenceExample {
  std::string text, pair;  // pair: empty for single-sentence tasks
  std::string label;
  uint64_t line = 0;
};

struct TsvColumns {
  std::string text = "sentence1", pair, label = "label";  // pair "": a single-sentence task
};

std::vector<SentenceExample> read_sentence_tsv(const std::string& path, const TsvColumns& columns,
                                               ErrorCounter& errors);

// A sentence with two marked entities: the text without the markers (single spaces where a marker
// stood between words), and each entity's bytes [begin, end) in it.
struct RelationExample {
  std::string id, text, label;
  std::string lang;  // annotated text's "lang" (RELX has none)
  size_t e1_begin = 0, e1_end = 0, e2_begin = 0, e2_end = 0;
  uint64_t line = 0;
};

std::vector<RelationExample> read_relx(const std::string& path, ErrorCounter& errors);

// Two sentences that use one word, and whether they use it in the same sense (label "true" or
// "false", read from 1/0 or T/F; "" when the file has none). begin1/begin2: the byte where the
// word starts in each sentence.
struct WicExample {
  std::string sentence1, sentence2, word, label;
  size_t begin1 = 0, begin2 = 0;
  uint64_t line = 0;
};

std::vector<WicExample> read_wic(const std::string& path, ErrorCounter& errors);

// The marked sentence of one RELX record, parsed: throws kglm::Error saying what is wrong (markers
// missing, repeated, unbalanced or nested).
RelationExample parse_marked_sentence(std::string_view sentence);

}  // namespace kglm::train::tasks
