// Writes the KG store (man 5 kglm-kg) from entity records arriving in input order. Tables are
// streamed to HDF5 as records come; only the id maps stay in memory. Item triples and
// qualifiers wait in a spill file until the end, when objects missing from the store (filtered
// out, or never in the input) are known and their triples dropped.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/atomic_file.hpp"
#include "core/provenance.hpp"
#include "core/stats.hpp"
#include "core/string_hash.hpp"
#include "h5/h5.hpp"
#include "kg/entity.hpp"
#include "kg/entity_index.hpp"

namespace kglm::kg {

inline constexpr const char* kKgFormat = "kglm-kg";
inline constexpr int64_t kKgFormatVersion = 1;

// Literal tables under /literals, in ValueType order from quantity on.
inline constexpr const char* kLiteralTables[] = {"quantity",        "time", "string", "external_id", "monolingualtext",
                                                 "globe_coordinate"};
// Statement tables referenced by /qualifiers/table: 0 = /triples, 1.. = kLiteralTables.
uint8_t statement_table(ValueType t);

class KgWriter {
 public:
  // With an active shard: a shard store holding serialized records for `wd-extract merge`, which
  // records its shard and run identity.
  KgWriter(const std::string& path, const Provenance& provenance, const Shard& shard = {},
           const std::string& shard_run = {});
  ~KgWriter();
  KgWriter(const KgWriter&) = delete;
  KgWriter& operator=(const KgWriter&) = delete;

  void add(const EntityRecord& e);
  // Resolves triples, writes the remaining tables and statistics, renames into place.
  // `stats` receives the store's counts; in partial mode it is also saved in the file.
  void finish(Stats& stats);

 private:
  struct StringTableColumns;
  struct LiteralColumns;
  // Looked up once per label/alias: a hash table; finish() visits it in sorted order.
  using TermTables = absl::flat_hash_map<std::string, std::unique_ptr<StringTableColumns>, StringHash, std::equal_to<>>;
  StringTableColumns& terms(TermTables& tables, const char* group, std::string_view name);
  uint32_t relation(uint64_t property);
  void spill_bytes(const void* p, size_t n);
  template <class T>
  void spill_pod(T v) {
    spill_bytes(&v, sizeof v);
  }
  void flush_spill();
  void spill_qualifiers(const Statement& st, uint8_t table, uint64_t row);
  void write_resolved_statements(Stats& stats);

  bool partial_;
  Shard shard_;
  std::string shard_run_;
  AtomicPath atomic_;
  Provenance provenance_;
  h5::File file_;
  std::string spill_path_;
  std::FILE* spill_ = nullptr;
  std::string spill_buffer_;

  std::unique_ptr<h5::ColumnWriter<uint8_t>> entity_type_;
  std::unique_ptr<h5::ColumnWriter<uint64_t>> entity_number_;
  std::unique_ptr<h5::ColumnWriter<uint32_t>> entity_sitelinks_;
  TermTables labels_, descriptions_, aliases_, sitelinks_;
  std::vector<std::unique_ptr<LiteralColumns>> literals_;
  std::unique_ptr<h5::ColumnWriter<uint64_t>> record_ordinal_;
  std::unique_ptr<h5::StringColumnWriter> record_data_;
  std::string record_buffer_;

  EntityIndex entity_index_;                               // entity key -> row in /entities
  std::vector<int32_t> relation_slot_;                     // P number -> relation index, -1 = none
  std::unordered_map<uint64_t, uint32_t> relation_index_;  // for P numbers beyond the table
  std::vector<uint64_t> relations_;                        // relation index -> P number, in order of first use
  uint64_t entities_ = 0;
  uint64_t items_ = 0;
  uint64_t properties_ = 0;
  uint64_t raw_triples_ = 0;
  Stats counts_;
};

}  // namespace kglm::kg
