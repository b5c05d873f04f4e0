#include "gen/fact_text.hpp"

#include <algorithm>
#include <charconv>

#include "core/json_writer.hpp"
#include "kg/entity.hpp"
#include "text/dates.hpp"
#include "text/numbers.hpp"

namespace kglm::gen {

namespace {

constexpr const char* kQualifierTypeNames[] = {"item",   "property",    "quantity",        "time",
                                               "string", "external_id", "monolingualtext", "globe_coordinate"};

// "1879-03-14", "1879-03", "1879", "-0300": format_date_iso's forms.
std::optional<text::DateValue> parse_iso_date(std::string_view s) {
  text::DateValue d;
  const bool negative = !s.empty() && s[0] == '-';
  if (negative) s.remove_prefix(1);
  int parts[3] = {0, 0, 0};
  size_t n = 0;
  while (n < 3) {
    const size_t dash = s.find('-');
    const std::string_view part = s.substr(0, dash);
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), parts[n]);
    if (ec != std::errc() || end != part.data() + part.size() || part.empty()) return std::nullopt;
    ++n;
    if (dash == std::string_view::npos) break;
    s.remove_prefix(dash + 1);
  }
  d.year = negative ? -parts[0] : parts[0];
  d.month = parts[1];
  d.day = parts[2];
  if (d.year == 0 || d.month > 12 || d.day > 31) return std::nullopt;
  return d;
}

}  // namespace

FactText::FactText(const kg::KgStore& store, const kg::FactStore& facts, const LabelIndex& labels)
    : facts_(facts), labels_(labels) {
  entity_ids_ = store.entity_ids();
  relation_numbers_ = store.relation_numbers();
  relation_entities_ = store.relation_entities();
  for (uint32_t r = 0; r < relation_numbers_.size(); ++r) {
    relation_ids_.push_back(kg::entity_id(kg::EntityType::property, relation_numbers_[r]));
    relation_rows_.emplace(relation_ids_.back(), r);
  }
}

std::optional<std::string_view> FactText::relation_label(size_t lang, uint32_t relation) const {
  const int64_t entity = relation_entities_[relation];
  if (entity < 0) return std::nullopt;
  return labels_.label(lang, static_cast<uint32_t>(entity));
}

int64_t FactText::relation_row(std::string_view id) const {
  auto it = relation_rows_.find(id);
  return it == relation_rows_.end() ? int64_t{-1} : int64_t{it->second};
}

int64_t FactText::item_row(std::string_view id) const {
  uint64_t number = 0;
  if (id.size() < 2 || id[0] != 'Q') return -1;
  auto [end, ec] = std::from_chars(id.data() + 1, id.data() + id.size(), number);
  if (ec != std::errc() || end != id.data() + id.size()) return -1;
  return facts_.item_row(number);
}

std::optional<std::string> FactText::object(size_t lang, const kg::Fact& f) const {
  return value_text(lang, kg::fact_kind_name(f.kind), object_id(f));
}

std::optional<std::string> FactText::qualifier_value(size_t lang, const kg::QualifierRef& q) const {
  return value_text(lang, kQualifierTypeNames[static_cast<size_t>(q.type)], qualifier_value_id(q));
}

std::optional<std::string> FactText::value_text(size_t lang, std::string_view kind, std::string_view id) const {
  const bool english = labels_.languages()[lang] == "en";
  auto label_of = [](std::optional<std::string_view> label) {
    return label ? std::optional<std::string>(std::string(*label)) : std::nullopt;
  };
  if (kind == "item") {
    const int64_t row = item_row(id);
    return row < 0 ? std::nullopt : label_of(labels_.label(lang, static_cast<uint32_t>(row)));
  }
  if (kind == "property") {
    const int64_t relation = relation_row(id);
    return relation < 0 ? std::nullopt : label_of(relation_label(lang, static_cast<uint32_t>(relation)));
  }
  if (kind == "quantity") {
    const size_t space = id.find(' ');
    const std::string_view amount = id.substr(0, space);
    std::string out = english ? text::format_amount_en(amount) : std::string(amount);
    if (space != std::string_view::npos) {
      const int64_t unit = item_row(id.substr(space + 1));
      auto label = unit < 0 ? std::nullopt : labels_.label(lang, static_cast<uint32_t>(unit));
      if (label) out += " " + std::string(*label);
    }
    return out;
  }
  if (kind == "time" && english) {
    auto date = parse_iso_date(id);
    if (date) return text::format_date_en(*date);
  }
  return std::string(id);
}

std::string FactText::object_id(const kg::Fact& f) const {
  switch (f.kind) {
    case kg::FactKind::item:
      return entity_ids_[facts_.object(f)];
    case kg::FactKind::quantity: {
      std::string id = text::canonical_decimal(facts_.amount(f)).value_or(std::string(facts_.amount(f)));
      if (facts_.unit(f) != 0) id += " " + kg::entity_id(kg::EntityType::item, facts_.unit(f));
      return id;
    }
    case kg::FactKind::time: {
      auto date = text::parse_wikidata_time(facts_.time_value(f), facts_.time_precision(f));
      return date ? text::format_date_iso(*date) : std::string(facts_.time_value(f));
    }
    default:
      return std::string(facts_.text(f));
  }
}

std::string FactText::qualifier_value_id(const kg::QualifierRef& q) const {
  const std::string_view value = facts_.qualifier_value(q);
  const uint64_t number = facts_.qualifier_number(q);
  switch (q.type) {
    case kg::QualifierType::item:
      return kg::entity_id(kg::EntityType::item, number);
    case kg::QualifierType::property:
      return kg::entity_id(kg::EntityType::property, number);
    case kg::QualifierType::quantity: {
      std::string id = text::canonical_decimal(value).value_or(std::string(value));
      if (number != 0) id += " " + kg::entity_id(kg::EntityType::item, number);
      return id;
    }
    case kg::QualifierType::time: {
      auto date = text::parse_wikidata_time(value, facts_.qualifier_precision(q));
      return date ? text::format_date_iso(*date) : std::string(value);
    }
    default:
      return std::string(value);
  }
}

std::string FactText::english_or_id(uint32_t row) const {
  auto label = labels_.label(0, row);
  return label ? std::string(*label) : entity_ids_[row];
}

std::string FactText::relation_english(uint32_t relation) const {
  auto label = relation_label(0, relation);
  return label ? std::string(*label) : relation_ids_[relation];
}

void FactText::append_triples_json(std::string& out, uint32_t subject, const std::vector<FactRef>& refs) const {
  const std::string s = english_or_id(subject);
  std::string serialized = s;
  std::string facts_json;
  out += ",\"triples\":[";
  for (size_t i = 0; i < refs.size(); ++i) {
    const kg::Fact& f = *refs[i].fact;
    const std::string r = relation_english(f.relation);
    std::string o = object(0, f).value_or(object_id(f));
    if (i > 0) {
      out.push_back(',');
      facts_json.push_back(',');
      serialized += ",";
    }
    out.push_back('[');
    append_json_string(out, s);
    out.push_back(',');
    append_json_string(out, r);
    facts_json.push_back('[');
    append_json_string(facts_json, relation_ids_[f.relation]);
    facts_json += ",\"";
    facts_json += kg::fact_kind_name(f.kind);
    facts_json += "\",";
    append_json_string(facts_json, object_id(f));
    if (refs[i].qualifier < 0) {
      out.push_back(',');
      append_json_string(out, o);
      serialized += " " + r + " " + o;
    } else {
      const kg::QualifierRef& q = facts_.qualifiers(f)[static_cast<size_t>(refs[i].qualifier)];
      const std::string ql = relation_english(q.property);
      const std::string v = qualifier_value(0, q).value_or(qualifier_value_id(q));
      out.push_back(',');
      append_json_string(out, o + " " + ql);
      out.push_back(',');
      append_json_string(out, v);
      serialized += " " + o + " " + ql + " " + v;
      facts_json.push_back(',');
      append_json_string(facts_json, relation_ids_[q.property]);
      facts_json += ",\"";
      facts_json += kQualifierTypeNames[static_cast<size_t>(q.type)];
      facts_json += "\",";
      append_json_string(facts_json, qualifier_value_id(q));
    }
    out.push_back(']');
    facts_json.push_back(']');
  }
  out += "],\"serialized_triples\":";
  append_json_string(out, serialized);
  out += ",\"facts\":[";
  out += facts_json;
  out.push_back(']');
}

}  // namespace kglm::gen
