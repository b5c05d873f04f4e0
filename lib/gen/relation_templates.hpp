// Per-language relation templates in X-FACTR's format, e.g. fr P19
//   "[X] est [né;X-Gender=MASC|née;X-Gender=FEM] [PREPLOC;Y] [Y] ."
// parsed once when loaded and filled per triple by `verbalize render --mode template`.
//
// Markup understood (anything else in brackets is rejected when loading):
//   [X] [Y]                 the subject's / object's label; case and feature suffixes ([X.Nom],
//                           [Y.Loc], [Y;be]) are accepted and ignored: labels are not inflected.
//   [form;X-Gender=MASC|…]  a word agreeing with the subject's (X-) or object's (Y-) gender;
//                           X-Number/Y-Number features are accepted and ignored (entities count as
//                           singular); an alternative with no text at all (a stray '|' or ';') is skipped.
//   [CLASS;Y] [CLASS;X-Gender]  a function word (article, preposition) for an entity, taken from
//                           a small per-language table (see resolve_template); none there: dropped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kglm::gen {

enum class Gender { unknown, masculine, feminine, neuter };

// A piece of a resolved template: literal text, or the place of the subject's or object's label
// (no text), so the caller can insert labels and record their byte spans.
struct TemplatePiece {
  enum class Kind { text, subject, object };
  Kind kind = Kind::text;
  std::string text;

  bool operator==(const TemplatePiece&) const = default;
};

// One element of a parsed template.
struct TemplateElement {
  enum class Kind {
    text,           // literal text
    subject,        // [X], [X.Nom], …
    object,         // [Y], [Y.Loc], [Y;be], …
    choice,         // [né;X-Gender=MASC|née;X-Gender=FEM]
    function_word,  // [PREPLOC;Y], [ART;X-Gender]
  };
  Kind kind = Kind::text;
  std::string text;  // text: the literal; function_word: its class ("PREPLOC"); subject, object:
                     // the case or feature asked for ("Gen" of [X.Gen], "be" of [Y;be]), or ""
  // choice, function_word: the entity whose gender decides (subject or object).
  TemplatePiece::Kind entity = TemplatePiece::Kind::subject;
  // choice: the forms with the gender each is for (unknown: none named); the first is the
  // default, which is the masculine one in X-FACTR's files.
  std::vector<std::pair<Gender, std::string>> alternatives;
};

struct ParsedTemplate {
  uint64_t relation = 0;  // the P number
  std::string source;     // the template as written
  std::vector<TemplateElement> elements;
};

// Parses one template. Throws Error (reason only, no location) on an unbalanced bracket, unknown
// markup, or a template without both [X] and [Y].
ParsedTemplate parse_template(std::string_view source);

class RelationTemplates {
 public:
  // Loads DIR/LANG.jsonl (or .jsonl.gz/.zst/.bz2) for each language of langs that has a file;
  // languages without one have no templates. Throws Error when dir is not a directory, and with
  // file:line on a bad line (see load_file).
  static RelationTemplates load_dir(const std::string& dir, const std::vector<std::string>& langs);

  // Loads one JSONL file of lang: {"relation": "P19", "template": "…", …} per line, other fields
  // ignored. Throws Error with file:line on invalid JSON, a missing or non-string relation or
  // template, a relation that is not P<number>, a bad template (see parse_template), or a
  // relation given twice (naming both places); nothing of the file is kept then.
  void load_file(const std::string& lang, const std::string& path);

  // The template of relation P<relation_number> in lang, or nullptr.
  const ParsedTemplate* find(std::string_view lang, uint64_t relation_number) const;
  bool has_language(std::string_view lang) const { return by_lang_.find(lang) != by_lang_.end(); }
  // Templates loaded, all languages.
  size_t size() const;

 private:
  struct Loaded {
    ParsedTemplate parsed;
    std::string origin;  // "file:line", for the duplicate message
  };
  std::map<std::string, std::unordered_map<uint64_t, Loaded>, std::less<>> by_lang_;
};

// What resolve_template could not realise for want of morphological data: a slot's case or
// feature other than the nominative ([X.Gen], [Y.Loc], [Y;be]: the label is used uninflected), and
// a function word with no form in this language's table (dropped).
struct TemplateGaps {
  int64_t uninflected = 0;
  int64_t missing_function_words = 0;
};

// Resolves a parsed template into text/subject/object pieces. Gender choices take the form for the
// subject's gender (X-Gender) or the object's (Y-Gender); a gender the choice has no form for takes
// the first form. An unknown gender takes the template's neutral form: an alternative with no
// gender, else both forms ("né(e)", "родился/родилась"), so that nothing is asserted that the KG
// does not say (NEUT forms are for neuter entities). Function words come from this table (X-FACTR's defaults for proper
// names, which most KG labels are; gendered where X-FACTR's are; "neutral" for an unknown gender):
//   fr  PREPLOC "à"   PREPDEF "de"   ARTIND "un" / feminine "une" / neutral "un(e)"   ARTDEF: none
//   es  ART "un" / "una" / "un(a)"   ARTIND the same   PREPLOC "en"   PREPDEF "de"   ARTDEF: none
// Any other language or class has none: the word is dropped. It is dropped too right after a
// word of its class in the template's text (fr P31 "est un [ARTIND;Y]", P159 "est en
// [PREPLOC;Y]" write both). No elision ("l'") or contraction ("du", "au") is made, since the
// label's first letter and the entity's type are unknown here.
// Whitespace is normalised: runs collapse to one space, a space before '.', ',', '?' or '!'
// ending a word goes (X-FACTR writes " ."), and the sentence is trimmed. Text attached to a slot
// ("[Y]에서", "[Y]이다.") stays attached. Adjacent text is merged; empty text pieces are left out.
// With gaps, what could not be realised is added there. attach_punctuation false keeps the
// template's own " ." (X-FACTR's probes tokenize the template as written).
std::vector<TemplatePiece> resolve_template(const ParsedTemplate& parsed, std::string_view lang,
                                            Gender subject_gender = Gender::unknown,
                                            Gender object_gender = Gender::unknown, TemplateGaps* gaps = nullptr,
                                            bool attach_punctuation = true);

// The sentence with the labels in place (resolve_template, then concatenation).
std::string fill_template(const ParsedTemplate& parsed, std::string_view lang, std::string_view subject_label,
                          std::string_view object_label, Gender subject_gender = Gender::unknown,
                          Gender object_gender = Gender::unknown);

}  // namespace kglm::gen
