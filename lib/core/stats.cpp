#include "core/stats.hpp"

#include <simdjson.h>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/output_stream.hpp"

namespace kglm {

int64_t Stats::get(std::string_view key) const {
  auto it = values_.find(std::string(key));
  return it == values_.end() ? 0 : it->second;
}

void Stats::merge(const Stats& other) {
  for (const auto& [k, v] : other.values_) values_[k] += v;
}

std::string Stats::to_json() const {
  // Keys are tool-chosen identifiers (ASCII letters, digits, '_', '-'), so no escaping is needed.
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : values_) {
    out += first ? "\n  \"" : ",\n  \"";
    out += k + "\": " + std::to_string(v);
    first = false;
  }
  out += first ? "}\n" : "\n}\n";
  return out;
}

Stats Stats::from_json(std::string_view json) {
  Stats stats;
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (parser.parse(simdjson::padded_string(json)).get(obj) != simdjson::SUCCESS) {
    throw Error("statistics: not a JSON object");
  }
  for (auto [key, value] : obj) {
    int64_t v = 0;
    if (value.get(v) != simdjson::SUCCESS) throw Error("statistics: non-integer value");
    stats.set(key, v);
  }
  return stats;
}

void Stats::write_json(const std::string& path) const {
  OutputStream out(path);
  out.write(to_json());
  out.close();
}

void Stats::print() const {
  for (const auto& [k, v] : values_) log_info("  " + k + ": " + std::to_string(v));
}

}  // namespace kglm
