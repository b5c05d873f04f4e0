#include "verbalize/verbalizer_records.hpp"

#include "core/jsonl_records.hpp"

namespace kglm::verbalize {

std::vector<TrainingPair> read_training_pairs(const std::string& path, ErrorCounter& errors) {
  return read_jsonl_records<TrainingPair>(
      path, "verbaliser training pairs (JSON lines with serialized_triples and sentence)",
      [](simdjson::dom::element root) {
        TrainingPair p{string_field(root, "serialized_triples"), string_field(root, "sentence")};
        if (p.source.empty()) throw Error("empty \"serialized_triples\"");
        if (p.target.empty()) throw Error("empty \"sentence\"");
        return p;
      },
      errors);
}

std::string serialize_triples(const std::vector<std::vector<std::string>>& triples) {
  std::string out;
  for (size_t i = 0; i < triples.size(); ++i) {
    const std::vector<std::string>& t = triples[i];
    if (i == 0) out += t[0];
    out += i == 0 ? " " : ", ";
    for (size_t k = 1; k < t.size(); ++k) out += (k > 1 ? " " : "") + t[k];
  }
  return out;
}

void for_each_generation_input(const std::string& path, ErrorCounter& errors, Stats& stats,
                               const std::function<void(GenerationInput&&)>& consume) {
  // A skipped record parses to an input marked skipped, not handed on.
  for_each_jsonl_record<GenerationInput>(
      path, "subgraphs or aligned triples (JSON lines with triples)",
      [&](simdjson::dom::element root) {
        GenerationInput in;
        in.id = string_field(root, "id", false);
        in.subject = string_field(root, "subject", false);
        in.reference = string_field(root, "sentence", false);
        simdjson::dom::array triples;
        if (root["triples"].get(triples) != simdjson::SUCCESS) {
          // verbalize render --mode pairs: the serialisation alone.
          in.serialized = string_field(root, "serialized_triples", false);
          if (in.serialized.empty()) throw Error("no \"triples\" array and no \"serialized_triples\"");
          return in;
        }
        std::vector<std::vector<std::string>> parsed;
        bool missing_label = false;
        for (simdjson::dom::element t : triples) {
          simdjson::dom::array parts;
          if (t.get(parts) != simdjson::SUCCESS || parts.size() < 3 || parts.size() > 4)
            throw Error("a triple is not an array of 3 (or, for a qualifier, 4) strings");
          std::vector<std::string> strings;
          for (simdjson::dom::element p : parts) {
            std::string_view s;
            if (p.get(s) != simdjson::SUCCESS) throw Error("a triple's member is not a string");
            missing_label = missing_label || s.find_first_not_of(" \t") == std::string_view::npos;
            strings.emplace_back(s);
          }
          parsed.push_back(std::move(strings));
        }
        if (parsed.empty() || missing_label) {
          stats.add(parsed.empty() ? "skipped_empty_subgraph" : "skipped_missing_label");
          in.skipped = true;
          return in;
        }
        in.triples_json = simdjson::minify(triples);
        in.serialized = string_field(root, "serialized_triples", false);
        if (in.serialized.empty()) in.serialized = serialize_triples(parsed);
        in.triples = std::move(parsed);
        return in;
      },
      errors,
      [&](GenerationInput&& in) {
        if (!in.skipped) consume(std::move(in));
      });
}

std::vector<GenerationInput> read_generation_inputs(const std::string& path, ErrorCounter& errors, Stats& stats) {
  std::vector<GenerationInput> all;
  for_each_generation_input(path, errors, stats, [&](GenerationInput&& in) { all.push_back(std::move(in)); });
  return all;
}

}  // namespace kglm::verbalize
