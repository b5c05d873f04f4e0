// The per-language rules X-FACTR's prompt code applies when it fills a template (its Prompt
// classes, read and re-expressed here): how an entity's gender and number are decided when the KG
// gives none, which article or preposition goes before it, and the two inflections it makes by rule
// (the Turkish copula, the Marathi locative). Case inflection from tables is inflection_tables.hpp's.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gen/relation_templates.hpp"

namespace kglm::gen {

// What a template needs to know about an entity to agree with it.
struct TemplateEntity {
  std::string label;
  Gender gender = Gender::unknown;  // the KG's (P21, else P5185); unknown when it says nothing
  std::string classes;              // English labels of its "instance of" (P31) classes, comma-separated
  bool human = false;               // an instance of human (Q5), or one with a P21 gender
};

// The agreement X-FACTR works out for an entity in a language.
struct Agreement {
  Gender gender = Gender::unknown;
  bool plural = false;
  bool country = false;  // fr: a state or country takes an article, other names none
  bool city = false;     // fr: "à" before a city, "en" before anything else
  bool human = false;    // bn: the classifier
};

// The KG's gender when it has one; else, as X-FACTR: fr, es, ru, el guess from the label's ending
// (the first word's in fr, es, el) and correct the guess from the classes' labels (a "business" is
// feminine in fr; a "musical group" plural in es, el; ...); he, mr, ru take masculine for a human;
// other languages leave it unknown.
Agreement agreement(std::string_view lang, const TemplateEntity& entity);

// A function word for an entity with agreement a. case_name is the case of the entity's slot ("" for
// the nominative) unless the markup fixes one; next_word is the text after the word (fr elides before
// a vowel). Returns "" where the rule is no word (fr: no article before a proper name that is not a
// country), nullopt where the language has no such word (a gap to count).
std::optional<std::string> function_word(std::string_view lang, std::string_view word_class, const Agreement& a,
                                         std::string_view case_name, std::string_view next_word);

// Words of a function word's class in lang, space-separated, for templates that write the word
// before the markup too (fr P31 "est un [ARTIND;Y]", P159 "est en [PREPLOC;Y]"): "" when none.
std::string_view function_word_class_words(std::string_view lang, std::string_view word_class);

// X-FACTR leaves some labels as they are rather than inflect them: any Latin letter, or all capitals
// (ru, el, tr, hu, bn, mr), or a final consonant (el).
bool keeps_label_plain(std::string_view lang, std::string_view label);

// The inflections X-FACTR makes by rule, not by its inflector: the Turkish copula "-dır" of [Y;be]
// (harmony and devoicing, "'" before it) and the Marathi locative "-त" of [Y.LOC]; nullopt for others.
std::optional<std::string> inflect_by_rule(std::string_view lang, std::string_view label, const TemplateElement& slot,
                                           bool plural);

// Whether a case inflects only the last word of a multi-word name (Turkish, Hungarian, Bengali
// suffixes), rather than every word agreeing (Russian, Greek).
bool case_on_last_word(std::string_view lang);

}  // namespace kglm::gen
