#include "gen/entity_gender.hpp"

#include <algorithm>

#include "core/log.hpp"

namespace kglm::gen {

EntityGenders::EntityGenders(const kg::FactStore& facts, const FactText& text)
    : facts_(facts),
      text_(text),
      gender_relation_(text.relation_row("P21")),
      grammatical_gender_relation_(text.relation_row("P5185")) {}

Gender EntityGenders::of(uint32_t row) const {
  for (const kg::Fact& f : facts_.facts(row)) {
    if (f.kind != kg::FactKind::item) continue;
    if (f.relation != gender_relation_ && f.relation != grammatical_gender_relation_) continue;
    const std::string& value = text_.entity_id(facts_.object(f));
    if (value == "Q6581097" || value == "Q2449503") return Gender::masculine;  // male, trans man
    if (value == "Q6581072" || value == "Q1052281") return Gender::feminine;   // female, trans woman
    if (value == "Q499327") return Gender::masculine;                          // the grammatical genders
    if (value == "Q1775415") return Gender::feminine;
    if (value == "Q1775461") return Gender::neuter;
  }
  return Gender::unknown;
}

TemplateEntities::TemplateEntities(const kg::KgStore& store, const kg::FactStore& facts, const FactText& text)
    : facts_(facts),
      text_(text),
      genders_(facts, text),
      english_(store.terms("labels", "en")),
      instance_of_(text.relation_row("P31")),
      sex_or_gender_(text.relation_row("P21")) {
  if (english_.entity.empty())
    log_warning(
        "the KG store has no English labels: the classes (P31) that X-FACTR's template rules read "
        "(country, city, business, ...) are unknown; extract it with en among --langs");
}

TemplateEntity TemplateEntities::of(uint32_t row, std::string label) const {
  TemplateEntity e;
  e.label = std::move(label);
  e.gender = genders_.of(row);
  for (const kg::Fact& f : facts_.facts(row)) {
    if (f.kind != kg::FactKind::item) continue;
    if (f.relation == sex_or_gender_) e.human = true;
    if (f.relation != instance_of_) continue;
    const uint32_t cls = facts_.object(f);
    if (text_.entity_id(cls) == "Q5") e.human = true;
    const auto it = std::lower_bound(english_.entity.begin(), english_.entity.end(), cls);
    if (it != english_.entity.end() && *it == cls) {
      if (!e.classes.empty()) e.classes += ",";
      e.classes += english_.text[static_cast<size_t>(it - english_.entity.begin())];
    }
  }
  return e;
}

}  // namespace kglm::gen
