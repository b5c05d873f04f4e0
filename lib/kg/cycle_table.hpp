// Reading the cycles table kg-cycles writes (man 5 kglm-cycles), for the tools that turn cycles
// into text (kg-cycles --text, kg-cycles xlr).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kglm::kg {

// One edge of a cycle as the KG triple it stands for: entity rows and the relation row.
struct CycleTriple {
  uint32_t subject, relation, object;
};

class CycleTable {
 public:
  // Reads a table whose nodes are entity rows of a KG store (not one made with --edges); throws
  // Error on anything else.
  static CycleTable read_kg_table(const std::string& path);

  size_t size() const { return kind_.size(); }
  uint8_t kind(size_t c) const { return kind_[c]; }
  size_t edge_count(size_t c) const { return kind_[c] == 3 ? 3 : 5; }
  std::vector<uint32_t> nodes(size_t c) const;
  // Edge e of cycle c (kg::cycle_edge_ends order), oriented by its direction column.
  CycleTriple triple(size_t c, size_t e) const;

 private:
  std::vector<uint8_t> kind_;
  std::array<std::vector<uint32_t>, 4> nodes_;
  std::array<std::vector<uint32_t>, 5> relations_;
  std::array<std::vector<uint8_t>, 5> directions_;
};

}  // namespace kglm::kg
