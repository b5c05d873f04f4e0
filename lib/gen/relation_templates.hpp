// Per-language relation templates in X-FACTR's format, e.g. fr P19
//   "[X] est [né;X-Gender=MASC|née;X-Gender=FEM] [PREPLOC;Y] [Y] ."
// parsed once when loaded; template_realizer.hpp fills them per fact.
//
// Markup understood (every form in X-FACTR's template files, all languages):
//   [X] [Y]                   the subject's / object's label. A case ([X.Gen], [Y.Loc], [Y.IN+ESS],
//                             [X.GEN]), a gender imposed on the slot ([X.Masc.Nom]) or the Turkish
//                             copula ([Y;be]) may follow. A Cyrillic or Greek capital that looks like
//                             X or Y ([Х] in he P47, a typo of the benchmark) is read as that slot,
//                             and the template says so (repairs) for the loader to warn.
//   [a;X-Gender=MASC|b;X-Gender=FEM]   a word agreeing with the subject (X-) or object (Y-) in gender
//                             (MASC, FEM, NEUT) or number (X-Number=SG|PL); each form is followed by
//                             its conditions. The pairs may also run on without '|' (fr P1923
//                             "[participé;Y-Gender=MASC;participée;Y-Gender=FEM]"); an empty field (a
//                             stray ';' or '|') is skipped.
//   [human: a ; non-human: b] a word chosen by whether the subject is a human (bn P31).
//   [CLASS;X] [CLASS;Y-Gender] [CLASS.Gen;X] [CLASS;Y.Fem]
//                             a function word (article, preposition, contraction) for an entity:
//                             fr ARTDEF ARTIND PREPDEF PREPDEF-à PREPLOC, es ART DEF, el DEF INDEF
//                             PREPDEF (template_languages.hpp); ".Gen" fixes its case, ".Fem" its gender.
// Anything else in brackets, an unbalanced bracket or a template without both slots is an error of
// that template only: load_file skips the line, says why and where, and keeps the rest.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/stats.hpp"

namespace kglm::gen {

enum class Gender { unknown, masculine, feminine, neuter };

enum class Entity { subject, object };  // X, Y

// One element of a parsed template.
struct TemplateElement {
  enum class Kind {
    text,           // literal text
    slot,           // [X], [Y.Loc], [X;be], …
    choice,         // [né;X-Gender=MASC|née;X-Gender=FEM], [human: … ; non-human: …]
    function_word,  // [PREPLOC;Y], [ART;X-Gender], [DEF.Gen;X]
  };
  // A form of a choice and the agreement it is for (unknown / 0: any).
  struct Alternative {
    Gender gender = Gender::unknown;
    int number = 0;  // 1 singular, 2 plural
    int human = 0;   // 1 human, 2 not human
    std::string form;

    bool operator==(const Alternative&) const = default;
  };
  Kind kind = Kind::text;
  Entity entity = Entity::subject;        // slot, choice, function_word: the entity concerned
  std::string text;                       // text: the literal; function_word: its class ("PREPLOC")
  std::string slot_case;                  // slot: the case asked for, upper case ("GEN", "IN+ESS"), "" for none;
                                          // function_word: the case fixed by the markup ("GEN" of [DEF.Gen;X])
  Gender fixed_gender = Gender::unknown;  // slot [X.Masc.Nom], function_word [DEF;Y.Fem]
  bool copula = false;                    // slot [Y;be]
  std::vector<Alternative> alternatives;  // choice: the first is the default (masculine in X-FACTR's files)
};

struct ParsedTemplate {
  uint64_t relation = 0;  // the P number
  std::string source;     // the template as written
  std::vector<TemplateElement> elements;
  std::vector<std::string> repairs;  // what was read otherwise than written ("[Х] (U+0425) read as [X]")
};

// Relation ids as Wikidata writes them: "P" and a number without leading zeros.
bool parse_relation_id(std::string_view id, uint64_t& number);
// DIR/LANG.jsonl, .jsonl.gz, .jsonl.zst or .jsonl.bz2, the first that exists; "" when none.
std::string find_language_file(const std::string& dir, const std::string& lang);

// Parses one template. Throws Error (reason only, no location) on an unbalanced bracket, unknown
// markup, or a template without both [X] and [Y].
ParsedTemplate parse_template(std::string_view source);

// The slot element of an entity (the first, if the template has two), or nullptr.
const TemplateElement* find_slot(const ParsedTemplate& parsed, Entity entity);

// A template line left out: where, which relation ("" when the line did not say), and why.
struct SkippedTemplate {
  std::string lang;
  std::string relation;
  std::string origin;  // "file:line"
  std::string reason;
};

class RelationTemplates {
 public:
  // Loads DIR/LANG.jsonl (or .jsonl.gz/.zst/.bz2) for each language of langs that has a file;
  // languages without one have no templates. Throws Error when dir is not a directory, and as
  // load_file does.
  static RelationTemplates load_dir(const std::string& dir, const std::vector<std::string>& langs);

  // Loads one JSONL file of lang: {"relation": "P19", "template": "…", …} per line, other fields
  // ignored. A line with invalid JSON, a missing or non-string relation or template, a relation that
  // is not P<number>, a template parse_template refuses, or a relation given again is left out and
  // listed in skipped() (that relation is then not probed or rendered in lang; the rest is). Throws
  // Error with the file's name when it holds lines but none of them is a template (the wrong file).
  void load_file(const std::string& lang, const std::string& path);

  // The template of relation P<relation_number> in lang, or nullptr.
  const ParsedTemplate* find(std::string_view lang, uint64_t relation_number) const;
  bool has_language(std::string_view lang) const { return by_lang_.find(lang) != by_lang_.end(); }
  // Templates loaded, all languages.
  size_t size() const;
  // Lines left out, in the order read; and templates read with a repair, as "file:line: what".
  const std::vector<SkippedTemplate>& skipped() const { return skipped_; }
  const std::vector<std::string>& repaired() const { return repaired_; }
  // The relations skipped in lang ("P1923"), for "skipped, not missing" messages.
  bool skipped_in(std::string_view lang, uint64_t relation_number) const;

 private:
  struct Loaded {
    ParsedTemplate parsed;
    std::string origin;  // "file:line", for the duplicate message
  };
  std::map<std::string, std::unordered_map<uint64_t, Loaded>, std::less<>> by_lang_;
  std::vector<SkippedTemplate> skipped_;
  std::vector<std::string> repaired_;
};

// The loader's findings for the user: one warning per skipped line ("FILE:LINE: why; P19 is not
// <unused> in fr") and per repair, and templates_skipped.LANG counted in stats.
void report_template_problems(const RelationTemplates& templates, std::string_view unused, Stats& stats);

}  // namespace kglm::gen
