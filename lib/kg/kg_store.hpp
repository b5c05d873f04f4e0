// Reading the KG store (man 5 kglm-kg): load only the tables and languages a tool needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "h5/h5.hpp"
#include "kg/entity.hpp"

namespace kglm::kg {

struct TermTable {
  std::vector<uint32_t> entity;  // ascending entity rows
  h5::StringTable text;
};

struct TripleTable {
  std::vector<uint32_t> subject, relation, object;
  std::vector<uint8_t> rank;
};

// Opens path and checks that it is a KG store of a version this kglm reads; `partial` says
// whether a shard store (wd-extract --shard) or a complete store is expected. Throws Error.
h5::File open_kg_file(const std::string& path, bool partial);

class KgStore {
 public:
  // Throws Error unless path is a complete (non-shard) KG store.
  explicit KgStore(const std::string& path);

  const h5::Group& root() const { return file_.root(); }
  uint64_t entity_count() const { return entity_count_; }
  std::vector<uint8_t> entity_types() const;
  std::vector<uint64_t> entity_numbers() const;
  std::vector<uint32_t> entity_sitelinks() const;
  // "Q42"-style ids of all entities, in row order.
  std::vector<std::string> entity_ids() const;

  // Languages (labels, descriptions, aliases) or sites (sitelinks) present in a term table.
  std::vector<std::string> keys(const char* table) const;
  // Empty table when the language or site is absent.
  TermTable terms(const char* table, const std::string& key) const;
  TripleTable triples() const;
  std::vector<uint64_t> relation_numbers() const;  // relation row -> P number
  std::vector<int64_t> relation_entities() const;  // relation row -> entity row or -1

 private:
  h5::File file_;
  uint64_t entity_count_ = 0;
};

}  // namespace kglm::kg
