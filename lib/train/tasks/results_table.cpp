#include "train/tasks/results_table.hpp"

#include <cmath>
#include <cstdio>

#include "core/json_writer.hpp"
#include "core/output_stream.hpp"

namespace kglm::train::tasks {

namespace {

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// One row of values over the seeds.
struct Row {
  std::string name;
  std::vector<double> values;
};

std::string tsv_row(const Row& r) {
  std::string line =
      r.name + "\t" + json_fixed(100 * mean(r.values), 2) + "\t" + json_fixed(100 * sample_std(r.values), 2);
  for (double v : r.values) line += "\t" + json_fixed(100 * v, 2);
  return line + "\n";
}

std::string json_summary(const std::vector<double>& values) {
  std::string j =
      "{\"mean\": " + json_number(mean(values)) + ", \"std\": " + json_number(sample_std(values)) + ", \"per_seed\": [";
  for (size_t i = 0; i < values.size(); ++i) j += (i ? ", " : "") + json_number(values[i]);
  return j + "]}";
}

}  // namespace

double sample_std(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double m = mean(values);
  double squares = 0;
  for (double v : values) squares += (v - m) * (v - m);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

std::string write_results(const std::string& prefix, TaskKind kind, const std::vector<SeedResult>& seeds) {
  return write_results(prefix, task_name(kind), task_metric(kind), seeds);
}

std::string write_results(const std::string& prefix, const std::string& task, const std::string& metric,
                          const std::vector<SeedResult>& seeds) {
  // The languages in --test order; each seed has the same tests.
  std::vector<std::string> langs;
  if (!seeds.empty())
    for (const auto& [lang, score] : seeds.front().tests) langs.push_back(lang);
  std::vector<Row> rows;
  for (size_t l = 0; l < langs.size(); ++l) {
    Row r{langs[l], {}};
    for (const SeedResult& s : seeds) r.values.push_back(s.tests.at(l).second.value);
    rows.push_back(std::move(r));
  }
  std::vector<std::string> others;
  for (const std::string& lang : langs)
    if (lang != "en") others.push_back(lang);
  Row zero_shot{"zero-shot", {}};
  if (!others.empty())
    for (const SeedResult& s : seeds) {
      double sum = 0;
      for (const auto& [lang, score] : s.tests)
        if (lang != "en") sum += score.value;
      zero_shot.values.push_back(sum / static_cast<double>(others.size()));
    }
  Row dev{"dev", {}};
  for (const SeedResult& s : seeds)
    if (s.dev) dev.values.push_back(*s.dev);

  std::string tsv = "# task " + task + ", " + metric + " ×100, mean and std over " + std::to_string(seeds.size()) +
                    " seeds\nlang\tmean\tstd";
  for (const SeedResult& s : seeds) tsv += "\tseed=" + std::to_string(s.seed);
  tsv += "\n";
  for (const Row& r : rows) tsv += tsv_row(r);
  if (!zero_shot.values.empty()) tsv += tsv_row(zero_shot);
  if (dev.values.size() == seeds.size() && !seeds.empty()) tsv += tsv_row(dev);

  std::string j =
      "{\n  \"task\": " + json_string(task) + ",\n  \"metric\": " + json_string(metric) + ",\n  \"seeds\": [";
  for (size_t i = 0; i < seeds.size(); ++i) j += (i ? ", " : "") + std::to_string(seeds[i].seed);
  j += "],\n  \"languages\": {";
  for (size_t l = 0; l < langs.size(); ++l) {
    j += std::string(l ? "," : "") + "\n    " + json_string(langs[l]) +
         ": {\"examples\": " + std::to_string(seeds.front().tests[l].second.examples);
    for (size_t d = 0; d < seeds.front().tests[l].second.details.size(); ++d) {
      std::vector<double> values;
      for (const SeedResult& s : seeds) values.push_back(s.tests[l].second.details[d].second);
      j += ", " + json_string(seeds.front().tests[l].second.details[d].first) + ": " + json_summary(values);
    }
    j += "}";
  }
  j += "\n  },\n  \"zero_shot\": ";
  if (zero_shot.values.empty()) {
    j += "null";
  } else {
    j += json_summary(zero_shot.values);
    j.pop_back();
    j += ", \"languages\": [";
    for (size_t i = 0; i < others.size(); ++i) j += (i ? ", " : "") + json_string(others[i]);
    j += "]}";
  }
  j += ",\n  \"english\": ";
  bool english = false;
  for (const Row& r : rows)
    if (r.name == "en") {
      j += json_summary(r.values);
      english = true;
    }
  if (!english) j += "null";
  j += ",\n  \"dev\": " + (dev.values.empty() ? std::string("null") : json_summary(dev.values)) + "\n}\n";

  for (const auto& [suffix, text] : {std::pair<const char*, const std::string&>{".tsv", tsv}, {".json", j}}) {
    OutputStream out(prefix + suffix);
    out.write(text);
    out.close();
  }
  return tsv;
}

}  // namespace kglm::train::tasks
