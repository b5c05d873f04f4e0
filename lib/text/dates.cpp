#include "text/dates.hpp"

#include "text/numbers.hpp"
#include "text/unicode.hpp"

namespace kglm::text {

namespace {

constexpr size_t kNoMatch = std::string_view::npos;

struct MonthName {
  std::string_view name;
  int month;
  bool abbreviation;  // may take a '.'
};

// Longer names first, so that "Sept" is tried before "Sep".
constexpr MonthName kMonthNames[] = {
    {"January", 1, false},   {"Jan", 1, true},    {"February", 2, false},  {"Feb", 2, true},       {"March", 3, false},
    {"Mar", 3, true},        {"April", 4, false}, {"Apr", 4, true},        {"May", 5, false},      {"June", 6, false},
    {"Jun", 6, true},        {"July", 7, false},  {"Jul", 7, true},        {"August", 8, false},   {"Aug", 8, true},
    {"September", 9, false}, {"Sept", 9, true},   {"Sep", 9, true},        {"October", 10, false}, {"Oct", 10, true},
    {"November", 11, false}, {"Nov", 11, true},   {"December", 12, false}, {"Dec", 12, true},
};

constexpr std::string_view kFullMonthNames[] = {"January", "February", "March",     "April",   "May",      "June",
                                                "July",    "August",   "September", "October", "November", "December"};

struct Era {
  std::string_view name;
  bool before_christ;
};

// Longer spellings first ("BCE" before "BC").
constexpr Era kEraSuffixes[] = {{"B.C.E.", true}, {"B.C.", true}, {"BCE", true},   {"BC", true},
                                {"A.D.", false},  {"AD", false},  {"C.E.", false}, {"CE", false}};
constexpr std::string_view kEraPrefixes[] = {"A.D.", "AD"};

constexpr std::string_view kNoBreakSpace = "\xC2\xA0";            // U+00A0
constexpr std::string_view kNarrowNoBreakSpace = "\xE2\x80\xAF";  // U+202F
constexpr std::string_view kMinusSign = "\xE2\x88\x92";           // U+2212
constexpr std::string_view kRightQuote = "\xE2\x80\x99";          // U+2019
constexpr std::string_view kDegree = "\xC2\xB0";                  // U+00B0
constexpr std::string_view kPound = "\xC2\xA3";                   // U+00A3
constexpr std::string_view kEuro = "\xE2\x82\xAC";                // U+20AC

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool has_at(std::string_view text, size_t pos, std::string_view s) {
  return pos <= text.size() && text.size() - pos >= s.size() && text.compare(pos, s.size(), s) == 0;
}

bool has_before(std::string_view text, size_t pos, std::string_view s) {
  return pos >= s.size() && has_at(text, pos - s.size(), s);
}

size_t digits_end(std::string_view text, size_t pos) {
  while (pos < text.size() && is_digit(text[pos])) ++pos;
  return pos;
}

int64_t digits_value(std::string_view text, size_t begin, size_t end) {
  int64_t value = 0;
  for (size_t k = begin; k < end; ++k) value = value * 10 + (text[k] - '0');
  return value;
}

// The end of a run of spaces between date components (pos itself when there is none).
size_t spaces_end(std::string_view text, size_t pos) {
  for (;;) {
    if (pos < text.size() && text[pos] == ' ')
      ++pos;
    else if (has_at(text, pos, kNoBreakSpace))
      pos += kNoBreakSpace.size();
    else if (has_at(text, pos, kNarrowNoBreakSpace))
      pos += kNarrowNoBreakSpace.size();
    else
      return pos;
  }
}

struct MonthMatch {
  int month = 0;  // 0: no month name at pos
  size_t end = 0;
};

// The month name starting at pos; the caller has checked the left word boundary.
MonthMatch match_month(std::string_view text, size_t pos) {
  if (pos >= text.size()) return {};
  const char first = text[pos];
  if (first != 'J' && first != 'F' && first != 'M' && first != 'A' && first != 'S' && first != 'O' && first != 'N' &&
      first != 'D')
    return {};
  for (const MonthName& m : kMonthNames) {
    if (!has_at(text, pos, m.name)) continue;
    const size_t end = pos + m.name.size();
    if (m.abbreviation && has_at(text, end, ".")) return {m.month, end + 1};
    if (!word_char_at(text, end)) return {m.month, end};
  }
  return {};
}

// The end of an ordinal suffix ("st", "nd", "rd", "th") at pos ending a word, or pos when none.
size_t ordinal_end(std::string_view text, size_t pos) {
  for (std::string_view suffix : {"st", "nd", "rd", "th"})
    if (has_at(text, pos, suffix) && !word_char_at(text, pos + 2)) return pos + 2;
  return pos;
}

// Whether a year, day or ISO date may start with the digit at pos: a number token that is not
// negative, not money and not a reference number.
bool year_starts_cleanly(std::string_view text, size_t pos) {
  if (!starts_number_token(text, pos)) return false;
  if (pos == 0) return true;
  const char before = text[pos - 1];
  // '-' after a letter or digit joins a range or compound ("1914-1918", "pre-1900"); else it is a sign.
  if (before == '-' || before == '+') return word_char_before(text, pos - 1);
  if (has_before(text, pos, kMinusSign)) return word_char_before(text, pos - kMinusSign.size());
  if (before == '$' || before == '#') return false;
  return !has_before(text, pos, kPound) && !has_before(text, pos, kEuro);
}

// Whether a year (or an ISO date) may end at end, after a digit: not part of a longer token, a
// percentage, a temperature or a decade.
bool year_ends_cleanly(std::string_view text, size_t end) {
  if (end >= text.size()) return true;
  const char after = text[end];
  if (word_char_at(text, end) || after == '%' || has_at(text, end, kDegree)) return false;
  if ((after == '.' || after == ',') && end + 1 < text.size() && is_digit(text[end + 1])) return false;
  size_t quote_end = end;
  if (after == '\'')
    quote_end = end + 1;
  else if (has_at(text, end, kRightQuote))
    quote_end = end + kRightQuote.size();
  else
    return true;
  // "1990's" is a decade; "1968's" a possessive, which keeps the year.
  const bool decade = text[end - 1] == '0' && has_at(text, quote_end, "s") && !word_char_at(text, quote_end + 1);
  return !decade;
}

struct EraMatch {
  bool found = false;
  bool before_christ = false;
  size_t end = 0;
};

EraMatch match_era_suffix(std::string_view text, size_t pos) {
  for (const Era& era : kEraSuffixes) {
    if (!has_at(text, pos, era.name)) continue;
    const size_t end = pos + era.name.size();
    if (era.name.back() == '.' || !word_char_at(text, end)) return {true, era.before_christ, end};
  }
  return {};
}

enum class YearRule {
  kWithDay,  // in a form with a day: 1-4 digits
  kAlone,    // alone or after a month: 3-4 digits, no leading zero, unless an era is written
};

struct YearMatch {
  bool found = false;
  int64_t year = 0;
  size_t end = 0;
};

// The year starting at pos ("1879", "79 AD", "AD 79", "300 BC"); the caller has checked what precedes pos.
YearMatch match_year(std::string_view text, size_t pos, YearRule rule) {
  size_t digits_begin = pos;
  bool era_before = false;
  for (std::string_view prefix : kEraPrefixes) {
    if (!has_at(text, pos, prefix)) continue;
    const size_t after = spaces_end(text, pos + prefix.size());
    if (after > pos + prefix.size() && after < text.size() && is_digit(text[after])) {
      digits_begin = after;
      era_before = true;
    }
    break;
  }
  if (digits_begin >= text.size() || !is_digit(text[digits_begin])) return {};
  const size_t digits_stop = digits_end(text, digits_begin);
  const size_t count = digits_stop - digits_begin;
  if (count > 4) return {};
  const int64_t value = digits_value(text, digits_begin, digits_stop);
  if (value == 0) return {};
  if (!era_before) {
    const EraMatch era = match_era_suffix(text, spaces_end(text, digits_stop));
    if (era.found) return {true, era.before_christ ? -value : value, era.end};
  }
  if (!year_ends_cleanly(text, digits_stop)) return {};
  if (rule == YearRule::kAlone && !era_before && (count < 3 || text[digits_begin] == '0')) return {};
  return {true, value, digits_stop};
}

struct DateMatch {
  size_t end = kNoMatch;  // kNoMatch: no date form at the position
  DateValue date;
  bool real = false;  // false: a complete form naming a day that does not exist
};

DateMatch complete_date(size_t end, int64_t year, int month, int day) {
  DateMatch m;
  m.end = end;
  m.date = {year, month, day};
  m.real = year != 0 && (month == 0 ? day == 0 : month <= 12 && day >= 0 && day <= days_in_month(month));
  return m;
}

// A form written with a day: day 0 names no day.
DateMatch complete_date_with_day(size_t end, int64_t year, int month, int day) {
  return day == 0 ? complete_date(end, 0, 0, 0) : complete_date(end, year, month, day);
}

// "1879-03-14" at pos (the caller has checked what precedes pos).
DateMatch match_iso(std::string_view text, size_t pos) {
  const size_t month_at = pos + 5, day_at = pos + 8, end = pos + 10;
  if (digits_end(text, pos) != pos + 4 || !has_at(text, pos + 4, "-") || digits_end(text, month_at) != month_at + 2 ||
      !has_at(text, month_at + 2, "-") || digits_end(text, day_at) != end)
    return {};
  const bool followed_by_time = has_at(text, end, "T") && end + 1 < text.size() && is_digit(text[end + 1]);
  if (!year_ends_cleanly(text, end) && !followed_by_time) return {};
  const int month = static_cast<int>(digits_value(text, month_at, month_at + 2));
  const int day = static_cast<int>(digits_value(text, day_at, end));
  if (month == 0 || month > 12) return complete_date(end, 0, 0, 0);  // shaped like a date, names none
  return complete_date_with_day(end, digits_value(text, pos, pos + 4), month, day);
}

// "14 March 1879", "1st May 1924", "14th of March 1879" at pos, where a run of 1-2 digits starts.
DateMatch match_day_first(std::string_view text, size_t pos) {
  const size_t day_end = digits_end(text, pos);
  const int day = static_cast<int>(digits_value(text, pos, day_end));
  const size_t suffix_end = ordinal_end(text, day_end);
  size_t month_at = spaces_end(text, suffix_end);
  if (month_at == suffix_end) return {};
  if (suffix_end > day_end && has_at(text, month_at, "of") && !word_char_at(text, month_at + 2)) {
    const size_t after_of = spaces_end(text, month_at + 2);
    if (after_of == month_at + 2) return {};
    month_at = after_of;
  }
  const MonthMatch month = match_month(text, month_at);
  if (month.month == 0) return {};
  const size_t year_at = spaces_end(text, month.end);
  if (year_at == month.end) return {};
  const YearMatch year = match_year(text, year_at, YearRule::kWithDay);
  if (!year.found) return {};
  return complete_date_with_day(year.end, year.year, month.month, day);
}

// "March 14, 1879", "March 14th 1879" or "March 1879" at pos, where the caller found a word boundary.
DateMatch match_month_first(std::string_view text, size_t pos) {
  const MonthMatch month = match_month(text, pos);
  if (month.month == 0) return {};
  const size_t next = spaces_end(text, month.end);
  if (next == month.end) return {};
  const size_t day_end = digits_end(text, next);
  if (day_end > next && day_end - next <= 2) {
    size_t after_day = ordinal_end(text, day_end);
    if (has_at(text, after_day, ",")) ++after_day;
    const size_t year_at = spaces_end(text, after_day);
    if (year_at > after_day) {
      const YearMatch year = match_year(text, year_at, YearRule::kWithDay);
      const int day = static_cast<int>(digits_value(text, next, day_end));
      if (year.found) return complete_date_with_day(year.end, year.year, month.month, day);
    }
  }
  const YearMatch year = match_year(text, next, YearRule::kAlone);
  if (!year.found) return {};
  return complete_date(year.end, year.year, month.month, 0);
}

// The longest date form starting with the digit run [pos, pos + run).
DateMatch match_at_digits(std::string_view text, size_t pos, size_t run) {
  if (run == 4) {
    const DateMatch iso = match_iso(text, pos);
    if (iso.end != kNoMatch) return iso;
  }
  if (run <= 2) {
    const DateMatch full = match_day_first(text, pos);
    if (full.end != kNoMatch) return full;
  }
  const YearMatch year = match_year(text, pos, YearRule::kAlone);
  if (!year.found) return {};
  return complete_date(year.end, year.year, 0, 0);
}

// The longest date form starting with the capital letter at pos: a month name or "AD".
DateMatch match_at_capital(std::string_view text, size_t pos) {
  const DateMatch month_first = match_month_first(text, pos);
  if (month_first.end != kNoMatch || text[pos] != 'A') return month_first;
  const YearMatch year = match_year(text, pos, YearRule::kAlone);
  if (!year.found) return {};
  return complete_date(year.end, year.year, 0, 0);
}

}  // namespace

int days_in_month(int month) {
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month >= 1 && month <= 12 ? kDays[month - 1] : 0;
}

void find_dates(std::string_view text, std::vector<DateMention>& out) {
  out.clear();
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const char c = text[i];
    if (is_digit(c)) {
      const size_t run_end = digits_end(text, i);
      if (year_starts_cleanly(text, i)) {
        const DateMatch m = match_at_digits(text, i, run_end - i);
        if (m.end != kNoMatch) {
          if (m.real) out.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(m.end), m.date});
          i = m.end;
          continue;
        }
      }
      i = run_end;
    } else if (c >= 'A' && c <= 'Z') {
      if (!word_char_before(text, i)) {
        const DateMatch m = match_at_capital(text, i);
        if (m.end != kNoMatch) {
          if (m.real) out.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(m.end), m.date});
          i = m.end;
          continue;
        }
      }
      while (i < n && is_ascii_alpha(text[i])) ++i;  // no month starts inside a word
    } else {
      ++i;
    }
  }
}

std::optional<DateValue> parse_wikidata_time(std::string_view value, int precision) {
  if (precision < 9 || precision > 14) return std::nullopt;
  size_t pos = 0;
  bool negative = false;
  if (has_at(value, 0, "+") || has_at(value, 0, "-")) {
    negative = value[0] == '-';
    pos = 1;
  }
  const size_t year_end = digits_end(value, pos);
  if (year_end == pos || year_end - pos > 16) return std::nullopt;  // Wikidata writes at most 16 digits
  const size_t month_at = year_end + 1, day_at = year_end + 4, date_end = year_end + 6;
  if (!has_at(value, year_end, "-") || digits_end(value, month_at) != month_at + 2 || !has_at(value, day_at - 1, "-") ||
      digits_end(value, day_at) != date_end)
    return std::nullopt;
  const std::string_view time = value.substr(date_end);
  if (!time.empty()) {  // "T00:00:00Z"
    if (time.size() != 9 && time.size() != 10) return std::nullopt;
    if (time[0] != 'T' || time[3] != ':' || time[6] != ':' || (time.size() == 10 && time[9] != 'Z'))
      return std::nullopt;
    for (size_t k : {1, 2, 4, 5, 7, 8})
      if (!is_digit(time[k])) return std::nullopt;
  }
  DateValue date;
  date.year = digits_value(value, pos, year_end);
  if (date.year == 0) return std::nullopt;
  if (negative) date.year = -date.year;
  if (precision >= 10) {
    date.month = static_cast<int>(digits_value(value, month_at, month_at + 2));
    if (date.month < 1 || date.month > 12) return std::nullopt;
  }
  if (precision >= 11) {
    date.day = static_cast<int>(digits_value(value, day_at, date_end));
    if (date.day < 1 || date.day > days_in_month(date.month)) return std::nullopt;
  }
  return date;
}

bool dates_agree(const DateValue& a, const DateValue& b) {
  return a.year == b.year && (a.month == 0 || b.month == 0 || a.month == b.month) &&
         (a.day == 0 || b.day == 0 || a.day == b.day);
}

namespace {

// The magnitude of a year, safe for the most negative int64_t.
std::string year_magnitude(int64_t year) {
  const uint64_t magnitude = year < 0 ? 0 - static_cast<uint64_t>(year) : static_cast<uint64_t>(year);
  return std::to_string(magnitude);
}

void append_two_digits(std::string& out, int value) {
  out.push_back(static_cast<char>('0' + value / 10 % 10));
  out.push_back(static_cast<char>('0' + value % 10));
}

}  // namespace

std::string format_date_en(const DateValue& d) {
  std::string out;
  if (d.month >= 1 && d.month <= 12) {
    if (d.day > 0) {
      out += std::to_string(d.day);
      out += ' ';
    }
    out += kFullMonthNames[d.month - 1];
    out += ' ';
  }
  out += year_magnitude(d.year);
  if (d.year < 0) out += " BC";
  return out;
}

std::string format_date_iso(const DateValue& d) {
  std::string out;
  if (d.year < 0) out.push_back('-');
  const std::string year = year_magnitude(d.year);
  if (year.size() < 4) out.append(4 - year.size(), '0');
  out += year;
  if (d.month >= 1 && d.month <= 12) {
    out.push_back('-');
    append_two_digits(out, d.month);
    if (d.day > 0) {
      out.push_back('-');
      append_two_digits(out, d.day);
    }
  }
  return out;
}

}  // namespace kglm::text
