// Appending JSON values to a string buffer. Tools write JSONL by hand through these because the
// records are flat and hot; reading is done with simdjson.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kglm {

// s as a JSON string literal (quotes included). s must be valid UTF-8; it is written as is, with
// control characters, '"' and '\\' escaped.
void append_json_string(std::string& out, std::string_view s);

inline void append_json_uint(std::string& out, uint64_t v) { out += std::to_string(v); }

}  // namespace kglm
