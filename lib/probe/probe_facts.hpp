// The facts a probe asks about and the answers it accepts: X-FACTR's fact files
// (P<n>.jsonl: {"uuid","predicate_id","sub_uri","sub_label","obj_uri","obj_label",...} per
// line) and alias files (<lang>.txt: QID TAB alias TAB alias ...), or facts drawn from a kglm KG
// store; and the answer normalisation that matching uses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "core/string_hash.hpp"
#include "kg/facts.hpp"

namespace kglm::gen {
class FactText;
}

namespace kglm::probe {

struct ProbeFact {
  uint64_t relation = 0;                    // P number
  std::string subject, object;              // "Q42"
  std::string subject_label, object_label;  // as the fact file gives them (English), or empty
};

// The relation of an X-FACTR fact file name ("P19.jsonl", also .gz/.zst/.bz2), or 0.
uint64_t fact_file_relation(std::string_view file_name);

// Reads one X-FACTR fact file of `relation`, or with relation 0 (a file not named after its
// relation) each line's predicate_id. A bad line (invalid JSON, a missing or empty member, a
// predicate_id other than the file's relation, ids that are not Q<number>) is recorded in errors
// with its file:line and skipped.
std::vector<ProbeFact> read_xfactr_facts(const std::string& path, uint64_t relation, ErrorCounter& errors);

// The fact files of dir (P<n>.jsonl...), by ascending P number; relations, when not empty,
// selects among them and each must have a file (else Error naming the missing relation). A path
// that is not a directory is one file: {its name's relation or 0, path}.
std::vector<std::pair<uint64_t, std::string>> fact_files(const std::string& dir,
                                                         const std::vector<uint64_t>& relations);

// Up to max_per_relation item statements of each relation drawn from the store (all when 0; a
// seeded sample otherwise, in store order), as facts without labels, grouped by relation in the
// order given. Error for a relation the store does not have.
std::vector<std::pair<uint64_t, std::vector<ProbeFact>>> draw_kg_facts(const kg::FactStore& facts,
                                                                       const gen::FactText& text,
                                                                       const std::vector<uint64_t>& relations,
                                                                       uint64_t max_per_relation, uint64_t seed);

// "P19,P20" or "19,20" into P numbers (UsageError on anything else).
std::vector<uint64_t> parse_relation_list(const std::string& list);

class AliasTable {
 public:
  // QID TAB alias TAB ... per line; a line without a Q id is recorded in errors and skipped.
  void load(const std::string& path, ErrorCounter& errors);
  // The aliases of an entity ("Q42"), or nullptr.
  const std::vector<std::string>* find(std::string_view id) const;
  size_t size() const { return aliases_.size(); }

 private:
  std::unordered_map<std::string, std::vector<std::string>, StringHash, std::equal_to<>> aliases_;
};

// How answers are compared: case-folded (ICU), every run of white space one space, trimmed.
std::string normalize_answer(std::string_view text);

}  // namespace kglm::probe
