#include "core/big_json_integers.hpp"

namespace kglm {

namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::string widen_big_integers(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  bool in_string = false;
  for (size_t i = 0; i < json.size();) {
    const char c = json[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < json.size())
        out += json[++i];
      else if (c == '"')
        in_string = false;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      ++i;
      continue;
    }
    // A value starts after ':', ',', '[' or whitespace; a number with '-' or a digit (not the digits
    // of a fraction or an exponent, which follow '.', 'e' or a sign).
    const bool value_start = i == 0 || std::string_view(" \t\r\n:,[").find(json[i - 1]) != std::string_view::npos;
    if (value_start && (digit(c) || (c == '-' && i + 1 < json.size() && digit(json[i + 1])))) {
      size_t end = i + (c == '-' ? 1 : 0);
      while (end < json.size() && digit(json[end])) ++end;
      const size_t digits = end - i - (c == '-' ? 1 : 0);
      const bool integer = end == json.size() || (json[end] != '.' && json[end] != 'e' && json[end] != 'E');
      out.append(json.substr(i, end - i));
      if (integer && digits > 18) out += "e0";
      i = end;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

}  // namespace kglm
