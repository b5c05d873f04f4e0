// One Wikidata entity as wd-extract keeps it: the parsed, filtered content of a dump line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kglm::kg {

// Owns the bytes of the strings that records point to: a record's strings are views into the
// arena of the batch it was parsed in, so freeing a batch is a few large frees, not one per string.
class StringArena {
 public:
  std::string_view store(std::string_view s);
  void clear();

 private:
  static constexpr size_t kBlock = 1 << 20;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t used_ = 0;
  size_t capacity_ = 0;
};

enum class EntityType : uint8_t { item = 0, property = 1 };

// Item and property numbers share one key space for id maps: properties get the top bit.
inline uint64_t entity_key(EntityType type, uint64_t number) {
  return type == EntityType::property ? number | (uint64_t{1} << 63) : number;
}
std::string entity_id(EntityType type, uint64_t number);  // "Q42", "P31"

// Statement value types; item and property values become triples, the rest literal claims.
enum class ValueType : uint8_t {
  item = 0,
  property = 1,
  quantity = 2,
  time = 3,
  string = 4,
  external_id = 5,
  monolingualtext = 6,
  globe_coordinate = 7,
};
const char* value_type_name(ValueType t);

enum class Rank : uint8_t { deprecated = 0, normal = 1, preferred = 2 };
const char* rank_name(Rank r);  // "deprecated", "normal", "preferred"

// "lat,lon" with 9 significant digits: how coordinates appear as text (qualifiers, TSV).
std::string format_coordinates(double latitude, double longitude);

struct Value {
  ValueType type = ValueType::item;
  // item/property: the entity number; quantity: unit item (0 = unitless "1"); time: calendar
  // model item; globe-coordinate: globe item.
  uint64_t number = 0;
  std::string_view text;   // quantity amount, time value, string, external id, monolingual text
  std::string_view lower;  // quantity lower bound ("" = none); monolingualtext: language code
  std::string_view upper;  // quantity upper bound ("" = none)
  int8_t precision = -1;   // time precision (0..14), -1 otherwise
  double latitude = 0, longitude = 0, coord_precision = 0;
};

struct Qualifier {
  uint64_t property = 0;
  Value value;
};

struct Statement {
  uint64_t property = 0;
  Rank rank = Rank::normal;
  Value value;
  std::vector<Qualifier> qualifiers;
};

struct Term {
  std::string_view lang;
  std::string_view text;
};

struct Sitelink {
  std::string_view site;
  std::string_view title;
};

// Strings are views into a StringArena that must outlive the record.
struct EntityRecord {
  EntityType type = EntityType::item;
  uint64_t number = 0;
  uint64_t ordinal = 0;         // position of the entity in the whole input (line ordinal)
  uint32_t sitelink_total = 0;  // sitelinks of all sites, before --sites filtering
  std::vector<Term> labels;
  std::vector<Term> descriptions;
  std::vector<Term> aliases;
  std::vector<Sitelink> sitelinks;
  std::vector<Statement> statements;

  uint64_t key() const { return entity_key(type, number); }
};

// A compact binary form, used for shard stores that `wd-extract merge` reads back.
void serialize(const EntityRecord& e, std::string& out);
// Throws Error when the bytes are not a serialized record. Strings are copied into arena.
EntityRecord deserialize(std::string_view bytes, StringArena& arena);

}  // namespace kglm::kg
