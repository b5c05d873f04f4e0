#include "core/json_writer.hpp"

#include <cmath>
#include <cstdio>

#include "core/byte_scan.hpp"

namespace kglm {

void append_json_string(std::string& out, std::string_view s) {
  static const char* kHex = "0123456789abcdef";
  out.push_back('"');
  static const ByteSet kEscaped("\"\\", true);
  size_t start = 0;
  for (size_t i = kEscaped.find(s, 0); i < s.size(); i = kEscaped.find(s, i + 1)) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out.append(s.data() + start, i - start);
    start = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
    }
  }
  out.append(s.data() + start, s.size() - start);
  out.push_back('"');
}

std::string json_number(double v, int significant_digits) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", significant_digits, v);
  return buf;
}

std::string json_fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "null";
  char buf[352];  // %f of the largest double: 309 digits, the point, the decimals
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace kglm
