#include "gen/reasoning.hpp"

#include <array>

#include "core/json_writer.hpp"
#include "gen/annotated_text.hpp"
#include "gen/labels.hpp"
#include "gen/record_writer.hpp"
#include "h5/h5.hpp"
#include "kg/cycles.hpp"
#include "kg/entity.hpp"
#include "kg/kg_store.hpp"

namespace kglm::gen {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

}  // namespace

Stats write_reasoning_text(const ReasoningTextOptions& options) {
  kg::KgStore store(options.kg);
  h5::File file = h5::File::open(options.cycles);
  const h5::Group& root = file.root();
  if (!root.has_attribute("format") || root.string_attribute("format") != "kglm-cycles")
    throw Error(options.cycles + ": not a kg-cycles table");
  h5::Group g = root.open_group("cycles");
  auto kind = h5::read_column<uint8_t>(g, "kind");
  std::array<std::vector<uint32_t>, 4> nodes;
  std::array<std::vector<uint32_t>, 5> relations;
  std::array<std::vector<uint8_t>, 5> directions;
  for (size_t i = 0; i < 4; ++i) nodes[i] = h5::read_column<uint32_t>(g, "node" + std::to_string(i));
  for (size_t i = 0; i < 5; ++i) {
    relations[i] = h5::read_column<uint32_t>(g, "relation" + std::to_string(i));
    directions[i] = h5::read_column<uint8_t>(g, "direction" + std::to_string(i));
  }
  const std::vector<std::string> ids = store.entity_ids();
  const std::vector<int64_t> relation_entity = store.relation_entities();
  LabelIndex labels(store, options.langs, false);
  RecordWriter writer("", options.dir, ".jsonl");
  Stats stats;
  AnnotatedText text;
  for (size_t l = 0; l < options.langs.size(); ++l) {
    const std::string& lang = options.langs[l];
    std::string out;
    for (size_t c = 0; c < kind.size(); ++c) {
      const size_t edges = kind[c] == 3 ? 3 : 5;
      text.clear();
      std::string triples =
          ",\"cycle\":" + std::to_string(c) + ",\"kind\":" + std::to_string(kind[c]) + ",\"triples\":[";
      bool complete = true;
      for (size_t e = 0; e < edges && complete; ++e) {
        auto [a, b] = kg::cycle_edge_ends(kind[c], e);
        uint32_t first = nodes[a][c], second = nodes[b][c];
        uint32_t subject = directions[e][c] == 0 ? first : second, object = directions[e][c] == 0 ? second : first;
        int64_t rel = relations[e][c] == kNone ? -1 : relation_entity[relations[e][c]];
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
