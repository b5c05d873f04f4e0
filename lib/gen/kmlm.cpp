#include "gen/kmlm.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/ordered_pipeline.hpp"
#include "core/rng.hpp"
#include "gen/annotated_text.hpp"
#include "gen/labels.hpp"
#include "gen/languages.hpp"
#include "gen/record_writer.hpp"
#include "kg/entity.hpp"
#include "kg/kg_store.hpp"

namespace kglm::gen {

namespace {

constexpr size_t kTriplesPerTask = 1024;
constexpr size_t kEnglish = 0;  // languages()[0] of the label index
constexpr std::array<const char*, 3> kItemNames = {"head", "relation", "tail"};

// RNG streams of one triple (record = triple row).
constexpr uint32_t kLanguageStream = 0;
constexpr uint32_t kSwitchStream = 1;       // + target language index
constexpr uint32_t kAliasStream = 1 << 16;  // + language index

struct Triple {
  uint64_t row;                   // in /triples
  std::array<uint32_t, 3> items;  // entity rows of h, r (the property entity), t
};

// Per-task counters, indexed by language (Stats keys are built once per task, not per record).
struct Counters {
  std::vector<int64_t> records, missing;
  std::array<int64_t, 3> candidates{}, switched{};
  int64_t skipped_no_english = 0;

  explicit Counters(size_t languages) : records(languages), missing(languages) {}
  void add_to(Stats& stats, const std::vector<std::string>& langs) const {
    for (size_t l = 0; l < langs.size(); ++l) {
      if (records[l]) stats.add("records." + langs[l], records[l]);
      if (missing[l]) stats.add("missing_label." + langs[l], missing[l]);
    }
    for (size_t k = 0; k < 3; ++k) {
      if (candidates[k]) stats.add(std::string("switch_candidates.") + kItemNames[k], candidates[k]);
      if (switched[k]) stats.add(std::string("switched.") + kItemNames[k], switched[k]);
    }
    if (skipped_no_english) stats.add("skipped_no_english_label", skipped_no_english);
  }
};

struct TaskResult {
  RecordBatch records;
  Stats stats;
};

class KmlmGenerator {
 public:
  explicit KmlmGenerator(const KmlmOptions& o) : options_(o), store_(o.kg) {
    std::vector<std::string> langs = english_then(o.langs);
    labels_ = std::make_unique<LabelIndex>(store_, langs, o.alias);
    ids_ = store_.entity_ids();
    select_triples();
  }

  uint64_t rows() const { return table_.subject.size(); }
  const Stats& selection_stats() const { return selection_; }
  const std::vector<std::string>& languages() const { return labels_->languages(); }

  // The records of the selected triples among rows [begin, end) of /triples.
  void generate(uint64_t begin, uint64_t end, TaskResult& result) const {
    Counters counters(languages().size());
    // About 260 bytes a record: growing the buffer by doubling would copy it twice over.
    const size_t per_triple =
        options_.mode == KmlmOptions::Mode::parallel || options_.all_pairs ? languages().size() : 1;
    if (options_.split_dir.empty()) result.records.all.reserve(static_cast<size_t>(end - begin) * per_triple * 320);
    for (uint64_t row = begin; row < end; ++row) {
      if (!((selected_[row >> 6] >> (row & 63)) & 1)) continue;
      const Triple t{
          row,
          {table_.subject[row], static_cast<uint32_t>(relation_entity_[table_.relation[row]]), table_.object[row]}};
      if (options_.mode == KmlmOptions::Mode::parallel)
        parallel(t, counters, result);
      else
        code_switch(t, counters, result);
    }
    counters.add_to(result.stats, languages());
  }

 private:
  // One pass decides which rows are selected (--max-per-subject depends on the rows before); the
  // triples stay in the store's columns, 12 bytes each, with one bit of selection.
  void select_triples() {
    table_ = store_.triples();
    std::vector<uint8_t>().swap(table_.rank);
    relation_entity_ = store_.relation_entities();
    const std::vector<int64_t>& relation_entity = relation_entity_;
    const kg::TripleTable& table = table_;
    std::vector<uint64_t> relation_number = store_.relation_numbers();
    std::vector<uint64_t> numbers = store_.entity_numbers();
    std::vector<uint32_t> per_subject(options_.max_per_subject > 0 ? store_.entity_count() : 0, 0);
    selected_.assign((table.subject.size() + 63) / 64, 0);
    int64_t selected = 0;
    selection_.set("triples_in_store", static_cast<int64_t>(table.subject.size()));
    for (uint64_t i = 0; i < table.subject.size(); ++i) {
      uint32_t rel = table.relation[i];
      if (options_.relations && !options_.relations->count(relation_number[rel])) continue;
      uint32_t s = table.subject[i], o = table.object[i];
      if (options_.entities && (!options_.entities->count(numbers[s]) || !options_.entities->count(numbers[o])))
        continue;
      if (relation_entity[rel] < 0) {
        selection_.add("skipped_relation_not_in_store");
        continue;
      }
      if (!per_subject.empty() && per_subject[s]++ >= options_.max_per_subject) {
        selection_.add("skipped_subject_cap");
        continue;
      }
      selected_[i >> 6] |= uint64_t{1} << (i & 63);
      ++selected;
    }
    selection_.set("triples_selected", selected);
  }

  // The three surface forms in their languages, rendered as "h [mask] r [mask] t.".
  void render(const Triple& t, const std::array<std::string_view, 3>& forms, AnnotatedText& text) const {
    text.clear();
    text.append_triple(forms, {ids_[t.items[0]], ids_[t.items[1]], ids_[t.items[2]]});
  }

  void emit(const Triple& t, const AnnotatedText& text, size_t lang, const std::array<size_t, 3>& item_langs,
            std::string_view extra_fields, Counters& counters, TaskResult& result) const {
    const std::string& code = languages()[lang];
    std::string& out = result.records.out(code, !options_.split_dir.empty());
    ++counters.records[lang];
    if (options_.plain) {
      out += text.text();
      out.push_back('\n');
      return;
    }
    text.append_json_open(out, code);
    out += ",\"triple\":[";
    for (size_t k = 0; k < 3; ++k) {
      if (k > 0) out.push_back(',');
      append_json_string(out, ids_[t.items[k]]);
    }
    out += "],\"langs\":[";
    for (size_t k = 0; k < 3; ++k) {
      if (k > 0) out.push_back(',');
      append_json_string(out, languages()[item_langs[k]]);
    }
    out.push_back(']');
    out.append(extra_fields);
    out += "}\n";
  }

  // English labels of h, r, t; false (and counted) when one is missing.
  bool english_forms(const Triple& t, std::array<std::string_view, 3>& forms, Counters& counters) const {
    for (size_t k = 0; k < 3; ++k) {
      auto label = labels_->label(kEnglish, t.items[k]);
      if (!label) {
        ++counters.missing[kEnglish];
        ++counters.skipped_no_english;
        return false;
      }
      forms[k] = *label;
    }
    return true;
  }

  // The alias record: each item's label replaced by a uniformly drawn alias in its language.
  void alias_record(const Triple& t, const std::array<size_t, 3>& item_langs, size_t lang,
                    std::array<std::string_view, 3> forms, std::string_view extra, Counters& counters,
                    TaskResult& result) const {
    bool any = false;
    for (size_t k = 0; k < 3; ++k) {
      auto [first, last] = labels_->aliases(item_langs[k], t.items[k]);
      if (first == last) continue;
      Rng rng(options_.seed, t.row, kAliasStream + static_cast<uint32_t>(item_langs[k] * 3 + k));
      forms[k] = labels_->alias(item_langs[k], first + rng.below(last - first));
      any = true;
    }
    if (!any) return;
    AnnotatedText text;
    render(t, forms, text);
    emit(t, text, lang, item_langs, std::string(extra) + ",\"alias\":true", counters, result);
  }

  void code_switch(const Triple& t, Counters& counters, TaskResult& result) const {
    std::array<std::string_view, 3> english;
    if (!english_forms(t, english, counters)) return;
    const size_t targets = languages().size() - 1;
    AnnotatedText text;
    if (targets == 0) {  // --langs en: KMLM's English sentences, nothing to switch into
      const std::array<size_t, 3> item_langs = {kEnglish, kEnglish, kEnglish};
      render(t, english, text);
      emit(t, text, kEnglish, item_langs, "", counters, result);
      if (options_.alias) alias_record(t, item_langs, kEnglish, english, "", counters, result);
      return;
    }
    size_t first = 1, last = languages().size();
    if (!options_.all_pairs) {
      Rng pick(options_.seed, t.row, kLanguageStream);
      first = 1 + pick.below(targets);
      last = first + 1;
    }
    for (size_t l = first; l < last; ++l) {
      Rng rng(options_.seed, t.row, kSwitchStream + static_cast<uint32_t>(l));
      std::array<std::string_view, 3> forms = english;
      std::array<size_t, 3> item_langs = {kEnglish, kEnglish, kEnglish};
      for (size_t k = 0; k < 3; ++k) {
        auto label = labels_->label(l, t.items[k]);
        if (!label) {
          ++counters.missing[l];
          continue;
        }
        ++counters.candidates[k];
        if (rng.uniform() < options_.switch_prob) {
          ++counters.switched[k];
          forms[k] = *label;
          item_langs[k] = l;
        }
      }
      render(t, forms, text);
      emit(t, text, l, item_langs, "", counters, result);
      if (options_.alias) alias_record(t, item_langs, l, forms, "", counters, result);
    }
  }

  void parallel(const Triple& t, Counters& counters, TaskResult& result) const {
    std::array<std::string_view, 3> english;
    if (!english_forms(t, english, counters)) return;
    const std::string group = ",\"group\":" + std::to_string(t.row);
    AnnotatedText text;
    for (size_t l = 0; l < languages().size(); ++l) {
      std::array<std::string_view, 3> forms;
      bool complete = true;
      for (size_t k = 0; k < 3 && complete; ++k) {
        auto label = labels_->label(l, t.items[k]);
        if (label)
          forms[k] = *label;
        else
          complete = false;
      }
      if (!complete) {
        ++counters.missing[l];
        continue;
      }
      const std::array<size_t, 3> item_langs = {l, l, l};
      render(t, forms, text);
      emit(t, text, l, item_langs, group, counters, result);
      if (options_.alias) alias_record(t, item_langs, l, forms, group, counters, result);
    }
  }

  const KmlmOptions& options_;
  kg::KgStore store_;
  std::unique_ptr<LabelIndex> labels_;
  std::vector<std::string> ids_;
  kg::TripleTable table_;
  std::vector<int64_t> relation_entity_;
  std::vector<uint64_t> selected_;  // a bit per row of table_
  Stats selection_;
};

}  // namespace

Stats generate_kmlm(const KmlmOptions& options) {
  if (options.switch_prob < 0 || options.switch_prob > 1) throw UsageError("--switch-prob must be in [0, 1]");
  KmlmGenerator generator(options);
  RecordWriter writer(options.output, options.split_dir, options.plain ? ".txt" : ".jsonl");
  // A shard makes the records of its share of the rows; its parts concatenated in shard order are
  // the unsharded output (the draws are keyed by row, not by position).
  const uint64_t rows = generator.rows() * (options.shard.index + 1) / options.shard.count;
  Stats stats = generator.selection_stats();
  uint64_t next = generator.rows() * options.shard.index / options.shard.count;
  const unsigned workers = std::max(1u, options.threads);
  run_ordered_pipeline<std::pair<uint64_t, uint64_t>, TaskResult>(
      workers, 2 * workers + 2,
      [&](std::pair<uint64_t, uint64_t>& range) {
        if (next >= rows) return false;
        range = {next, std::min(rows, next + kTriplesPerTask)};
        next = range.second;
        return true;
      },
      [&](unsigned, std::pair<uint64_t, uint64_t>& range, TaskResult& result) {
        generator.generate(range.first, range.second, result);
      },
      [&](TaskResult& result) {
        writer.write(result.records);
        stats.merge(result.stats);
      });
  writer.close();
  if (options.shard.active() && !options.split_dir.empty())
    write_shard_directory_record(options.split_dir, options.shard, options.shard_run, writer.file_names());
  else if (options.shard.active())
    write_shard_record(options.output, options.shard, options.shard_run);
  int64_t records = 0;
  for (const auto& [key, value] : stats.values())
    if (key.rfind("records.", 0) == 0) records += value;
  stats.set("records", records);
  // The measured switch rate per item kind, in thousandths (Stats holds integers).
  for (const char* kind : kItemNames) {
    int64_t candidates = stats.get(std::string("switch_candidates.") + kind);
    if (candidates > 0)
      stats.set(std::string("switch_rate_x1000.") + kind,
                stats.get(std::string("switched.") + kind) * 1000 / candidates);
  }
  return stats;
}

}  // namespace kglm::gen
