// libFuzzer target: text through the date and number matchers of kg-align (mentions in bounds, on code point
// boundaries, in order, not overlapping, with real dates and canonical values), and the input as a Wikidata time
// and as a decimal (values in range, canonical forms stable and found again). Any abort() or sanitizer report is a
// bug. Seeds in tests/fuzz/dates-corpus.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "text/dates.hpp"
#include "text/numbers.hpp"
#include "text/unicode.hpp"

namespace {

bool on_code_point_boundary(std::string_view text, uint32_t pos) {
  return pos == text.size() || (static_cast<unsigned char>(text[pos]) & 0xC0) != 0x80;
}

void check_span(std::string_view text, uint32_t begin, uint32_t end, uint32_t previous_end) {
  if (begin >= end || end > text.size() || begin < previous_end) std::abort();
  if (!on_code_point_boundary(text, begin) || !on_code_point_boundary(text, end)) std::abort();
}

bool is_real_date(const kglm::text::DateValue& d) {
  if (d.year == 0 || d.month < 0 || d.month > 12 || d.day < 0) return false;
  if (d.month == 0) return d.day == 0;
  return d.day <= kglm::text::days_in_month(d.month);
}

void check_canonical(const std::string& value) {
  const std::optional<std::string> again = kglm::text::canonical_decimal(value);
  if (!again || *again != value) std::abort();
  const std::string written = kglm::text::format_amount_en(value);
  std::vector<kglm::text::NumberMention> found;
  kglm::text::find_numbers(written, found);
  if (found.size() != 1 || found[0].value != value || found[0].begin != 0 || found[0].end != written.size())
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // Sentences come from wiki-extract's documents: always valid UTF-8.
  if (size > (1 << 20) || !kglm::text::is_valid_utf8(input)) return 0;

  std::vector<kglm::text::DateMention> dates;
  kglm::text::find_dates(input, dates);
  uint32_t previous_end = 0;
  for (const kglm::text::DateMention& m : dates) {
    check_span(input, m.begin, m.end, previous_end);
    if (!is_real_date(m.date)) std::abort();
    if (m.date.year > 9999 || m.date.year < -9999) std::abort();  // at most 4 digits
    previous_end = m.end;
  }

  std::vector<kglm::text::NumberMention> numbers;
  kglm::text::find_numbers(input, numbers);
  previous_end = 0;
  for (const kglm::text::NumberMention& m : numbers) {
    check_span(input, m.begin, m.end, previous_end);
    check_canonical(m.value);
    previous_end = m.end;
  }

  if (const std::optional<std::string> value = kglm::text::canonical_decimal(input)) check_canonical(*value);
  for (int precision = 0; precision <= 15; ++precision) {
    const std::optional<kglm::text::DateValue> time = kglm::text::parse_wikidata_time(input, precision);
    if (!time) continue;
    if (precision < 9 || precision > 14 || !is_real_date(*time)) std::abort();
    if ((precision < 10 && time->month != 0) || (precision < 11 && time->day != 0)) std::abort();
    if ((precision >= 10 && time->month == 0) || (precision >= 11 && time->day == 0)) std::abort();
    const kglm::text::DateValue other = *time;
    if (!kglm::text::dates_agree(*time, other)) std::abort();
    kglm::text::format_date_iso(*time);
    // Wikipedia's form of the value is found again, where it is one the matcher reads as a date.
    const bool readable =
        time->year >= -9999 && time->year <= 9999 && (time->year >= 100 || time->year < 0 || time->day);
    if (!readable) continue;
    const std::string written = kglm::text::format_date_en(*time);
    kglm::text::find_dates(written, dates);
    if (dates.size() != 1 || dates[0].date != *time || dates[0].begin != 0 || dates[0].end != written.size())
      std::abort();
  }
  return 0;
}
