// Fills a parsed relation template (relation_templates.hpp) for one fact, the way X-FACTR's prompt
// code does in each language (template_languages.hpp): genders and numbers agreed, articles and
// prepositions chosen, case-marked slots inflected from tables (inflection_tables.hpp) or by X-FACTR's
// rules, and what could not be realised counted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gen/inflection_tables.hpp"
#include "gen/relation_templates.hpp"
#include "gen/template_languages.hpp"

namespace kglm::gen {

// A piece of a realised template: literal text, or the subject's or object's label as the template
// wants it (inflected where it asks a case), so the caller can mark their spans or mask the object.
struct TemplatePiece {
  enum class Kind { text, subject, object };
  Kind kind = Kind::text;
  std::string text;

  bool operator==(const TemplatePiece&) const = default;
};

// Per slot that asks a case (or the Turkish copula): inflected (from the tables or by rule), kept
// plain by X-FACTR's own rule (a Latin-script or all-capitals name), or left plain for want of a
// form (no table, or the name not in it); and function words the language has no table for.
struct TemplateGaps {
  int64_t inflected = 0;
  int64_t kept_plain = 0;
  int64_t uninflected = 0;
  int64_t missing_function_words = 0;
};

struct RealizeOptions {
  // X-FACTR's probe: an unknown gender takes the template's first form (X-FACTR's default), the
  // template's spacing before punctuation is kept (" ."), and nothing is read from the object's
  // label that a cloze masks (no elision before it). Otherwise (rendering text): an unknown gender
  // takes a neutral form ("né(e)"), and punctuation is attached.
  bool probe = false;
  const InflectionTables* inflections = nullptr;  // none: case-marked slots keep the label
};

// Realises parsed for the two entities. Whitespace is normalised: runs collapse to one space, the
// sentence is trimmed, and (not probe) a space before '.', ',', '?' or '!' ending a word goes. Text
// attached to a slot ("[Y]에서") stays attached. Adjacent text is merged; empty text pieces are left
// out. A function word the template also writes as text just before it (fr P31 "est un [ARTIND;Y]")
// replaces that text. With gaps, the counts are added there.
std::vector<TemplatePiece> resolve_template(const ParsedTemplate& parsed, std::string_view lang,
                                            const TemplateEntity& subject, const TemplateEntity& object,
                                            const RealizeOptions& options = {}, TemplateGaps* gaps = nullptr);

// The sentence (resolve_template, then concatenation).
std::string fill_template(const ParsedTemplate& parsed, std::string_view lang, const TemplateEntity& subject,
                          const TemplateEntity& object, const RealizeOptions& options = {});

// The entity's label as slot asks it (the case, the copula), e.g. for a probe's other answers.
std::string realize_slot(const TemplateElement& slot, std::string_view lang, const TemplateEntity& entity,
                         const RealizeOptions& options = {}, TemplateGaps* gaps = nullptr);

}  // namespace kglm::gen
