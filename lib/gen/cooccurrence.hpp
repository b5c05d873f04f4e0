// Relation co-occurrence counts (KELM §2.2): how many aligned sentences express two relations
// together. kg-align writes them, verbalize subgraphs reads them. TSV with a header line:
// "# relation_i<TAB>relation_j<TAB>count", P ids with relation_i <= relation_j (by number); a
// pair (r, r) counts sentences that express r twice.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kglm::gen {

class CooccurrenceTable {
 public:
  // Counts keyed by P numbers, in either order.
  void add(uint64_t a, uint64_t b, uint64_t count);
  uint64_t count(uint64_t a, uint64_t b) const;
  size_t size() const { return counts_.size(); }

  // Throws Error with file:line on a malformed line or a pair given twice in one file; the
  // counts of several files (kg-align run on shards) add up.
  static CooccurrenceTable read(const std::vector<std::string>& paths);
  // Atomic write, pairs in P-number order.
  void write(const std::string& path) const;

 private:
  static uint64_t key(uint64_t a, uint64_t b) { return a <= b ? a << 32 | b : b << 32 | a; }
  std::unordered_map<uint64_t, uint64_t> counts_;
};

}  // namespace kglm::gen
