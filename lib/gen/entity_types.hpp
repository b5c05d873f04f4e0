// Named-entity types of KG items through the class hierarchy: an item's type is the tag of the
// root class nearest to one of its "instance of" (P31) classes along "subclass of" (P279), the
// way WikiANN typed Wikipedia's links through the knowledge base. Ties go to the tag given first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kg/kg_store.hpp"

namespace kglm::gen {

// One tag and its root classes, e.g. LOC = Q17334923 (location), Q515 (city), ...
struct TypeRoot {
  std::string tag;
  std::vector<uint64_t> classes;  // Q numbers
};

// "TAG=Q1,Q2" (UsageError when malformed).
TypeRoot parse_type_root(const std::string& spec);
// PER, ORG and LOC with the root classes of man 1 kg-align.
std::vector<TypeRoot> default_type_roots();

class EntityTyper {
 public:
  // Walks P279 down from every root at most max_depth steps (deprecated statements left out).
  EntityTyper(const kg::KgStore& store, std::vector<TypeRoot> roots, uint32_t max_depth);

  // Index into roots() of entity row's type, or -1 (no P31 class reaches a root).
  int type_of(uint32_t row) const { return types_[row]; }
  const std::vector<TypeRoot>& roots() const { return roots_; }
  // Items typed per tag, and those whose classes reached several tags (decided by distance).
  const std::vector<uint64_t>& typed() const { return typed_; }
  uint64_t ambiguous() const { return ambiguous_; }
  // Root classes not in the store (they type nothing).
  const std::vector<std::string>& missing_roots() const { return missing_; }

 private:
  std::vector<TypeRoot> roots_;
  std::vector<int8_t> types_;
  std::vector<uint64_t> typed_;
  uint64_t ambiguous_ = 0;
  std::vector<std::string> missing_;
};

}  // namespace kglm::gen
