#include "kg/facts.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace kglm::kg {

namespace {

constexpr const char* kKindNames[kFactKinds] = {
    "item", "quantity", "time", "string", "external_id", "monolingualtext", "globe_coordinate"};

struct LiteralRows {
  std::vector<uint32_t> subject, relation;
  std::vector<uint8_t> rank;
};

LiteralRows read_literal_rows(const h5::Group& g) {
  return {h5::read_column<uint32_t>(g, "subject"), h5::read_column<uint32_t>(g, "relation"),
          h5::read_column<uint8_t>(g, "rank")};
}

}  // namespace

const char* fact_kind_name(FactKind kind) { return kKindNames[static_cast<size_t>(kind)]; }

std::vector<FactKind> parse_fact_kinds(std::string_view list) {
  std::vector<FactKind> kinds;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    auto it = std::find(std::begin(kKindNames), std::end(kKindNames), name);
    if (it == std::end(kKindNames)) {
      throw UsageError("unknown statement kind '" + std::string(name) +
                       "' (item, quantity, time, string, external_id, monolingualtext, globe_coordinate)");
    }
    const auto kind = static_cast<FactKind>(it - std::begin(kKindNames));
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return kinds;
}

FactStore::FactStore(const KgStore& store, const std::vector<FactKind>& kinds) {
  const uint64_t entities = store.entity_count();
  const uint64_t relations = store.relation_numbers().size();
  auto wanted = [&](FactKind k) { return std::find(kinds.begin(), kinds.end(), k) != kinds.end(); };
  // Every table's (subject, relation, rank) rows, checked, then bucketed by subject.
  std::vector<std::pair<FactKind, LiteralRows>> tables;
  if (wanted(FactKind::item)) {
    TripleTable t = store.triples();
    objects_ = std::move(t.object);
    for (uint32_t o : objects_)
      if (o >= entities) throw Error(store.root().where() + "triples: object row out of range");
    tables.emplace_back(FactKind::item, LiteralRows{std::move(t.subject), std::move(t.relation), std::move(t.rank)});
  }
  const h5::Group literals = store.root().open_group("literals");
  for (size_t k = 1; k < kFactKinds; ++k) {
    const auto kind = static_cast<FactKind>(k);
    if (!wanted(kind)) continue;
    const h5::Group g = literals.open_group(kKindNames[k]);
    tables.emplace_back(kind, read_literal_rows(g));
    switch (kind) {
      case FactKind::quantity:
        quantity_amount_ = h5::read_string_table(g, "amount");
        quantity_unit_ = h5::read_column<uint64_t>(g, "unit");
        break;
      case FactKind::time:
        time_value_ = h5::read_string_table(g, "value");
        time_precision_ = h5::read_column<int8_t>(g, "precision");
        break;
      case FactKind::string:
        string_value_ = h5::read_string_table(g, "value");
        break;
      case FactKind::external_id:
        external_value_ = h5::read_string_table(g, "value");
        break;
      case FactKind::monolingualtext:
        mono_language_ = h5::read_string_table(g, "language");
        mono_text_ = h5::read_string_table(g, "text");
        break;
      case FactKind::globe_coordinate: {
        const auto lat = h5::read_column<double>(g, "latitude");
        const auto lon = h5::read_column<double>(g, "longitude");
        for (size_t i = 0; i < lat.size(); ++i)
          coordinates_.push_back(std::to_string(lat[i]) + "," + std::to_string(lon[i]));
        break;
      }
      case FactKind::item:
        break;
    }
  }
  first_.assign(entities + 2, 0);
  for (const auto& [kind, rows] : tables) {
    if (rows.relation.size() != rows.subject.size() || rows.rank.size() != rows.subject.size())
      throw Error(store.root().where() + fact_kind_name(kind) + ": columns differ in length");
    for (size_t i = 0; i < rows.subject.size(); ++i) {
      if (rows.subject[i] >= entities || rows.relation[i] >= relations)
        throw Error(store.root().where() + fact_kind_name(kind) + ": row " + std::to_string(i) + " out of range");
      if (rows.rank[i] == 0)
        ++deprecated_;
      else
        ++first_[rows.subject[i] + 2];
    }
  }
  for (size_t i = 2; i < first_.size(); ++i) first_[i] += first_[i - 1];
  facts_.resize(first_.back());
  for (const auto& [kind, rows] : tables) {
    for (size_t i = 0; i < rows.subject.size(); ++i) {
      if (rows.rank[i] == 0) continue;
      facts_[first_[rows.subject[i] + 1]++] = Fact{rows.relation[i], kind, static_cast<uint32_t>(i)};
    }
  }
  first_.pop_back();

  // Qualifiers of the loaded tables.
  const h5::Group q = store.root().open_group("qualifiers");
  const auto q_table = h5::read_column<uint8_t>(q, "table");
  const auto q_row = h5::read_column<uint64_t>(q, "row");
  const auto q_property = h5::read_column<uint32_t>(q, "property");
  const auto q_type = h5::read_column<uint8_t>(q, "type");
  q_value_ = h5::read_string_table(q, "value");
  q_number_ = h5::read_column<uint64_t>(q, "number");
  q_precision_ = h5::read_column<int8_t>(q, "precision");
  const size_t n = q_table.size();
  if (q_row.size() != n || q_property.size() != n || q_type.size() != n || q_value_.size() != n ||
      q_number_.size() != n || q_precision_.size() != n)
    throw Error(q.where() + "qualifier columns differ in length");
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < n; ++i) {
    if (q_table[i] >= kFactKinds || !wanted(static_cast<FactKind>(q_table[i])) || q_type[i] > 7) continue;
    if (q_property[i] >= relations)
      throw Error(q.where() + "qualifier " + std::to_string(i) + ": property out of range");
    order.push_back(i);
  }
  auto key = [&](uint32_t i) { return uint64_t{q_table[i]} << 56 | q_row[i]; };
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  for (uint32_t i : order) {
    q_key_.push_back(key(i));
    q_refs_.push_back(QualifierRef{q_property[i], static_cast<QualifierType>(q_type[i]), i});
  }

  const auto types = store.entity_types();
  const auto numbers = store.entity_numbers();
  for (uint32_t e = 0; e < numbers.size(); ++e)
    if (types[e] == static_cast<uint8_t>(EntityType::item)) item_rows_.emplace(numbers[e], e);
}

std::string_view FactStore::text(const Fact& f) const {
  switch (f.kind) {
    case FactKind::string:
      return string_value_[f.row];
    case FactKind::external_id:
      return external_value_[f.row];
    case FactKind::monolingualtext:
      return mono_text_[f.row];
    case FactKind::globe_coordinate:
      return coordinates_[f.row];
    default:
      return {};
  }
}

std::span<const QualifierRef> FactStore::qualifiers(const Fact& f) const {
  const uint64_t k = uint64_t{static_cast<uint8_t>(f.kind)} << 56 | f.row;
  auto [lo, hi] = std::equal_range(q_key_.begin(), q_key_.end(), k);
  return {q_refs_.data() + (lo - q_key_.begin()), static_cast<size_t>(hi - lo)};
}

int64_t FactStore::item_row(uint64_t number) const {
  auto it = item_rows_.find(number);
  return it == item_rows_.end() ? int64_t{-1} : int64_t{it->second};
}

}  // namespace kglm::kg
