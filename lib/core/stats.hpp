// Run statistics: flat integer counters, printed on stderr and written as JSON by --stats FILE.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace kglm {

class Stats {
 public:
  void add(std::string_view key, int64_t delta = 1) { values_[std::string(key)] += delta; }
  void set(std::string_view key, int64_t value) { values_[std::string(key)] = value; }
  int64_t get(std::string_view key) const;
  void merge(const Stats& other);
  const std::map<std::string, int64_t>& values() const { return values_; }

  std::string to_json() const;
  static Stats from_json(std::string_view json);  // reads what to_json() writes
  // Atomic write of to_json() to path ("-" = stdout).
  void write_json(const std::string& path) const;
  // "key: value" lines on stderr (unless --quiet).
  void print() const;

 private:
  std::map<std::string, int64_t> values_;
};

}  // namespace kglm
