// Parses one Wikidata entity (JSON as in the dumps and the wbgetentities API) with simdjson's
// On-Demand API into an EntityRecord, keeping only the requested languages, sites, relations.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

#include "core/string_hash.hpp"
#include "kg/entity.hpp"

namespace kglm::kg {

using StringSet = kglm::StringSet;

struct ParseOptions {
  bool all_langs = false;
  StringSet langs;  // label/description/alias languages kept
  bool all_sites = false;
  StringSet sites;  // sitelink sites kept
  bool keep_deprecated = false;
  const std::unordered_set<uint64_t>* items = nullptr;      // --entities allowlist (Q numbers)
  const std::unordered_set<uint64_t>* relations = nullptr;  // --relations allowlist (P numbers)
  uint32_t min_sitelinks = 0;                               // items only
};

enum class ParseStatus { kept, skipped, error };

// Per-entity counts of statements not kept, summed by the caller into the run statistics.
struct ClaimCounts {
  uint64_t novalue = 0;
  uint64_t somevalue = 0;
  uint64_t deprecated = 0;
  uint64_t unsupported_value = 0;  // lexeme/form/sense values, unknown value shapes
  uint64_t relation_filtered = 0;
};

struct ParseResult {
  ParseStatus status = ParseStatus::error;
  // skipped: a statistics key ("skipped_lexeme", ...); error: a message for the user.
  std::string reason;
  EntityRecord record;
  ClaimCounts counts;
  StringArena arena;  // holds the record's strings when parsed with parse(json, out)
};

class EntityParser {
 public:
  explicit EntityParser(const ParseOptions& options) : options_(options) {}

  // `json` must stay readable for at least simdjson::SIMDJSON_PADDING bytes past `len`
  // (capacity >= len + padding); the bytes there need not be anything in particular.
  // The record's strings are stored in `arena`.
  void parse(const char* json, size_t len, size_t capacity, StringArena& arena, ParseResult& out);
  // For callers holding an unpadded string (copies it).
  void parse(std::string_view json, StringArena& arena, ParseResult& out);
  // The same with the strings in out.arena (cleared first).
  void parse(std::string_view json, ParseResult& out);

 private:
  void parse_entity(simdjson::ondemand::object obj, ParseResult& out);
  const ParseOptions& options_;
  StringArena* arena_ = nullptr;
  simdjson::ondemand::parser parser_;
  std::string context_;  // the field being parsed, for error messages
};

// "Q42" -> (item, 42); false when malformed.
bool parse_entity_id(std::string_view id, EntityType& type, uint64_t& number);

}  // namespace kglm::kg
