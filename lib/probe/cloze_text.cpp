#include "probe/cloze_text.hpp"

namespace kglm::probe {

using gen::Gender;
using gen::TemplatePiece;

ClozeText fill_cloze(const gen::ParsedTemplate& tpl, std::string_view lang, std::string_view subject_label,
                     Gender subject_gender, Gender object_gender, gen::TemplateGaps* gaps) {
  auto known = [](Gender g) { return g == Gender::unknown ? Gender::masculine : g; };
  ClozeText cloze;
  bool after = false;
  for (const TemplatePiece& piece :
       gen::resolve_template(tpl, lang, known(subject_gender), known(object_gender), gaps, false)) {
    std::string& side = after ? cloze.suffix : cloze.prefix;
    if (piece.kind == TemplatePiece::Kind::object && !after)
      after = true;
    else if (piece.kind == TemplatePiece::Kind::subject)
      side += subject_label;
    else if (piece.kind == TemplatePiece::Kind::text)
      side += piece.text;
  }
  while (!cloze.prefix.empty() && cloze.prefix.back() == ' ') cloze.prefix.pop_back();
  while (!cloze.suffix.empty() && cloze.suffix.front() == ' ') cloze.suffix.erase(0, 1);
  return cloze;
}

}  // namespace kglm::probe
