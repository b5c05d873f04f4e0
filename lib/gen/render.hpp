// verbalize render: KELM subgraphs (verbalize subgraphs) as annotated text in several languages:
// KMLM's "h [mask] r [mask] t." per statement, TEKGEN's linearised model input "s r1 o1, r2 o2",
// or sentences from per-language relation templates in X-FACTR's format; or pairs of the last two
// (the neural verbaliser's training data: serialized_triples and the template sentence). Labels come from the KG
// store; a statement whose subject, relation or object has no label in a language is left out
// of that language (counted), never rendered with another language's label.
#pragma once

#include <string>
#include <vector>

#include "core/cli.hpp"
#include "core/shard.hpp"
#include "core/stats.hpp"

namespace kglm::gen {

struct RenderOptions : RunOptions {
  enum class Mode { kmlm, linearize, templates, pairs };
  Mode mode = Mode::kmlm;
  std::string kg;
  std::vector<std::string> langs;
  std::string templates;    // DIR of LANG.jsonl (template mode)
  std::string inflections;  // UniMorph noun tables for case-marked template slots, optional
  bool group_by_subject = false;
  std::string split_dir;
  Shard shard;            // --shard: the subgraphs of a byte share of the inputs (core/line_shard)
  std::string shard_run;  // shard_run_identity, recorded with the part
};

Stats render_subgraphs(const RenderOptions& options);

}  // namespace kglm::gen
