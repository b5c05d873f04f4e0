// probe: X-FACTR's multilingual factual cloze probing of a masked language model (man 1 probe).
// For each language, relation and fact, the relation's template is filled with the subject and
// 1..num_mask mask tokens for the object, decoded by each method (cloze_decoder.hpp), the mask
// count with the best summed (or, with norm, mean) log-probability is kept, and the prediction is
// correct when its case-folded text is the object's label or alias, or that of another object of
// the same subject and relation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "nn/tensor.hpp"
#include "probe/cloze_decoder.hpp"

namespace kglm::probe {

struct ProbeOptions {
  std::string model;        // a checkpoint directory with its MLM head
  std::string facts;        // X-FACTR fact files (P<n>.jsonl); empty: draw facts from --kg
  std::string templates;    // <lang>.jsonl relation templates (X-FACTR's, or verbalize's)
  std::string aliases;      // <lang>.txt alias files, optional
  std::string inflections;  // UniMorph noun tables (rus, ell, tur, ...) for case-marked slots, optional
  std::string kg;           // KG store: labels, aliases, genders (P21), other objects; optional with facts
  std::vector<std::string> langs{"en"};
  std::vector<uint64_t> relations;  // empty: every relation with facts
  uint64_t max_facts = 0;           // per relation (0: all)
  std::vector<DecodeMethod> methods{DecodeMethod::independent};
  int32_t num_mask = 5;
  int32_t max_iter = 10;
  bool norm = false;
  // Aliases of at most 3 code points without an upper-case letter are not accepted (Wikidata and
  // X-FACTR list language codes such as "de", "en" as aliases, and they collide with words).
  bool skip_short_aliases = false;
  std::string predictions;   // JSONL of every fact's prediction, optional
  std::string out;           // PREFIX of PREFIX.tsv and PREFIX.json
  int64_t batch = 64;        // sequences per forward pass
  int64_t batch_tokens = 0;  // > 0: forward passes of at most this many tokens instead
  nn::Device device = nn::Device::Cpu;
  std::string precision = "fp32";  // fp32 or bf16 (the CPU's products: nn/cpu_precision.hpp)
  unsigned threads = 1;
  uint64_t seed = 0;
  bool quiet = false;
  std::string stats_file;
  ErrorLimit max_errors;
  std::string command_line;
};

int run_probe(const ProbeOptions& options);

}  // namespace kglm::probe
