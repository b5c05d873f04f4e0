// What relation templates need to know of KG items: the gender they agree with (P21, sex or gender,
// for people, else P5185, grammatical gender, where an item has it; unknown otherwise), and the
// classes X-FACTR's per-language rules read (the English labels of its "instance of", P31, classes;
// whether it is a human: Q5, or P21 given).
#pragma once

#include <cstdint>
#include <string>

#include "gen/fact_text.hpp"
#include "gen/relation_templates.hpp"
#include "gen/template_languages.hpp"
#include "kg/facts.hpp"
#include "kg/kg_store.hpp"

namespace kglm::gen {

class EntityGenders {
 public:
  // Both must outlive this object.
  EntityGenders(const kg::FactStore& facts, const FactText& text);

  Gender of(uint32_t row) const;

 private:
  const kg::FactStore& facts_;
  const FactText& text_;
  int64_t gender_relation_ = -1;              // P21
  int64_t grammatical_gender_relation_ = -1;  // P5185
};

class TemplateEntities {
 public:
  // All three must outlive this object. English labels are loaded here for the classes (a warning
  // when the store has none: X-FACTR's class rules then never apply).
  TemplateEntities(const kg::KgStore& store, const kg::FactStore& facts, const FactText& text);

  // Item row's gender, classes and humanness, with label as its text.
  TemplateEntity of(uint32_t row, std::string label) const;
  Gender gender(uint32_t row) const { return genders_.of(row); }

 private:
  const kg::FactStore& facts_;
  const FactText& text_;
  EntityGenders genders_;
  kg::TermTable english_;       // the classes' names
  int64_t instance_of_ = -1;    // P31
  int64_t sex_or_gender_ = -1;  // P21: only people have it
};

}  // namespace kglm::gen
