// Statements as text: labels of subjects, relations and objects in a language, literal values as
// Wikipedia writes them, and the JSON members kg-align and verbalize write for a list of
// statements (KELM's "triples" and "serialized_triples", plus kglm's "facts" with ids).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/string_hash.hpp"
#include "gen/labels.hpp"
#include "kg/facts.hpp"
#include "kg/kg_store.hpp"

namespace kglm::gen {

// One statement, or one qualifier of it (qualifier >= 0): TEKGEN's sub-triple
// (s, o + " " + qualifier label, value).
struct FactRef {
  const kg::Fact* fact = nullptr;
  int qualifier = -1;
};

class FactText {
 public:
  // labels: the languages text is wanted in (index 0 is the one kg-align uses: English).
  FactText(const kg::KgStore& store, const kg::FactStore& facts, const LabelIndex& labels);

  const LabelIndex& labels() const { return labels_; }
  const std::string& entity_id(uint32_t row) const { return entity_ids_[row]; }
  const std::string& relation_id(uint32_t relation) const { return relation_ids_[relation]; }
  uint64_t relation_number(uint32_t relation) const { return relation_numbers_[relation]; }
  size_t relation_count() const { return relation_numbers_.size(); }
  std::optional<std::string_view> relation_label(size_t lang, uint32_t relation) const;
  // The object of f in language lang: an item's label, "amount unit" (the unit's label, left out
  // when it has none; English amounts with thousands separators), a date (English: "14 March
  // 1879", other languages ISO "1879-03-14"), a string's value.
  // nullopt when an item has no label in lang or a value cannot be read.
  std::optional<std::string> object(size_t lang, const kg::Fact& f) const;
  std::optional<std::string> qualifier_value(size_t lang, const kg::QualifierRef& q) const;
  // Language-neutral ids: "Q3012", "643801 Q712226" (amount and unit), "1879-03-14", the string.
  std::string object_id(const kg::Fact& f) const;
  std::string qualifier_value_id(const kg::QualifierRef& q) const;
  // The relation row of "P19", the entity row of item "Q42"; -1 when absent.
  int64_t relation_row(std::string_view id) const;
  int64_t item_row(std::string_view id) const;
  // A value given by its kind ("item", "property", "quantity", "time", or any other kind: the id
  // is the text) and its id, as text in language lang: what object() and qualifier_value() give.
  std::optional<std::string> value_text(size_t lang, std::string_view kind, std::string_view id) const;

  // Appends ,"triples":[…],"serialized_triples":"…","facts":[…] for refs (English labels; an
  // item without one is written as its id). Triples are [s, r, o]; a qualifier is the 4-list
  // [s, r, o + " " + qualifier label, value]. serialized_triples is TEKGEN's "s r1 o1, r2 o2";
  // facts are [relation, kind, value] or, for a qualifier, [relation, kind, value, qualifier,
  // qualifier type, qualifier value] with ids.
  void append_triples_json(std::string& out, uint32_t subject, const std::vector<FactRef>& refs) const;

 private:
  std::string english_or_id(uint32_t row) const;
  std::string relation_english(uint32_t relation) const;

  const kg::FactStore& facts_;
  const LabelIndex& labels_;
  std::vector<std::string> entity_ids_;
  std::vector<std::string> relation_ids_;
  std::vector<uint64_t> relation_numbers_;
  std::vector<int64_t> relation_entities_;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> relation_rows_;
};

}  // namespace kglm::gen
