#include "gen/xlr.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/output_lock.hpp"
#include "core/output_stream.hpp"
#include "core/rng.hpp"
#include "gen/annotated_text.hpp"
#include "gen/labels.hpp"
#include "kg/cycle_table.hpp"
#include "kg/kg_store.hpp"

namespace kglm::gen {

namespace {

constexpr uint32_t kChoices = 6;
constexpr const char* kSplits[3] = {"train", "dev", "test"};

using Triple = kg::CycleTriple;

struct Question {
  uint64_t cycle;
  uint8_t kind;
  std::vector<uint32_t> nodes;
  Triple asked;                   // its relation is the answer
  std::vector<Triple> context;    // the cycle's other triples
  std::vector<uint32_t> choices;  // 6 relation rows, shuffled
  uint32_t answer = 0;            // index into choices
};

uint64_t pair_key(uint32_t a, uint32_t b) { return (static_cast<uint64_t>(std::min(a, b)) << 32) | std::max(a, b); }

class XlrBuilder {
 public:
  explicit XlrBuilder(const XlrOptions& o)
      : options_(o), store_(o.kg), cycles_(kg::CycleTable::read_kg_table(o.cycles)) {
    kg::TripleTable t = store_.triples();
    relation_entity_ = store_.relation_entities();
    for (size_t i = 0; i < t.subject.size(); ++i) {
      if (t.subject[i] == t.object[i]) continue;
      between_[pair_key(t.subject[i], t.object[i])].push_back(t.relation[i]);
      attached_[t.subject[i]].insert(t.relation[i]);
      attached_[t.object[i]].insert(t.relation[i]);
    }
    labels_ = std::make_unique<LabelIndex>(store_, options_.langs, false);
    ids_ = store_.entity_ids();
  }

  Stats build() {
    Stats stats;
    // A seeded order of the cycles; each is offered once, so no cycle lands in two splits.
    std::vector<uint64_t> order(cycles_.size());
    std::iota(order.begin(), order.end(), 0);
    Rng shuffle(options_.seed, 0, 1);
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[shuffle.below(i)]);
    const std::array<uint64_t, 3> sizes = {options_.train, options_.dev, options_.test};
    std::array<Balance, 3> balance = {Balance(sizes[0], options_), Balance(sizes[1], options_),
                                      Balance(sizes[2], options_)};
    auto full = [&](size_t split) { return splits_[split].size() >= sizes[split]; };
    for (size_t next = 0; next < order.size() && !(full(0) && full(1) && full(2)); ++next) {
      Question q;
      if (!make_question(order[next], q, stats)) continue;
      std::string probe;  // every question must render in the first language (the pivot)
      if (!render(q, *labels_, 0, "", probe)) {
        stats.add("skipped_missing_pivot_label");
        continue;
      }
      // Offer the question to the splits from the least filled (relative to its size) on, so a
      // cycle one split's balance refuses can still serve another, and all three fill together.
      std::array<size_t, 3> by_fill = {0, 1, 2};
      std::sort(by_fill.begin(), by_fill.end(), [&](size_t a, size_t b) {
        return splits_[a].size() * std::max<uint64_t>(sizes[b], 1) <
               splits_[b].size() * std::max<uint64_t>(sizes[a], 1);
      });
      bool placed = false;
      for (size_t split : by_fill) {
        if (full(split) || !balance[split].accept(q)) continue;
        splits_[split].push_back(std::move(q));
        placed = true;
        break;
      }
      if (!placed) stats.add("skipped_unbalanced");
    }
    for (size_t split = 0; split < 3; ++split) {
      stats.set(std::string("questions.") + kSplits[split], static_cast<int64_t>(splits_[split].size()));
      balance[split].report(stats, kSplits[split]);
      if (!full(split)) stats.add("short_splits");
    }
    return stats;
  }

  void write(Stats& stats) {
    make_directories(options_.dir);
    const LabelIndex& labels = *labels_;
    std::vector<std::unique_ptr<OutputStream>> files;  // put in place together at the end
    for (size_t split = 0; split < 3; ++split) {
      for (size_t l = 0; l < options_.langs.size(); ++l) {
        const std::string& lang = options_.langs[l];
        std::string out;
        for (const Question& q : splits_[split]) {
          if (!render(q, labels, l, kSplits[split], out))
            stats.add(std::string("skipped_missing_label.") + lang);
          else
            stats.add(std::string("records.") + kSplits[split] + "." + lang);
        }
        files.push_back(std::make_unique<OutputStream>(options_.dir + "/" + kSplits[split] + "." + lang + ".jsonl"));
        files.back()->write(out);
      }
    }
    // The test cycles, for kg-cycles --exclude in the reasoning-data run.
    std::string test;
    for (const Question& q : splits_[2]) {
      for (size_t i = 0; i < q.nodes.size(); ++i) test += (i ? " " : "") + ids_[q.nodes[i]];
      test.push_back('\n');
    }
    files.push_back(std::make_unique<OutputStream>(options_.dir + "/test-cycles.txt"));
    files.back()->write(test);
    std::vector<OutputStream*> parts;
    for (auto& f : files) parts.push_back(f.get());
    put_in_place_together(parts);
  }

 private:
  // Per-split caps on how often one entity or one answer appears.
  class Balance {
   public:
    Balance(uint64_t size, const XlrOptions& o)
        : entity_cap_(std::max<uint64_t>(1, static_cast<uint64_t>(std::floor(o.max_entity_share * size)))),
          answer_cap_(std::max<uint64_t>(1, static_cast<uint64_t>(std::floor(o.max_answer_share * size)))) {}
    bool accept(const Question& q) {
      for (uint32_t n : q.nodes)
        if (entities_[n] >= entity_cap_) return false;
      uint32_t answer = q.choices[q.answer];
      if (answers_[answer] >= answer_cap_) return false;
      for (uint32_t n : q.nodes) ++entities_[n];
      ++answers_[answer];
      std::unordered_set<uint32_t> rels = {q.asked.relation};
      for (const Triple& t : q.context) rels.insert(t.relation);
      for (uint32_t r : rels) ++relations_[r];
      ++total_;
      return true;
    }
    void report(Stats& stats, const std::string& split) const {
      auto largest = [&](const auto& counts) {
        uint64_t m = 0;
        for (const auto& [k, v] : counts) m = std::max<uint64_t>(m, v);
        return total_ ? static_cast<int64_t>(m * 1000 / total_) : 0;
      };
      stats.set("largest_entity_share_x1000." + split, largest(entities_));
      stats.set("largest_relation_share_x1000." + split, largest(relations_));
      stats.set("largest_answer_share_x1000." + split, largest(answers_));
    }

   private:
    uint64_t entity_cap_, answer_cap_, total_ = 0;
    std::unordered_map<uint32_t, uint64_t> entities_, answers_, relations_;
  };

  bool make_question(uint64_t c, Question& q, Stats& stats) const {
    q.cycle = c;
    q.kind = cycles_.kind(c);
    q.nodes = cycles_.nodes(c);
    const size_t edges = cycles_.edge_count(c);
    std::vector<Triple> triples;
    for (size_t e = 0; e < edges; ++e) triples.push_back(cycles_.triple(c, e));
    Rng rng(options_.seed, c, 2);
    size_t asked = rng.below(edges);
    q.asked = triples[asked];
    q.context.clear();
    for (size_t e = 0; e < edges; ++e)
      if (e != asked) q.context.push_back(triples[e]);
    // Choices: the cycle's relations, then relations attached to the two entities, never one
    // that also holds between them (the question would have two right answers).
    const auto& holds = between_.at(pair_key(q.asked.subject, q.asked.object));
    auto usable = [&](uint32_t r) {
      return r == q.asked.relation || std::find(holds.begin(), holds.end(), r) == holds.end();
    };
    std::vector<uint32_t> choices = {q.asked.relation};
    for (const Triple& t : triples)
      if (usable(t.relation) && std::find(choices.begin(), choices.end(), t.relation) == choices.end())
        choices.push_back(t.relation);
    std::vector<uint32_t> pool;
    for (uint32_t node : {q.asked.subject, q.asked.object})
      for (uint32_t r : attached_.at(node))
        if (usable(r) && std::find(choices.begin(), choices.end(), r) == choices.end() &&
            std::find(pool.begin(), pool.end(), r) == pool.end())
          pool.push_back(r);
    std::sort(pool.begin(), pool.end());  // a seeded draw from a canonical order
    while (choices.size() < kChoices && !pool.empty()) {
      size_t pick = rng.below(pool.size());
      choices.push_back(pool[pick]);
      pool.erase(pool.begin() + static_cast<long>(pick));
    }
    if (choices.size() < kChoices) {
      stats.add("skipped_few_relations");
      return false;
    }
    choices.resize(kChoices);
    for (size_t i = choices.size(); i > 1; --i) std::swap(choices[i - 1], choices[rng.below(i)]);
    q.choices = choices;
    q.answer = static_cast<uint32_t>(std::find(choices.begin(), choices.end(), q.asked.relation) - choices.begin());
    return true;
  }

  std::optional<std::string_view> relation_label(const LabelIndex& labels, size_t lang, uint32_t relation) const {
    int64_t entity = relation_entity_[relation];
    if (entity < 0) return std::nullopt;
    return labels.label(lang, static_cast<uint32_t>(entity));
  }

  const std::string& relation_id(uint32_t relation) const {
    return ids_[static_cast<size_t>(relation_entity_[relation])];
  }

  bool render(const Question& q, const LabelIndex& labels, size_t lang, const char* split, std::string& out) const {
    AnnotatedText context;
    for (const Triple& t : q.context) {
      auto h = labels.label(lang, t.subject), r = relation_label(labels, lang, t.relation);
      auto o = labels.label(lang, t.object);
      if (!h || !r || !o) return false;
      if (!context.text().empty()) context.append(" ");
      context.append_triple({*h, *r, *o}, {ids_[t.subject], relation_id(t.relation), ids_[t.object]});
    }
    auto head = labels.label(lang, q.asked.subject), tail = labels.label(lang, q.asked.object);
    if (!head || !tail) return false;
    std::vector<std::string_view> choice_labels;
    for (uint32_t r : q.choices) {
      auto label = relation_label(labels, lang, r);
      if (!label) return false;
      choice_labels.push_back(*label);
    }
    context.append_json_open(out, options_.langs[lang]);
    out += ",\"id\":";
    append_json_string(out, std::string(split) + "-" + std::to_string(q.cycle));
    out += ",\"split\":\"";
    out += split;
    out += "\",\"cycle\":" + std::to_string(q.cycle) + ",\"kind\":" + std::to_string(q.kind);
    out += ",\"question\":";
    append_json_string(out, std::string(*head) + " [mask] ? [mask] " + std::string(*tail) + ".");
    out += ",\"head\":";
    append_json_string(out, ids_[q.asked.subject]);
    out += ",\"tail\":";
    append_json_string(out, ids_[q.asked.object]);
    out += ",\"choices\":[";
    for (size_t i = 0; i < choice_labels.size(); ++i) {
      if (i) out.push_back(',');
      append_json_string(out, choice_labels[i]);
    }
    out += "],\"choice_ids\":[";
    for (size_t i = 0; i < q.choices.size(); ++i) {
      if (i) out.push_back(',');
      append_json_string(out, relation_id(q.choices[i]));
    }
    out += "],\"label\":" + std::to_string(q.answer) + "}\n";
    return true;
  }

  const XlrOptions& options_;
  kg::KgStore store_;
  std::vector<int64_t> relation_entity_;
  std::vector<std::string> ids_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> between_;
  std::unordered_map<uint32_t, std::unordered_set<uint32_t>> attached_;
  kg::CycleTable cycles_;
  std::array<std::vector<Question>, 3> splits_;
  std::unique_ptr<LabelIndex> labels_;
};

}  // namespace

Stats make_xlr(const XlrOptions& options) {
  const OutputLock lock(options.dir, "XLR directory");  // against a second run, from the start
  XlrBuilder builder(options);
  Stats stats = builder.build();
  builder.write(stats);
  return stats;
}

}  // namespace kglm::gen
