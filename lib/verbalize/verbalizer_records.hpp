// The neural verbaliser's records (man 5 kglm-kelm): training pairs — kg-align's aligned sentences
// and verbalize render --mode pairs, each a "serialized_triples" input and its "sentence" — and
// generation inputs — verbalize subgraphs' records or aligned ones, whose "triples" are turned into
// sentences (or, lacking triples, whose serialized_triples are: verbalize render --mode pairs'
// records). A bad line is reported as FILE:LINE and skipped; a file of bad lines is refused.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/stats.hpp"

namespace kglm::verbalize {

struct TrainingPair {
  std::string source;  // serialized_triples
  std::string target;  // sentence
  uint64_t line = 0;
};

std::vector<TrainingPair> read_training_pairs(const std::string& path, ErrorCounter& errors);

struct GenerationInput {
  std::string id, subject;
  std::string triples_json;  // the record's "triples" as written (copied to the output); "" when it has none
  std::vector<std::vector<std::string>> triples;  // parsed: [s, r, o] or a qualifier's [s, "o q", v]
  bool skipped = false;
  std::string serialized;  // serialized_triples, or built from the triples as TEKGEN's input
  std::string reference;   // the record's "sentence" (aligned records), or ""
  uint64_t line = 0;
};

// Records without triples (an empty subgraph) and records with a triple member that is empty (a
// label the KG lacks) are skipped and counted in `stats` ("skipped_empty_subgraph",
// "skipped_missing_label"), not reported as errors.
// Streams the inputs of a file, as they are read, to consume() (the skipped ones counted, not
// handed on).
void for_each_generation_input(const std::string& path, ErrorCounter& errors, Stats& stats,
                               const std::function<void(GenerationInput&&)>& consume);
std::vector<GenerationInput> read_generation_inputs(const std::string& path, ErrorCounter& errors, Stats& stats);

// TEKGEN's serialisation: "s r1 o1, r2 o2, …" — the subject once, then each triple's relation and
// object; a qualifier triple [s, "o q", v] is written "o q v" like kg-align's.
std::string serialize_triples(const std::vector<std::vector<std::string>>& triples);

}  // namespace kglm::verbalize
