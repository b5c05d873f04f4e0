#include "probe/cloze_text.hpp"

namespace kglm::probe {

using gen::TemplatePiece;

ClozeText fill_cloze(const gen::ParsedTemplate& tpl, std::string_view lang, const gen::TemplateEntity& subject,
                     const gen::TemplateEntity& object, const gen::InflectionTables* inflections,
                     gen::TemplateGaps* gaps) {
  gen::RealizeOptions options;
  options.probe = true;
  options.inflections = inflections;
  ClozeText cloze;
  bool after = false;
  for (const TemplatePiece& piece : gen::resolve_template(tpl, lang, subject, object, options, gaps)) {
    std::string& side = after ? cloze.suffix : cloze.prefix;
    if (piece.kind == TemplatePiece::Kind::object && !after) {
      after = true;
      cloze.object = piece.text;
    } else if (piece.kind != TemplatePiece::Kind::object) {
      side += piece.text;  // a second object slot would give the answer away: left out
    }
  }
  while (!cloze.prefix.empty() && cloze.prefix.back() == ' ') cloze.prefix.pop_back();
  while (!cloze.suffix.empty() && cloze.suffix.front() == ' ') cloze.suffix.erase(0, 1);
  return cloze;
}

}  // namespace kglm::probe
