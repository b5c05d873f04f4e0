#include "text/numbers.hpp"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include "text/unicode.hpp"

namespace kglm::text {

namespace {

constexpr std::string_view kMinusSign = "\xE2\x88\x92";  // U+2212

bool is_digit(char c) { return c >= '0' && c <= '9'; }

size_t digits_end(std::string_view text, size_t pos) {
  while (pos < text.size() && is_digit(text[pos])) ++pos;
  return pos;
}

// A ',' at pos continues a number when exactly three digits follow it.
bool is_thousands_group(std::string_view text, size_t pos) {
  return pos < text.size() && text[pos] == ',' && digits_end(text, pos + 1) == pos + 4;
}

}  // namespace

bool starts_number_token(std::string_view text, size_t pos) {
  if (pos == 0) return true;
  if (word_char_before(text, pos)) return false;
  const char c = text[pos - 1];
  if (c != '.' && c != ',') return true;
  // After an abbreviation's dot ("c.1500") a number starts; after a digit's it continues one.
  return word_char_before(text, pos - 1) && !is_digit(text[pos - 2]);
}

void find_numbers(std::string_view text, std::vector<NumberMention>& out) {
  out.clear();
  const size_t n = text.size();
  std::string digits;
  size_t i = 0;
  while (i < n) {
    if (!is_digit(text[i])) {
      ++i;
      continue;
    }
    const size_t first_digit = i;
    size_t end = digits_end(text, i);
    i = end;  // the run is consumed whatever it turns out to be
    if (!starts_number_token(text, first_digit)) continue;

    size_t begin = first_digit;
    bool negative = false;
    if (first_digit >= 1 && text[first_digit - 1] == '-' && !word_char_before(text, first_digit - 1)) {
      begin = first_digit - 1;
      negative = true;
    } else if (first_digit >= kMinusSign.size() &&
               text.substr(first_digit - kMinusSign.size(), kMinusSign.size()) == kMinusSign &&
               !word_char_before(text, first_digit - kMinusSign.size())) {
      begin = first_digit - kMinusSign.size();
      negative = true;
    }

    digits.clear();
    if (negative) digits.push_back('-');
    digits.append(text.substr(first_digit, end - first_digit));
    if (end - first_digit <= 3) {
      while (is_thousands_group(text, end)) {
        digits.append(text.substr(end + 1, 3));
        end += 4;
      }
    }
    if (end + 1 < n && text[end] == '.' && is_digit(text[end + 1])) {
      const size_t fraction_end = digits_end(text, end + 1);
      digits.append(text.substr(end, fraction_end - end));
      end = fraction_end;
    }
    i = end;

    NumberMention& m = out.emplace_back();
    m.begin = static_cast<uint32_t>(begin);
    m.end = static_cast<uint32_t>(end);
    m.value = *canonical_decimal(digits);  // sign and digits only: always a decimal
  }
}

std::optional<std::string> canonical_decimal(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  } else if (s.substr(0, kMinusSign.size()) == kMinusSign) {
    negative = true;
    s.remove_prefix(kMinusSign.size());
  }
  const size_t integer_end = digits_end(s, 0);
  std::string_view integer = s.substr(0, integer_end);
  std::string_view fraction;
  if (integer_end < s.size()) {
    if (s[integer_end] != '.') return std::nullopt;
    fraction = s.substr(integer_end + 1);
    if (digits_end(fraction, 0) != fraction.size()) return std::nullopt;
  }
  if (integer.empty() && fraction.empty()) return std::nullopt;

  while (!integer.empty() && integer.front() == '0') integer.remove_prefix(1);
  while (!fraction.empty() && fraction.back() == '0') fraction.remove_suffix(1);
  std::string out;
  out.reserve(integer.size() + fraction.size() + 3);
  if (negative && !(integer.empty() && fraction.empty())) out.push_back('-');  // no "-0"
  if (integer.empty())
    out.push_back('0');
  else
    out.append(integer);
  if (!fraction.empty()) {
    out.push_back('.');
    out.append(fraction);
  }
  return out;
}

std::string format_amount_en(std::string_view canonical) {
  std::string out;
  out.reserve(canonical.size() + canonical.size() / 3 + 1);
  if (!canonical.empty() && canonical[0] == '-') {
    out.push_back('-');
    canonical.remove_prefix(1);
  }
  const size_t integer_end = digits_end(canonical, 0);
  for (size_t k = 0; k < integer_end; ++k) {
    if (k > 0 && (integer_end - k) % 3 == 0) out.push_back(',');
    out.push_back(canonical[k]);
  }
  out.append(canonical.substr(integer_end));
  return out;
}

}  // namespace kglm::text
