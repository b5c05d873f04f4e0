// A relation template filled for one fact as a cloze: the subject's label in place and the text
// before and after the object's place, where the probe puts its mask tokens.
#pragma once

#include <string>
#include <string_view>

#include "gen/template_realizer.hpp"

namespace kglm::probe {

struct ClozeText {
  std::string prefix;  // up to the object, without trailing spaces ("Douglas Adams was born in")
  std::string suffix;  // after it, without leading spaces ("."); "" when the object ends the sentence
  std::string object;  // the object's label as the template wants it (inflected for [Y.Gen]): the answer
};

// The template realised as X-FACTR's probe realises it (gen::RealizeOptions::probe): its spacing is
// kept (" ." stays: X-FACTR tokenizes the template as written), runs of spaces left by dropped words
// collapse, an unknown gender takes the first form, and nothing depends on the object's label but
// its own slot. What could not be realised is added to gaps. A template whose object slot appears
// twice keeps the first as the cloze's.
ClozeText fill_cloze(const gen::ParsedTemplate& tpl, std::string_view lang, const gen::TemplateEntity& subject,
                     const gen::TemplateEntity& object, const gen::InflectionTables* inflections = nullptr,
                     gen::TemplateGaps* gaps = nullptr);

}  // namespace kglm::probe
