// Readers of slot filling and intent detection data (MultiATIS++, MTOP, MASSIVE): each utterance
// as words with a BIO slot tag each, and its intent.
//  - MultiATIS++ TSV: a header line naming the columns "utterance", "slot_labels" and "intent"
//    (its release: id, utterance, slot_labels, intent); the utterance's words and their tags
//    separated by single spaces, as many of each.
//  - MTOP TSV (the released per-language train.txt/eval.txt/test.txt, no header): id, intent
//    (IN:…), slots ("START:END:SL:NAME" character spans, comma-separated, "" for none), utterance,
//    domain, locale, decoupled form, and a JSON object {"tokens": [...], "tokenSpans": [{"start",
//    "length"}]}: the words are the tokens, tagged B-/I-NAME where a slot's span covers them.
//  - MASSIVE JSON lines: "intent", "annot_utt" ("wake me up at [time : nine am]") and "locale";
//    the words are annot_utt's without the brackets, split at white space (locales written without
//    spaces, ja-JP and zh-*, into characters), tagged B-/I-NAME inside "[NAME : …]".
// A bad record is reported as FILE:LINE and skipped; a file with no valid record is refused.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "train/tasks/tagged_reader.hpp"

namespace kglm::train::tasks {

struct SlotExample {
  TaggedSentence sentence;  // words and their slot tags
  std::string intent, id;
  uint64_t line = 0;
};

enum class SlotFormat { multiatis, mtop, massive };

std::vector<SlotExample> read_slots(const std::string& path, SlotFormat format, ErrorCounter& errors);

// MASSIVE's annotated utterance as words and BIO tags; by_character: every character of a span of
// non-space text is a word. Throws Error on unbalanced brackets or a slot without " : ".
TaggedSentence parse_bracketed(std::string_view annotated, bool by_character);

}  // namespace kglm::train::tasks
