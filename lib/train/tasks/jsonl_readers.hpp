// Readers of the JSONL fine-tuning formats:
//  - XLR (kglm-xlr(5), kg-cycles xlr): a context, a question and six choices, the answer's index;
//  - annotated text (kglm-annotated(5)) with a "label": a relation between two entity spans (by
//    default the first two "entity" spans in text order; "subject" and "object" ids pick others).
// A bad record is reported as FILE:LINE through the ErrorCounter and skipped; a file with no valid
// record at all is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "train/tasks/example_readers.hpp"

namespace kglm::train::tasks {

struct ChoiceExample {
  std::string id, lang, context, question;
  std::vector<std::string> choices;
  int64_t label = -1;  // the answer's index in choices
  uint64_t line = 0;
};

std::vector<ChoiceExample> read_xlr(const std::string& path, ErrorCounter& errors);

std::vector<RelationExample> read_annotated_relations(const std::string& path, ErrorCounter& errors);

}  // namespace kglm::train::tasks
