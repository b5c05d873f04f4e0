#include "kg/kg_store.hpp"

#include "kg/kg_writer.hpp"

namespace kglm::kg {

h5::File open_kg_file(const std::string& path, bool partial) {
  h5::File file = h5::File::open(path);
  const h5::Group& r = file.root();
  if (!r.has_attribute("format") || r.string_attribute("format") != kKgFormat) {
    throw Error(location(path) + "is " + h5::describe_format(r) + "; expected a KG store (wd-extract's kg.h5)");
  }
  if (r.int_attribute("format_version") > kKgFormatVersion) {
    throw Error(location(path) + "KG store format version " + std::to_string(r.int_attribute("format_version")) +
                " is newer than this kglm supports");
  }
  if (partial && r.int_attribute("partial") != 1) {
    throw Error(location(path) + "not a shard store (write shards with wd-extract --shard I/N)");
  }
  if (!partial && r.int_attribute("partial") != 0) {
    throw Error(location(path) + "a shard store: run 'wd-extract merge' first");
  }
  return file;
}

KgStore::KgStore(const std::string& path) : file_(open_kg_file(path, false)) {
  entity_count_ = h5::column_size(file_.root().open_group("entities"), "number");
}

std::vector<uint8_t> KgStore::entity_types() const {
  return h5::read_column<uint8_t>(file_.root().open_group("entities"), "type");
}
std::vector<uint64_t> KgStore::entity_numbers() const {
  return h5::read_column<uint64_t>(file_.root().open_group("entities"), "number");
}
std::vector<uint32_t> KgStore::entity_sitelinks() const {
  return h5::read_column<uint32_t>(file_.root().open_group("entities"), "sitelinks");
}

std::vector<std::string> KgStore::entity_ids() const {
  std::vector<uint8_t> types = entity_types();
  std::vector<uint64_t> numbers = entity_numbers();
  std::vector<std::string> ids(numbers.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = entity_id(static_cast<EntityType>(types[i]), numbers[i]);
  return ids;
}

std::vector<std::string> KgStore::keys(const char* table) const { return file_.root().open_group(table).children(); }

TermTable KgStore::terms(const char* table, const std::string& key) const {
  TermTable t;
  h5::Group parent = file_.root().open_group(table);
  if (!parent.has(key)) return t;
  h5::Group g = parent.open_group(key);
  t.entity = h5::read_column<uint32_t>(g, "entity");
  t.text = h5::read_string_table(g, std::string(table) == "sitelinks" ? "title" : "text");
  if (t.text.size() != t.entity.size()) throw Error(g.where() + "entity and text columns differ in length");
  for (uint32_t e : t.entity) {
    if (e >= entity_count_) throw Error(g.where() + "entity row out of range");
  }
  return t;
}

TripleTable KgStore::triples() const {
  h5::Group g = file_.root().open_group("triples");
  TripleTable t{h5::read_column<uint32_t>(g, "subject"), h5::read_column<uint32_t>(g, "relation"),
                h5::read_column<uint32_t>(g, "object"), h5::read_column<uint8_t>(g, "rank")};
  return t;
}

std::vector<uint64_t> KgStore::relation_numbers() const {
  return h5::read_column<uint64_t>(file_.root().open_group("relations"), "number");
}
std::vector<int64_t> KgStore::relation_entities() const {
  return h5::read_column<int64_t>(file_.root().open_group("relations"), "entity");
}

}  // namespace kglm::kg
