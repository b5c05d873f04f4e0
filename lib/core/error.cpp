#include "core/error.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

#include "core/log.hpp"

namespace kglm {

std::string location(std::string_view file, uint64_t line) {
  std::string out(file);
  if (line > 0) out += ":" + std::to_string(line);
  return out + ": ";
}

ErrorLimit ErrorLimit::parse(std::string_view text) {
  auto bad = [&] {
    return UsageError("--max-errors expects a count N or a rate P% (0..100), got '" + std::string(text) + "'");
  };
  ErrorLimit limit;
  if (text.ends_with('%')) {
    std::string_view number = text.substr(0, text.size() - 1);
    double percent = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), percent);
    if (number.empty() || ec != std::errc() || end != number.data() + number.size() || !std::isfinite(percent) ||
        percent < 0 || percent > 100)
      throw bad();
    limit.rate = percent / 100;
    return limit;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), limit.count);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) throw bad();
  return limit;
}

std::string ErrorLimit::to_string() const {
  if (rate < 0) return std::to_string(count);
  std::ostringstream out;
  out << rate * 100 << '%';
  return out.str();
}

void ErrorCounter::record(std::string_view file, uint64_t line, std::string_view reason) {
  record(location(file, line) + std::string(reason));
}

void ErrorCounter::record(std::string_view located_message) {
  ++count_;
  if (first_error_.empty()) first_error_ = located_message;
  if (count_ <= report_first_) {
    log_warning(std::string(located_message));
  } else if (count_ == report_first_ + 1) {
    log_warning("further errors are counted but not reported");
  }
  check_limit();
}

void ErrorCounter::add_valid(uint64_t n) {
  valid_ += n;
  if (limit_.rate >= 0) check_limit();
}

void ErrorCounter::finish(std::string_view input) const {
  if (count_ > 0 && valid_ == 0) {
    throw Error(std::string(input) + ": no valid record; all " + std::to_string(count_) +
                " were bad (the first: " + first_error_ + ")");
  }
  check_limit();
}

void ErrorCounter::finish(const std::vector<std::string>& inputs) const {
  if (inputs.size() != 1) return finish("the inputs");
  finish(inputs[0] == "-" ? std::string_view("<stdin>") : std::string_view(inputs[0]));
}

void ErrorCounter::check_limit() const {
  if (limit_.rate < 0) {
    if (count_ > limit_.count) {
      throw Error("too many bad records: " + std::to_string(count_) + " > --max-errors " + limit_.to_string());
    }
    return;
  }
  const uint64_t seen = count_ + valid_;
  if (seen >= ErrorLimit::kRateMinimumRecords &&
      static_cast<double>(count_) > limit_.rate * static_cast<double>(seen)) {
    throw Error("too many bad records: " + std::to_string(count_) + " of " + std::to_string(seen) + " > --max-errors " +
                limit_.to_string());
  }
}

}  // namespace kglm
