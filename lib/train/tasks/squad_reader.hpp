// The reader of extractive question answering data in SQuAD v1.1's JSON: {"version", "data":
// [{"title", "paragraphs": [{"context", "qas": [{"id", "question", "answers": [{"text",
// "answer_start"}]}]}]}]}, the format of XQuAD, MLQA and TyDiQA-GoldP (gzip/bzip2/zstd too).
// answer_start counts Unicode code points, as Python indexes the context; each answer is kept
// with its byte span. A question that is not valid (no id or question, an answer whose span is
// outside the context or does not hold its text) is reported with its place in the file, as
// FILE: data[A].paragraphs[P].qas[Q] (id X), and skipped; a file with no valid question, or not
// SQuAD JSON at all, is refused.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace kglm::train::tasks {

struct QaAnswer {
  std::string text;
  int64_t start = 0;          // answer_start: code points into the context
  size_t begin = 0, end = 0;  // the same span in bytes
};

struct QaExample {
  std::string id, question;
  std::shared_ptr<const std::string> context;  // shared by the paragraph's questions
  std::vector<QaAnswer> answers;               // none: a question to answer, not to score
  std::string lang;                            // LANG of LANG=PATH ("" when not given)
};

// The questions of a SQuAD v1.1 file. Question ids must be unique, for predictions are {id: answer}
// and the official evaluators look answers up by id: a copy of a dataset whose ids repeat (one of
// TyDiQA's has 86 ids for 3,196 questions) would keep one answer per id and be mis-scored. Repeats
// are renamed ID-2, ID-3, … (the first keeps its id; a name the file uses already is skipped) with
// one warning, or, with `strict`, the file is refused naming the first repeated id.
std::vector<QaExample> read_squad(const std::string& path, ErrorCounter& errors, bool strict = false);

// The byte offset of code point `index` of UTF-8 text (text.size() for its end); -1 past the end.
int64_t code_point_offset(std::string_view text, int64_t index);

}  // namespace kglm::train::tasks
