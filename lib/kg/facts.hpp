// A subject's statements across the store's tables, item triples and literal claims alike, with
// their qualifiers: what kg-align aligns and verbalize groups into subgraphs.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "h5/h5.hpp"
#include "kg/kg_store.hpp"

namespace kglm::kg {

// The statement tables, numbered as /qualifiers/table numbers them (man 5 kglm-kg).
enum class FactKind : uint8_t { item, quantity, time, string, external_id, monolingualtext, globe_coordinate };
inline constexpr size_t kFactKinds = 7;
const char* fact_kind_name(FactKind kind);
// Parses a comma-separated list of kind names ("item,quantity,time"); throws UsageError.
std::vector<FactKind> parse_fact_kinds(std::string_view list);

struct Fact {
  uint32_t relation = 0;  // relation row
  FactKind kind = FactKind::item;
  uint32_t row = 0;  // row of the kind's table
};

// Qualifier value types, numbered as /qualifiers/type numbers them.
enum class QualifierType : uint8_t {
  item,
  property,
  quantity,
  time,
  string,
  external_id,
  monolingualtext,
  globe_coordinate
};

struct QualifierRef {
  uint32_t property = 0;  // relation row
  QualifierType type = QualifierType::item;
  uint32_t index = 0;  // row in the qualifier columns
};

class FactStore {
 public:
  // Loads the item triples and the literal tables of `kinds`, grouped by subject, with the
  // qualifiers of those statements; the rank-0 (deprecated) statements are left out.
  FactStore(const KgStore& store, const std::vector<FactKind>& kinds);

  uint64_t entity_count() const { return first_.size() - 1; }
  std::span<const Fact> facts(uint32_t subject) const {
    return {facts_.data() + first_[subject], facts_.data() + first_[subject + 1]};
  }
  size_t fact_count() const { return facts_.size(); }
  // The position of f (a reference into facts()) among all facts.
  size_t index(const Fact& f) const { return static_cast<size_t>(&f - facts_.data()); }
  size_t deprecated() const { return deprecated_; }

  uint32_t object(const Fact& f) const { return objects_[f.row]; }  // item facts
  std::string_view amount(const Fact& f) const { return quantity_amount_[f.row]; }
  uint64_t unit(const Fact& f) const { return quantity_unit_[f.row]; }  // item number, 0 = none
  std::string_view time_value(const Fact& f) const { return time_value_[f.row]; }
  int time_precision(const Fact& f) const { return time_precision_[f.row]; }
  // The value of string, external_id, monolingualtext (its text) and globe_coordinate ("lat,lon") facts.
  std::string_view text(const Fact& f) const;
  std::string_view language(const Fact& f) const { return mono_language_[f.row]; }  // monolingualtext

  std::span<const QualifierRef> qualifiers(const Fact& f) const;
  std::string_view qualifier_value(const QualifierRef& q) const { return q_value_[q.index]; }
  uint64_t qualifier_number(const QualifierRef& q) const { return q_number_[q.index]; }
  int qualifier_precision(const QualifierRef& q) const { return q_precision_[q.index]; }

  // Entity row of item Q<number>, or -1 when it is not in the store.
  int64_t item_row(uint64_t number) const;

 private:
  std::vector<uint64_t> first_;  // subject -> first fact (CSR)
  std::vector<Fact> facts_;
  size_t deprecated_ = 0;
  std::vector<uint32_t> objects_;
  h5::StringTable quantity_amount_, time_value_, string_value_, external_value_, mono_language_, mono_text_,
      coordinates_;
  std::vector<uint64_t> quantity_unit_;
  std::vector<int8_t> time_precision_;
  // Qualifiers sorted by (table, row); fact -> range via binary search.
  std::vector<uint64_t> q_key_;  // table << 56 | row
  std::vector<QualifierRef> q_refs_;
  h5::StringTable q_value_;
  std::vector<uint64_t> q_number_;
  std::vector<int8_t> q_precision_;
  std::unordered_map<uint64_t, uint32_t> item_rows_;
};

}  // namespace kglm::kg
