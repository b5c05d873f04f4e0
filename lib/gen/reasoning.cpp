#include "gen/reasoning.hpp"

#include <array>

#include "core/json_writer.hpp"
#include "gen/annotated_text.hpp"
#include "gen/labels.hpp"
#include "gen/record_writer.hpp"
#include "kg/cycle_table.hpp"
#include "kg/entity.hpp"
#include "kg/kg_store.hpp"

namespace kglm::gen {

Stats write_reasoning_text(const ReasoningTextOptions& options) {
  kg::KgStore store(options.kg);
  const kg::CycleTable cycles = kg::CycleTable::read_kg_table(options.cycles);
  const std::vector<std::string> ids = store.entity_ids();
  const std::vector<int64_t> relation_entity = store.relation_entities();
  LabelIndex labels(store, options.langs, false);
  RecordWriter writer("", options.dir, ".jsonl");
  Stats stats;
  AnnotatedText text;
  for (size_t l = 0; l < options.langs.size(); ++l) {
    const std::string& lang = options.langs[l];
    std::string out;
    for (size_t c = 0; c < cycles.size(); ++c) {
      const size_t edges = cycles.edge_count(c);
      text.clear();
      std::string triples =
          ",\"cycle\":" + std::to_string(c) + ",\"kind\":" + std::to_string(cycles.kind(c)) + ",\"triples\":[";
      bool complete = true;
      for (size_t e = 0; e < edges && complete; ++e) {
        const auto [subject, relation, object] = cycles.triple(c, e);
        int64_t rel = relation_entity[relation];
        auto h = labels.label(l, subject);
        auto t = labels.label(l, object);
        auto r = rel < 0 ? std::nullopt : labels.label(l, static_cast<uint32_t>(rel));
        if (!h || !t || !r) {
          complete = false;
          break;
        }
        if (e > 0) text.append(" ");
        const std::string& rel_id = ids[static_cast<size_t>(rel)];
        text.append_triple({*h, *r, *t}, {ids[subject], rel_id, ids[object]});
        if (e > 0) triples.push_back(',');
        triples += "[";
        append_json_string(triples, ids[subject]);
        triples.push_back(',');
        append_json_string(triples, rel_id);
        triples.push_back(',');
        append_json_string(triples, ids[object]);
        triples += "]";
      }
      if (!complete) {
        stats.add("skipped_missing_label." + lang);
        continue;
      }
      triples += "]";
      text.append_json(out, lang, triples);
      stats.add("samples." + lang);
      if (out.size() > (4 << 20)) {
        writer.write(lang, out);
        out.clear();
      }
    }
    writer.write(lang, out);
  }
  writer.close();
  return stats;
}

}  // namespace kglm::gen
