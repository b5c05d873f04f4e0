// Errors and the --max-errors policy shared by every tool.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kglm {

// Unusable input or a failed operation: the tool stops with exit status 1.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad command line: the tool stops with exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "file:line: " (or "file: " when the line is unknown).
std::string location(std::string_view file, uint64_t line = 0);

// Counts bad records. The first `report_first` are logged with their location and reason; once
// the count passes `max_errors` record() throws Error, so a tool fails only past --max-errors.
class ErrorCounter {
 public:
  explicit ErrorCounter(uint64_t max_errors, uint64_t report_first = 10)
      : max_errors_(max_errors), report_first_(report_first) {}

  void record(std::string_view file, uint64_t line, std::string_view reason);
  // A message that already says where (e.g. an Error from a reader).
  void record(std::string_view located_message);
  uint64_t count() const { return count_; }

 private:
  void check_limit() const;

  uint64_t max_errors_;
  uint64_t report_first_;
  uint64_t count_ = 0;
};

}  // namespace kglm
