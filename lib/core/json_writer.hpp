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

inline void append_json_uint(std::string& out, uint64_t v) {
  char digits[20];
  auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
  out.append(digits, static_cast<size_t>(end - digits));
}

}  // namespace kglm
