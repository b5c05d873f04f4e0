#include "probe/probe_scores.hpp"

#include <cstdio>
#include <map>
#include <utility>

#include "core/json_writer.hpp"
#include "core/output_stream.hpp"

namespace kglm::probe {

void RelationScore::add(bool single_token, bool is_correct) {
  ++facts;
  correct += is_correct;
  if (single_token) {
    ++single_facts;
    single_correct += is_correct;
  } else {
    ++multi_facts;
    multi_correct += is_correct;
  }
}

MacroScore macro_average(const std::vector<RelationScore>& rows) {
  MacroScore m;
  double sums[3] = {0, 0, 0};
  int64_t counts[3] = {0, 0, 0};
  for (const RelationScore& r : rows) {
    const std::pair<int64_t, int64_t> parts[3] = {
        {r.facts, r.correct}, {r.single_facts, r.single_correct}, {r.multi_facts, r.multi_correct}};
    for (int k = 0; k < 3; ++k) {
      if (parts[k].first == 0) continue;
      sums[k] += static_cast<double>(parts[k].second) / static_cast<double>(parts[k].first);
      ++counts[k];
    }
    m.relations += r.facts > 0;
    m.facts += r.facts;
  }
  std::optional<double>* out[3] = {&m.all, &m.single, &m.multi};
  for (int k = 0; k < 3; ++k)
    if (counts[k] > 0) *out[k] = sums[k] / static_cast<double>(counts[k]);
  return m;
}

namespace {

std::string percent(std::optional<double> v) {
  if (!v) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", 100.0 * *v);
  return buffer;
}

std::optional<double> ratio(int64_t correct, int64_t facts) {
  if (facts == 0) return std::nullopt;
  return static_cast<double>(correct) / static_cast<double>(facts);
}

std::string json_ratio(std::optional<double> v) { return v ? json_fixed(*v, 6) : "null"; }

}  // namespace

std::string write_probe_results(const std::string& prefix, const std::vector<RelationScore>& rows,
                                OutputStream* predictions) {
  std::string tsv = "method\tlang\trelation\tfacts\tall\tsingle\tmulti\tsingle_facts\tmulti_facts\n";
  std::string json = "{\n  \"relations\": [";
  std::map<std::pair<std::string, std::string>, std::vector<RelationScore>> groups;
  std::vector<std::pair<std::string, std::string>> group_order;
  bool first = true;
  for (const RelationScore& r : rows) {
    const std::string relation = "P" + std::to_string(r.relation);
    tsv += r.method + '\t' + r.lang + '\t' + relation + '\t' + std::to_string(r.facts) + '\t' +
           percent(ratio(r.correct, r.facts)) + '\t' + percent(ratio(r.single_correct, r.single_facts)) + '\t' +
           percent(ratio(r.multi_correct, r.multi_facts)) + '\t' + std::to_string(r.single_facts) + '\t' +
           std::to_string(r.multi_facts) + '\n';
    json += first ? "\n    " : ",\n    ";
    first = false;
    json += "{\"method\": " + json_string(r.method) + ", \"lang\": " + json_string(r.lang) +
            ", \"relation\": " + json_string(relation) + ", \"facts\": " + std::to_string(r.facts) +
            ", \"correct\": " + std::to_string(r.correct) + ", \"single_facts\": " + std::to_string(r.single_facts) +
            ", \"single_correct\": " + std::to_string(r.single_correct) +
            ", \"multi_facts\": " + std::to_string(r.multi_facts) +
            ", \"multi_correct\": " + std::to_string(r.multi_correct) +
            ", \"all\": " + json_ratio(ratio(r.correct, r.facts)) +
            ", \"single\": " + json_ratio(ratio(r.single_correct, r.single_facts)) +
            ", \"multi\": " + json_ratio(ratio(r.multi_correct, r.multi_facts)) + "}";
    const auto key = std::make_pair(r.method, r.lang);
    if (groups.find(key) == groups.end()) group_order.push_back(key);
    groups[key].push_back(r);
  }
  json += "\n  ],\n  \"macro\": [";
  first = true;
  for (const auto& key : group_order) {
    const MacroScore m = macro_average(groups[key]);
    int64_t single = 0, multi = 0;
    for (const RelationScore& r : groups[key]) {
      single += r.single_facts;
      multi += r.multi_facts;
    }
    tsv += key.first + '\t' + key.second + "\tmacro\t" + std::to_string(m.facts) + '\t' + percent(m.all) + '\t' +
           percent(m.single) + '\t' + percent(m.multi) + '\t' + std::to_string(single) + '\t' + std::to_string(multi) +
           '\n';
    json += first ? "\n    " : ",\n    ";
    first = false;
    json += "{\"method\": " + json_string(key.first) + ", \"lang\": " + json_string(key.second) +
            ", \"relations\": " + std::to_string(m.relations) + ", \"facts\": " + std::to_string(m.facts) +
            ", \"all\": " + json_ratio(m.all) + ", \"single\": " + json_ratio(m.single) +
            ", \"multi\": " + json_ratio(m.multi) + "}";
  }
  json += "\n  ]\n}\n";
  OutputStream tsv_out(prefix + ".tsv"), json_out(prefix + ".json");
  tsv_out.write(tsv);
  json_out.write(json);
  std::vector<OutputStream*> parts{&tsv_out, &json_out};
  if (predictions) parts.push_back(predictions);
  put_in_place_together(parts);
  return tsv;
}

}  // namespace kglm::probe
