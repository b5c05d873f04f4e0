#include "kg/entity.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"

namespace kglm::kg {

std::string_view StringArena::store(std::string_view s) {
  if (s.empty()) return {};
  if (capacity_ - used_ < s.size()) {
    size_t size = std::max(kBlock, s.size());
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    used_ = 0;
    capacity_ = size;
  }
  char* p = blocks_.back().get() + used_;
  std::memcpy(p, s.data(), s.size());
  used_ += s.size();
  return {p, s.size()};
}

void StringArena::clear() {
  // Keep the last block (capacity_ is its size) for reuse.
  if (blocks_.size() > 1) blocks_.erase(blocks_.begin(), blocks_.end() - 1);
  used_ = 0;
}

const char* rank_name(Rank r) {
  static constexpr const char* kNames[] = {"deprecated", "normal", "preferred"};  // in Rank order
  auto i = static_cast<size_t>(r);
  return i < std::size(kNames) ? kNames[i] : "?";
}

std::string format_coordinates(double latitude, double longitude) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g,%.9g", latitude, longitude);
  return buf;
}

std::string entity_id(EntityType type, uint64_t number) {
  return (type == EntityType::property ? "P" : "Q") + std::to_string(number);
}

const char* value_type_name(ValueType t) {
  // Wikidata's datatype names, in ValueType order.
  static constexpr const char* kNames[] = {"wikibase-item", "wikibase-property", "quantity",        "time",
                                           "string",        "external-id",       "monolingualtext", "globe-coordinate"};
  auto i = static_cast<size_t>(t);
  return i < std::size(kNames) ? kNames[i] : "?";
}

namespace {

// Little-endian fixed-width fields and length-prefixed strings.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  template <class T>
  void pod(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(std::string_view s) {
    pod(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }

 private:
  std::string& out_;
};

class Reader {
 public:
  Reader(std::string_view in, StringArena& arena) : in_(in), arena_(arena) {}
  template <class T>
  T pod() {
    T v;
    need(sizeof v);
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string_view str() {
    auto n = pod<uint32_t>();
    need(n);
    std::string_view s = arena_.store(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  uint32_t count() {
    auto n = pod<uint32_t>();
    if (n > in_.size() - pos_) throw Error("corrupt serialized entity (bad count)");
    return n;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  void need(size_t n) const {
    if (in_.size() - pos_ < n) throw Error("corrupt serialized entity (truncated)");
  }
  std::string_view in_;
  StringArena& arena_;
  size_t pos_ = 0;
};

void put_value(Writer& w, const Value& v) {
  w.pod(static_cast<uint8_t>(v.type));
  w.pod(v.number);
  w.str(v.text);
  w.str(v.lower);
  w.str(v.upper);
  w.pod(v.precision);
  w.pod(v.latitude);
  w.pod(v.longitude);
  w.pod(v.coord_precision);
}

Value get_value(Reader& r) {
  Value v;
  auto type = r.pod<uint8_t>();
  if (type > static_cast<uint8_t>(ValueType::globe_coordinate)) throw Error("corrupt serialized entity (value type)");
  v.type = static_cast<ValueType>(type);
  v.number = r.pod<uint64_t>();
  v.text = r.str();
  v.lower = r.str();
  v.upper = r.str();
  v.precision = r.pod<int8_t>();
  v.latitude = r.pod<double>();
  v.longitude = r.pod<double>();
  v.coord_precision = r.pod<double>();
  return v;
}

void put_terms(Writer& w, const std::vector<Term>& terms) {
  w.pod(static_cast<uint32_t>(terms.size()));
  for (const auto& t : terms) {
    w.str(t.lang);
    w.str(t.text);
  }
}

std::vector<Term> get_terms(Reader& r) {
  std::vector<Term> terms(r.count());
  for (auto& t : terms) {
    t.lang = r.str();
    t.text = r.str();
  }
  return terms;
}

}  // namespace

void serialize(const EntityRecord& e, std::string& out) {
  Writer w(out);
  w.pod(static_cast<uint8_t>(e.type));
  w.pod(e.number);
  w.pod(e.ordinal);
  w.pod(e.sitelink_total);
  put_terms(w, e.labels);
  put_terms(w, e.descriptions);
  put_terms(w, e.aliases);
  w.pod(static_cast<uint32_t>(e.sitelinks.size()));
  for (const auto& s : e.sitelinks) {
    w.str(s.site);
    w.str(s.title);
  }
  w.pod(static_cast<uint32_t>(e.statements.size()));
  for (const auto& s : e.statements) {
    w.pod(s.property);
    w.pod(static_cast<uint8_t>(s.rank));
    put_value(w, s.value);
    w.pod(static_cast<uint32_t>(s.qualifiers.size()));
    for (const auto& q : s.qualifiers) {
      w.pod(q.property);
      put_value(w, q.value);
    }
  }
}

EntityRecord deserialize(std::string_view bytes, StringArena& arena) {
  Reader r(bytes, arena);
  EntityRecord e;
  auto type = r.pod<uint8_t>();
  if (type > 1) throw Error("corrupt serialized entity (entity type)");
  e.type = static_cast<EntityType>(type);
  e.number = r.pod<uint64_t>();
  e.ordinal = r.pod<uint64_t>();
  e.sitelink_total = r.pod<uint32_t>();
  e.labels = get_terms(r);
  e.descriptions = get_terms(r);
  e.aliases = get_terms(r);
  e.sitelinks.resize(r.count());
  for (auto& s : e.sitelinks) {
    s.site = r.str();
    s.title = r.str();
  }
  e.statements.resize(r.count());
  for (auto& s : e.statements) {
    s.property = r.pod<uint64_t>();
    auto rank = r.pod<uint8_t>();
    if (rank > 2) throw Error("corrupt serialized entity (rank)");
    s.rank = static_cast<Rank>(rank);
    s.value = get_value(r);
    s.qualifiers.resize(r.count());
    for (auto& q : s.qualifiers) {
      q.property = r.pod<uint64_t>();
      q.value = get_value(r);
    }
  }
  if (!r.done()) throw Error("corrupt serialized entity (trailing bytes)");
  return e;
}

}  // namespace kglm::kg
