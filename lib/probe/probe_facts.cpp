#include "probe/probe_facts.hpp"

#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "core/comma_list.hpp"
#include "core/line_batcher.hpp"
#include "core/rng.hpp"
#include "gen/fact_text.hpp"
#include "text/case_fold.hpp"

namespace kglm::probe {

namespace fs = std::filesystem;

namespace {

bool parse_number(std::string_view digits, uint64_t& number) {
  if (digits.empty() || digits.size() > 18 || digits[0] == '0') return false;
  number = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    number = number * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

bool is_entity_id(std::string_view id, char prefix) {
  uint64_t number = 0;
  return id.size() > 1 && id[0] == prefix && parse_number(id.substr(1), number);
}

}  // namespace

uint64_t fact_file_relation(std::string_view name) {
  for (std::string_view suffix : {".jsonl", ".jsonl.gz", ".jsonl.zst", ".jsonl.bz2"}) {
    if (!name.ends_with(suffix) || name.size() <= suffix.size() + 1 || name[0] != 'P') continue;
    uint64_t number = 0;
    if (parse_number(name.substr(1, name.size() - suffix.size() - 1), number)) return number;
  }
  return 0;
}

std::vector<ProbeFact> read_xfactr_facts(const std::string& path, uint64_t relation, ErrorCounter& errors) {
  std::vector<ProbeFact> facts;
  simdjson::dom::parser parser;
  const std::string predicate = relation ? "P" + std::to_string(relation) : std::string();
  for_each_data_line(path, [&](uint64_t line, std::string_view text) {
    simdjson::dom::element root;
    if (auto err = parser.parse(text.data(), text.size()).get(root)) {
      return errors.record(path, line, std::string("invalid JSON: ") + simdjson::error_message(err));
    }
    ProbeFact f;
    f.relation = relation;
    for (auto [member, into] : {std::pair<const char*, std::string*>{"sub_uri", &f.subject},
                                {"obj_uri", &f.object},
                                {"sub_label", &f.subject_label},
                                {"obj_label", &f.object_label}}) {
      std::string_view value;
      if (root[member].get(value) != simdjson::SUCCESS || value.empty())
        return errors.record(path, line, std::string("no \"") + member + "\" (a non-empty string)");
      *into = std::string(value);
    }
    std::string_view predicate_id;
    const bool has_predicate = root["predicate_id"].get(predicate_id) == simdjson::SUCCESS;
    if (relation == 0) {
      // A file not named after its relation: each line says its own.
      if (!has_predicate || !predicate_id.starts_with('P') || !parse_number(predicate_id.substr(1), f.relation))
        return errors.record(path, line, "no \"predicate_id\" (P<number>) in a file not named P<number>.jsonl");
    } else if (has_predicate && predicate_id != predicate) {
      return errors.record(path, line, "predicate_id " + std::string(predicate_id) + " in the file of " + predicate);
    }
    if (!is_entity_id(f.subject, 'Q') || !is_entity_id(f.object, 'Q'))
      return errors.record(path, line, "sub_uri and obj_uri must be Q<number>");
    errors.add_valid();
    facts.push_back(std::move(f));
  });
  return facts;
}

std::vector<std::pair<uint64_t, std::string>> fact_files(const std::string& dir,
                                                         const std::vector<uint64_t>& relations) {
  if (!fs::is_directory(dir)) return {{fact_file_relation(fs::path(dir).filename().string()), dir}};
  std::map<uint64_t, std::string> found;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const uint64_t relation = fact_file_relation(entry.path().filename().string());
    if (relation != 0) found.try_emplace(relation, entry.path().string());
  }
  std::vector<std::pair<uint64_t, std::string>> files;
  if (relations.empty()) {
    files.assign(found.begin(), found.end());
    if (files.empty()) throw Error(location(dir) + "no fact files (P<number>.jsonl)");
    return files;
  }
  for (uint64_t r : relations) {
    auto it = found.find(r);
    if (it == found.end())
      throw Error(location(dir) + "no fact file for P" + std::to_string(r) + " (P" + std::to_string(r) + ".jsonl)");
    files.push_back(*it);
  }
  return files;
}

std::vector<std::pair<uint64_t, std::vector<ProbeFact>>> draw_kg_facts(const kg::FactStore& facts,
                                                                       const gen::FactText& text,
                                                                       const std::vector<uint64_t>& relations,
                                                                       uint64_t max_per_relation, uint64_t seed) {
  // The wanted relations' rows, then one pass over the store collecting (subject, fact) per relation.
  std::unordered_map<uint32_t, size_t> slot;  // relation row -> index in relations
  for (size_t i = 0; i < relations.size(); ++i) {
    const int64_t row = text.relation_row("P" + std::to_string(relations[i]));
    if (row < 0) throw Error("the KG store has no relation P" + std::to_string(relations[i]));
    slot.emplace(static_cast<uint32_t>(row), i);
  }
  std::vector<std::vector<std::pair<uint32_t, const kg::Fact*>>> statements(relations.size());
  for (uint64_t s = 0; s < facts.entity_count(); ++s)
    for (const kg::Fact& f : facts.facts(static_cast<uint32_t>(s)))
      if (auto it = slot.find(f.relation); f.kind == kg::FactKind::item && it != slot.end())
        statements[it->second].emplace_back(static_cast<uint32_t>(s), &f);
  std::vector<std::pair<uint64_t, std::vector<ProbeFact>>> drawn;
  for (size_t i = 0; i < relations.size(); ++i) {
    auto& all = statements[i];
    std::vector<size_t> keep(all.size());
    for (size_t k = 0; k < keep.size(); ++k) keep[k] = k;
    if (max_per_relation > 0 && all.size() > max_per_relation) {
      // A seeded sample, kept in store order.
      Rng rng(seed, relations[i]);
      for (size_t k = 0; k < max_per_relation; ++k) std::swap(keep[k], keep[k + rng.below(keep.size() - k)]);
      keep.resize(max_per_relation);
      std::sort(keep.begin(), keep.end());
    }
    std::vector<ProbeFact> group;
    for (size_t k : keep)
      group.push_back(
          {relations[i], text.entity_id(all[k].first), text.entity_id(facts.object(*all[k].second)), {}, {}});
    drawn.emplace_back(relations[i], std::move(group));
  }
  return drawn;
}

std::vector<uint64_t> parse_relation_list(const std::string& list) {
  std::vector<uint64_t> relations;
  for (std::string_view part : split_comma_list(list)) {
    if (part.starts_with('P')) part.remove_prefix(1);
    uint64_t number = 0;
    if (!parse_number(part, number))
      throw UsageError("--relations takes comma-separated relation ids such as P19,P36, not '" + list + "'");
    if (std::find(relations.begin(), relations.end(), number) == relations.end()) relations.push_back(number);
  }
  return relations;
}

void AliasTable::load(const std::string& path, ErrorCounter& errors) {
  for_each_data_line(path, [&](uint64_t line, std::string_view text) {
    const size_t tab = text.find('\t');
    const std::string_view id = text.substr(0, tab);
    if (!is_entity_id(id, 'Q')) return errors.record(path, line, "a line must start with a Q id and a tab");
    errors.add_valid();
    if (tab == std::string_view::npos) return;
    std::vector<std::string>& aliases = aliases_[std::string(id)];
    for (size_t begin = tab + 1; begin <= text.size();) {
      const size_t end = std::min(text.find('\t', begin), text.size());
      if (end > begin) aliases.emplace_back(text.substr(begin, end - begin));
      begin = end + 1;
    }
  });
}

const std::vector<std::string>* AliasTable::find(std::string_view id) const {
  auto it = aliases_.find(id);
  return it == aliases_.end() ? nullptr : &it->second;
}

std::string normalize_answer(std::string_view text) {
  const std::string folded = text::fold_case(text);
  std::string out;
  out.reserve(folded.size());
  for (char c : folded) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    out += c;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace kglm::probe
