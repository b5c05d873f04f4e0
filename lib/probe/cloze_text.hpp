// A relation template filled for one fact as a cloze: the subject's label in place and the text
// before and after the object's place, where the probe puts its mask tokens.
#pragma once

#include <string>
#include <string_view>

#include "gen/relation_templates.hpp"

namespace kglm::probe {

struct ClozeText {
  std::string prefix;  // up to the object, without trailing spaces ("Douglas Adams was born in")
  std::string suffix;  // after it, without leading spaces ("."); "" when the object ends the sentence
};

// The template's spacing is kept (" ." stays: X-FACTR tokenizes the template as written), runs
// of spaces left by dropped words collapse. Gender choices and function words follow the entities' genders; an unknown
// gender counts as masculine, X-FACTR's default. What the template asks and cannot be realised is added to gaps
// (resolve_template). A template whose object slot appears twice keeps the first as the cloze's.
ClozeText fill_cloze(const gen::ParsedTemplate& tpl, std::string_view lang, std::string_view subject_label,
                     gen::Gender subject_gender, gen::Gender object_gender, gen::TemplateGaps* gaps = nullptr);

}  // namespace kglm::probe
