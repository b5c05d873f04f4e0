// The gender templates agree with (relation_templates.hpp): P21 (sex or gender) for people, else
// P5185 (grammatical gender) where an item has it; unknown otherwise.
#pragma once

#include <cstdint>

#include "gen/fact_text.hpp"
#include "gen/relation_templates.hpp"
#include "kg/facts.hpp"

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

}  // namespace kglm::gen
