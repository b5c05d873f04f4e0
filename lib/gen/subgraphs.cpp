#include "gen/subgraphs.hpp"

#include <algorithm>
#include <memory>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/ordered_pipeline.hpp"
#include "core/output_stream.hpp"
#include "core/rng.hpp"
#include "gen/cooccurrence.hpp"
#include "gen/fact_text.hpp"
#include "gen/labels.hpp"

namespace kglm::gen {

namespace {

constexpr uint32_t kSubjectsPerTask = 4096;

struct SubjectRange {
  uint32_t first = 0;
  uint32_t last = 0;
};

struct RangeResult {
  std::string records;
  Stats stats;
};

}  // namespace

std::vector<std::vector<uint32_t>> build_subgraphs(const std::vector<uint64_t>& relation_numbers,
                                                   const CooccurrenceTable& cooc, uint32_t max_size, uint64_t seed,
                                                   uint64_t subject) {
  std::vector<uint32_t> remaining(relation_numbers.size());
  for (uint32_t i = 0; i < remaining.size(); ++i) remaining[i] = i;
  std::vector<std::vector<uint32_t>> subgraphs;
  Rng rng(seed, subject);
  while (!remaining.empty()) {
    const size_t start = rng.below(remaining.size());
    std::vector<uint32_t> group{remaining[start]};
    remaining.erase(remaining.begin() + static_cast<std::ptrdiff_t>(start));
    // The best next statement: the highest count with the previous relation (ties: statement
    // order). Scanning the subject's few remaining statements is the max-heap of the paper
    // restricted to what is left.
    while (group.size() < max_size && !remaining.empty()) {
      const uint64_t previous = relation_numbers[group.back()];
      size_t best = remaining.size();
      uint64_t best_count = 0;
      for (size_t i = 0; i < remaining.size(); ++i) {
        const uint64_t c = cooc.count(previous, relation_numbers[remaining[i]]);
        if (c > best_count) {
          best_count = c;
          best = i;
        }
      }
      if (best == remaining.size()) break;
      group.push_back(remaining[best]);
      remaining.erase(remaining.begin() + static_cast<std::ptrdiff_t>(best));
    }
    subgraphs.push_back(std::move(group));
  }
  return subgraphs;
}

Stats generate_subgraphs(const SubgraphOptions& options) {
  if (options.max_size == 0) throw UsageError("--max-size must be at least 1");
  if (options.kinds.empty()) throw UsageError("--kinds: no statement kind");
  const kg::KgStore store(options.kg);
  const kg::FactStore facts(store, options.kinds);
  const LabelIndex labels(store, {"en"}, false);
  const FactText text(store, facts, labels);
  const CooccurrenceTable cooc = CooccurrenceTable::read(options.cooc);
  OutputStream out(options.output);
  const uint32_t entities = static_cast<uint32_t>(facts.entity_count());
  uint32_t next = 0;
  Stats stats;
  const unsigned workers = std::max(1u, options.threads);
  run_ordered_pipeline<SubjectRange, RangeResult>(
      workers, 2 * workers + 2,
      [&](SubjectRange& range) {
        if (next >= entities) return false;
        range.first = next;
        range.last = next = std::min(entities, next + kSubjectsPerTask);
        return true;
      },
      [&](unsigned, SubjectRange& range, RangeResult& result) {
        std::vector<uint64_t> relation_numbers;
        std::vector<FactRef> refs;
        for (uint32_t s = range.first; s < range.last; ++s) {
          const auto subject_facts = facts.facts(s);
          if (subject_facts.empty()) continue;
          result.stats.add("subjects");
          relation_numbers.clear();
          for (const kg::Fact& f : subject_facts) relation_numbers.push_back(text.relation_number(f.relation));
          const auto groups = build_subgraphs(relation_numbers, cooc, options.max_size, options.seed, s);
          for (size_t g = 0; g < groups.size(); ++g) {
            refs.clear();
            for (uint32_t i : groups[g]) {
              refs.push_back(FactRef{&subject_facts[i], -1});
              if (!options.qualifiers) continue;
              const size_t qualifiers = facts.qualifiers(subject_facts[i]).size();
              for (size_t q = 0; q < qualifiers; ++q) refs.push_back(FactRef{&subject_facts[i], static_cast<int>(q)});
              result.stats.add("qualifiers", static_cast<int64_t>(qualifiers));
            }
            result.stats.add("subgraphs");
            result.stats.add("subgraphs_of_size_" + std::to_string(groups[g].size()));
            result.stats.add("triples", static_cast<int64_t>(groups[g].size()));
            std::string& o = result.records;
            o += "{\"id\":";
            append_json_string(o, text.entity_id(s) + "_" + std::to_string(g));
            o += ",\"subject\":";
            append_json_string(o, text.entity_id(s));
            text.append_triples_json(o, s, refs);
            o += "}\n";
          }
        }
      },
      [&](RangeResult& result) {
        out.write(result.records);
        stats.merge(result.stats);
      });
  out.close();
  stats.set("total_triples", static_cast<int64_t>(facts.fact_count()));
  stats.set("cooccurring_pairs", static_cast<int64_t>(cooc.size()));
  return stats;
}

}  // namespace kglm::gen
