// Errors and the --max-errors policy shared by every tool.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

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

// --max-errors: a count of bad records, or a rate ("1%") of the records seen, checked once
// kRateMinimumRecords records have been seen (a rate of a handful of records says little).
struct ErrorLimit {
  static constexpr uint64_t kRateMinimumRecords = 1000;
  uint64_t count = 1000;
  double rate = -1;  // fraction in [0, 1]; negative: the count applies

  ErrorLimit() = default;
  ErrorLimit(uint64_t n) : count(n) {}             // NOLINT: a plain number is a count
  static ErrorLimit parse(std::string_view text);  // "N" or "P%"; UsageError otherwise
  std::string to_string() const;
};

// Counts bad and valid records. The first `report_first` bad ones are logged with their location
// and reason; record() throws Error once the count passes the limit, and finish() when a run saw
// records but not one valid: every record bad is a failed run, never an empty success.
class ErrorCounter {
 public:
  explicit ErrorCounter(ErrorLimit limit, uint64_t report_first = 10) : limit_(limit), report_first_(report_first) {}

  void record(std::string_view file, uint64_t line, std::string_view reason);
  // A message that already says where (e.g. an Error from a reader).
  void record(std::string_view located_message);
  // Records that were read and used (or deliberately skipped): they count towards a rate.
  void add_valid(uint64_t n = 1);
  // End of the run: throws Error "INPUT: no valid record; all N were bad" when nothing was valid.
  void finish(std::string_view input) const;
  void finish(const std::vector<std::string>& inputs) const;  // names the input when there is one
  uint64_t count() const { return count_; }
  uint64_t valid() const { return valid_; }

 private:
  void check_limit() const;

  ErrorLimit limit_;
  uint64_t report_first_;
  uint64_t count_ = 0;
  uint64_t valid_ = 0;
  std::string first_error_;
};

}  // namespace kglm
