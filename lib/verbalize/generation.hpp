// verbalize generate: KELM's corpus step (Agarwal et al. 2021, §3) — every subgraph (or aligned
// record) decoded into a sentence by a trained verbaliser. Writes KELM's JSON lines {triples,
// serialized_triples, gen_sentence} (with the input's id, subject and reference sentence when it has
// them) in input order, and optionally the sentences as annotated text for pretrain.
#pragma once

#include <string>

#include "core/cli.hpp"
#include "core/stats.hpp"
#include "verbalize/decoding.hpp"

namespace kglm::verbalize {

struct GenerateOptions : RunOptions {
  std::string model;
  std::string text_output;  // annotated text (kglm-annotated(5)), one record per sentence; "" = none
  std::string lang = "en";  // the annotated text's language
  DecodeOptions decode;     // max_len 0: the model's max_target_len
  int64_t batch = 32;
  int64_t batch_tokens = 0;    // > 0: batches of at most this many padded source tokens instead of --batch
  int64_t max_source_len = 0;  // 0: the model's
  nn::Device device = nn::Device::Cpu;
  std::string precision = "fp32";  // fp32 or bf16 (the CPU's products: nn/cpu_precision.hpp)
};

Stats generate_sentences(const GenerateOptions& options);

}  // namespace kglm::verbalize
