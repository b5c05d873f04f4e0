#include "core/error.hpp"

#include "core/log.hpp"

namespace kglm {

std::string location(std::string_view file, uint64_t line) {
  std::string out(file);
  if (line > 0) out += ":" + std::to_string(line);
  return out + ": ";
}

void ErrorCounter::record(std::string_view file, uint64_t line, std::string_view reason) {
  record(location(file, line) + std::string(reason));
}

void ErrorCounter::record(std::string_view located_message) {
  ++count_;
  if (count_ <= report_first_) {
    log_warning(std::string(located_message));
  } else if (count_ == report_first_ + 1) {
    log_warning("further errors are counted but not reported");
  }
  check_limit();
}

void ErrorCounter::check_limit() const {
  if (count_ > max_errors_) {
    throw Error("too many bad records: " + std::to_string(count_) + " > --max-errors " + std::to_string(max_errors_));
  }
}

}  // namespace kglm
