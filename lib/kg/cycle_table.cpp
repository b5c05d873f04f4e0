#include "kg/cycle_table.hpp"

#include "core/error.hpp"
#include "h5/h5.hpp"
#include "kg/cycles.hpp"

namespace kglm::kg {

CycleTable CycleTable::read_kg_table(const std::string& path) {
  h5::File file = h5::File::open(path);
  const h5::Group& root = file.root();
  if (!root.has_attribute("format") || root.string_attribute("format") != "kglm-cycles")
    throw Error(location(path) + "is " + h5::describe_format(root) + "; expected a cycles table (kg-cycles)");
  if (!root.has_attribute("nodes") || root.string_attribute("nodes") != "kg")
    throw Error(path + ": a cycles table of an edge list, not of a KG store");
  h5::Group g = root.open_group("cycles");
  CycleTable t;
  t.kind_ = h5::read_column<uint8_t>(g, "kind");
  for (size_t i = 0; i < 4; ++i) t.nodes_[i] = h5::read_column<uint32_t>(g, "node" + std::to_string(i));
  for (size_t i = 0; i < 5; ++i) {
    t.relations_[i] = h5::read_column<uint32_t>(g, "relation" + std::to_string(i));
    t.directions_[i] = h5::read_column<uint8_t>(g, "direction" + std::to_string(i));
  }
  for (const auto& column : t.nodes_)
    if (column.size() != t.kind_.size()) throw Error(path + ": the table's columns differ in length");
  for (size_t i = 0; i < 5; ++i)
    if (t.relations_[i].size() != t.kind_.size() || t.directions_[i].size() != t.kind_.size())
      throw Error(path + ": the table's columns differ in length");
  return t;
}

std::vector<uint32_t> CycleTable::nodes(size_t c) const {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < (kind_[c] == 3 ? 3u : 4u); ++i) out.push_back(nodes_[i][c]);
  return out;
}

CycleTriple CycleTable::triple(size_t c, size_t e) const {
  auto [a, b] = cycle_edge_ends(kind_[c], e);
  const uint32_t first = nodes_[a][c], second = nodes_[b][c];
  const bool forward = directions_[e][c] == 0;
  return {forward ? first : second, relations_[e][c], forward ? second : first};
}

}  // namespace kglm::kg
