#include "kg/entity_parser.hpp"

#include <charconv>
#include <cmath>

namespace kglm::kg {

namespace od = simdjson::ondemand;

namespace {

bool parse_number(std::string_view digits, uint64_t& number) {
  if (digits.empty() || digits.size() > 19) return false;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  return ec == std::errc() && end == digits.data() + digits.size() && number > 0;
}

// "http://www.wikidata.org/entity/Q11573" -> 11573; "1" (no unit) -> 0.
bool parse_entity_url(std::string_view url, uint64_t& number) {
  if (url == "1") {
    number = 0;
    return true;
  }
  size_t slash = url.rfind('/');
  std::string_view id = slash == std::string_view::npos ? url : url.substr(slash + 1);
  return id.size() > 1 && id[0] == 'Q' && parse_number(id.substr(1), number);
}

class BadEntity : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string_view get_string(od::value v) { return v.get_string(); }

// The datavalue's "value", recognised by its shape (its "type" sibling may come later).
bool parse_datavalue_value(od::value v, StringArena& arena, Value& out) {
  if (v.type() == od::json_type::string) {
    out.type = ValueType::string;
    out.text = arena.store(get_string(v));
    return true;
  }
  od::object obj = v.get_object();
  std::string_view entity_type;
  std::string_view id;
  uint64_t numeric_id = 0;
  bool entity = false, quantity = false, time = false, mono = false, globe = false;
  for (auto field : obj) {
    std::string_view key = field.unescaped_key();
    od::value fv = field.value();
    if (key == "entity-type") {
      entity = true;
      entity_type = get_string(fv);
    } else if (key == "numeric-id") {
      entity = true;
      numeric_id = fv.get_uint64();
    } else if (key == "id") {
      entity = true;
      id = get_string(fv);
    } else if (key == "amount") {
      quantity = true;
      out.text = arena.store(get_string(fv));
    } else if (key == "unit") {
      quantity = true;
      if (!parse_entity_url(get_string(fv), out.number)) throw BadEntity("quantity unit is not an item URL");
    } else if (key == "upperBound") {
      out.upper = arena.store(get_string(fv));
    } else if (key == "lowerBound") {
      out.lower = arena.store(get_string(fv));
    } else if (key == "time") {
      time = true;
      out.text = arena.store(get_string(fv));
    } else if (key == "precision") {
      if (fv.is_null()) continue;
      double p = fv.get_double();
      out.coord_precision = p;
      out.precision = static_cast<int8_t>(std::clamp(p, -1.0, 127.0));
    } else if (key == "calendarmodel") {
      if (!parse_entity_url(get_string(fv), out.number)) throw BadEntity("calendar model is not an item URL");
    } else if (key == "text") {
      mono = true;
      out.text = arena.store(get_string(fv));
    } else if (key == "language") {
      out.lower = arena.store(get_string(fv));
    } else if (key == "latitude") {
      globe = true;
      out.latitude = fv.get_double();
    } else if (key == "longitude") {
      globe = true;
      out.longitude = fv.get_double();
    } else if (key == "globe") {
      if (!parse_entity_url(get_string(fv), out.number)) throw BadEntity("globe is not an item URL");
    }
  }
  if (entity + quantity + time + mono + globe != 1) return false;
  if (entity) {
    EntityType t = EntityType::item;
    uint64_t n = numeric_id;
    if (!id.empty() && !parse_entity_id(id, t, n)) return false;  // lexemes, forms, senses
    if (entity_type == "property")
      t = EntityType::property;
    else if (!entity_type.empty() && entity_type != "item")
      return false;
    if (n == 0) throw BadEntity("entity value without id");
    out.type = t == EntityType::property ? ValueType::property : ValueType::item;
    out.number = n;
  } else if (quantity) {
    if (out.text.empty()) throw BadEntity("quantity without amount");
    out.type = ValueType::quantity;
    out.precision = -1;
  } else if (time) {
    out.type = ValueType::time;
  } else if (mono) {
    out.type = ValueType::monolingualtext;
  } else {
    out.type = ValueType::globe_coordinate;
    out.precision = -1;
    if (!std::isfinite(out.latitude) || !std::isfinite(out.longitude)) throw BadEntity("bad coordinates");
  }
  if (!globe) out.coord_precision = 0;
  return true;
}

enum class SnakKind { value, novalue, somevalue, unsupported };

SnakKind parse_snak(od::object snak, StringArena& arena, Value& out) {
  std::string_view snaktype;
  std::string_view datatype;
  std::string_view declared_type;
  bool have_value = false, supported = false;
  for (auto field : snak) {
    std::string_view key = field.unescaped_key();
    if (key == "snaktype") {
      snaktype = get_string(field.value());
    } else if (key == "datatype") {
      datatype = get_string(field.value());
    } else if (key == "datavalue") {
      for (auto dv : field.value().get_object()) {
        std::string_view dkey = dv.unescaped_key();
        if (dkey == "value") {
          have_value = true;
          supported = parse_datavalue_value(dv.value(), arena, out);
        } else if (dkey == "type") {
          declared_type = get_string(dv.value());
        }
      }
    }
  }
  if (snaktype == "novalue") return SnakKind::novalue;
  if (snaktype == "somevalue") return SnakKind::somevalue;
  if (snaktype != "value" || !have_value) throw BadEntity("snak without a value");
  if (!supported) return SnakKind::unsupported;
  // Cross-check the shape with the declared datavalue type when it is one we know.
  auto expect = [&](std::string_view t, bool ok) {
    if (declared_type == t && !ok) throw BadEntity("datavalue does not match its type " + std::string(t));
  };
  expect("wikibase-entityid", out.type == ValueType::item || out.type == ValueType::property);
  expect("string", out.type == ValueType::string);
  expect("quantity", out.type == ValueType::quantity);
  expect("time", out.type == ValueType::time);
  expect("monolingualtext", out.type == ValueType::monolingualtext);
  expect("globecoordinate", out.type == ValueType::globe_coordinate);
  if (out.type == ValueType::string && datatype == "external-id") out.type = ValueType::external_id;
  return SnakKind::value;
}

uint64_t property_number(std::string_view key) {
  EntityType t;
  uint64_t n = 0;
  if (!parse_entity_id(key, t, n) || t != EntityType::property) {
    throw BadEntity("claim key '" + std::string(key) + "' is not a property id");
  }
  return n;
}

void count_snak(SnakKind kind, ClaimCounts& counts) {
  if (kind == SnakKind::novalue) ++counts.novalue;
  if (kind == SnakKind::somevalue) ++counts.somevalue;
  if (kind == SnakKind::unsupported) ++counts.unsupported_value;
}

}  // namespace

bool parse_entity_id(std::string_view id, EntityType& type, uint64_t& number) {
  if (id.size() < 2) return false;
  if (id[0] == 'Q')
    type = EntityType::item;
  else if (id[0] == 'P')
    type = EntityType::property;
  else
    return false;
  return parse_number(id.substr(1), number);
}

void EntityParser::parse(std::string_view json, StringArena& arena, ParseResult& out) {
  simdjson::padded_string padded(json);
  parse(padded.data(), padded.size(), padded.size() + simdjson::SIMDJSON_PADDING, arena, out);
}

void EntityParser::parse(std::string_view json, ParseResult& out) {
  out.arena.clear();
  parse(json, out.arena, out);
}

void EntityParser::parse(const char* json, size_t len, size_t capacity, StringArena& arena, ParseResult& out) {
  out.status = ParseStatus::error;
  out.reason.clear();
  out.record = EntityRecord();
  out.counts = ClaimCounts();
  arena_ = &arena;
  context_.clear();
  try {
    od::document doc = parser_.iterate(json, len, capacity);
    parse_entity(doc.get_object(), out);
  } catch (const simdjson::simdjson_error& e) {
    out.status = ParseStatus::error;
    out.reason = (context_.empty() ? "" : context_ + ": ") + simdjson::error_message(e.error());
  } catch (const BadEntity& e) {
    out.status = ParseStatus::error;
    out.reason = (context_.empty() ? "" : context_ + ": ") + e.what();
  }
  if (out.status == ParseStatus::error) out.record = EntityRecord();
}

void EntityParser::parse_entity(od::object obj, ParseResult& out) {
  EntityRecord& e = out.record;
  std::string_view type;
  bool have_id = false, missing = false;
  auto keep_lang = [&](std::string_view lang) {
    return options_.all_langs || options_.langs.find(lang) != options_.langs.end();
  };
  auto skip_if_unwanted = [&](std::string_view t) {
    if (t == "item" || t == "property") return false;
    out.status = ParseStatus::skipped;
    out.reason = t == "lexeme" ? "skipped_lexeme" : t == "mediainfo" ? "skipped_mediainfo" : "skipped_other_type";
    return true;
  };

  for (auto field : obj) {
    std::string_view key = field.unescaped_key();
    context_ = key;
    if (key == "type") {
      type = get_string(field.value());
      if (skip_if_unwanted(type)) return;
    } else if (key == "id") {
      std::string_view id = get_string(field.value());
      if (!parse_entity_id(id, e.type, e.number)) {
        // Lexemes (L…) and MediaInfo (M…) have ids of their own.
        if (!id.empty() && (id[0] == 'L' || id[0] == 'M')) {
          skip_if_unwanted(id[0] == 'L' ? "lexeme" : "mediainfo");
          return;
        }
        throw BadEntity("bad entity id '" + std::string(id) + "'");
      }
      have_id = true;
    } else if (key == "missing") {
      missing = true;
    } else if (key == "labels" || key == "descriptions") {
      auto& terms = key == "labels" ? e.labels : e.descriptions;
      for (auto lang_field : field.value().get_object()) {
        std::string_view lang = lang_field.unescaped_key();
        if (!keep_lang(lang)) continue;
        terms.push_back({arena_->store(lang), arena_->store(get_string(lang_field.value().get_object()["value"]))});
      }
    } else if (key == "aliases") {
      for (auto lang_field : field.value().get_object()) {
        std::string_view lang = lang_field.unescaped_key();
        if (!keep_lang(lang)) continue;
        for (auto alias : lang_field.value().get_array()) {
          e.aliases.push_back({arena_->store(lang), arena_->store(get_string(alias.get_object()["value"]))});
        }
      }
    } else if (key == "sitelinks") {
      for (auto site_field : field.value().get_object()) {
        std::string_view site = site_field.unescaped_key();
        ++e.sitelink_total;
        if (!options_.all_sites && options_.sites.find(site) == options_.sites.end()) continue;
        e.sitelinks.push_back(
            {arena_->store(site), arena_->store(get_string(site_field.value().get_object()["title"]))});
      }
    } else if (key == "claims" || key == "statements") {
      for (auto prop_field : field.value().get_object()) {
        std::string_view prop_key = prop_field.unescaped_key();
        context_.assign("claims.").append(prop_key);
        uint64_t prop = property_number(prop_key);
        od::array statements = prop_field.value().get_array();
        if (options_.relations != nullptr && options_.relations->count(prop) == 0) {
          for (auto s : statements) {
            (void)s;
            ++out.counts.relation_filtered;
          }
          continue;
        }
        for (auto statement_value : statements) {
          Statement st;
          st.property = prop;
          std::string_view rank = "normal";
          SnakKind kind = SnakKind::unsupported;
          bool have_mainsnak = false;
          for (auto sf : statement_value.get_object()) {
            std::string_view skey = sf.unescaped_key();
            if (skey == "mainsnak") {
              have_mainsnak = true;
              kind = parse_snak(sf.value().get_object(), *arena_, st.value);
            } else if (skey == "rank") {
              rank = get_string(sf.value());
            } else if (skey == "qualifiers") {
              for (auto qprop : sf.value().get_object()) {
                uint64_t qp = property_number(qprop.unescaped_key());
                for (auto qsnak : qprop.value().get_array()) {
                  Qualifier q;
                  q.property = qp;
                  SnakKind qkind = parse_snak(qsnak.get_object(), *arena_, q.value);
                  if (qkind == SnakKind::value)
                    st.qualifiers.push_back(std::move(q));
                  else
                    count_snak(qkind, out.counts);
                }
              }
            }
          }
          if (!have_mainsnak) throw BadEntity("statement without mainsnak");
          if (rank == "preferred")
            st.rank = Rank::preferred;
          else if (rank == "deprecated")
            st.rank = Rank::deprecated;
          else if (rank != "normal")
            throw BadEntity("unknown rank '" + std::string(rank) + "'");
          if (kind != SnakKind::value) {
            count_snak(kind, out.counts);
            continue;
          }
          if (st.rank == Rank::deprecated && !options_.keep_deprecated) {
            ++out.counts.deprecated;
            continue;
          }
          e.statements.push_back(std::move(st));
        }
      }
    }
  }
  context_.clear();
  if (missing) {
    out.status = ParseStatus::skipped;
    out.reason = "skipped_missing";
    return;
  }
  if (!have_id) throw BadEntity("entity without id");
  if (!type.empty() && (type == "property") != (e.type == EntityType::property)) {
    throw BadEntity("type '" + std::string(type) + "' does not match id " + entity_id(e.type, e.number));
  }
  out.status = ParseStatus::kept;
  if (e.type == EntityType::item) {
    if (options_.items != nullptr && options_.items->count(e.number) == 0) {
      out.status = ParseStatus::skipped;
      out.reason = "skipped_entity_filter";
    } else if (e.sitelink_total < options_.min_sitelinks) {
      out.status = ParseStatus::skipped;
      out.reason = "skipped_min_sitelinks";
    }
  } else if (options_.relations != nullptr && options_.relations->count(e.number) == 0) {
    out.status = ParseStatus::skipped;
    out.reason = "skipped_relation_filter";
  }
  if (out.status == ParseStatus::skipped) out.record = EntityRecord();
}

}  // namespace kglm::kg
