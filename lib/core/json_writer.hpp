// Appending JSON values to a string buffer. Tools write JSONL by hand through these because the
// records are flat and hot; reading is done with simdjson.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace kglm {

// s as a JSON string literal (quotes included). s must be valid UTF-8; it is written as is, with
// control characters, '"' and '\\' escaped.
void append_json_string(std::string& out, std::string_view s);

// s as a JSON string literal, returned.
inline std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

// v as a JSON number with `significant_digits` (%g), or `null` where v is NaN or infinite: JSON has
// no such numbers, and "nan" would make the whole line unreadable to every JSON reader.
std::string json_number(double v, int significant_digits = 9);
// v with `decimals` digits after the point (%f), or `null` where v is not finite.
std::string json_fixed(double v, int decimals);

inline void append_json_uint(std::string& out, uint64_t v) {
  char digits[20];
  auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
  out.append(digits, static_cast<size_t>(end - digits));
}

}  // namespace kglm
