// UTF-8 decoding and encoding for the tokenizers' inner loops: strict (no overlongs, surrogates or
// code points past U+10FFFF) and never reading past the end of the text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kglm::tok {

// The code point starting at text[i], advancing i past it; -1 for a malformed sequence, of which
// only the first byte is consumed.
inline int32_t next_code_point(std::string_view text, size_t& i) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned lead = bytes[i++];
  if (lead < 0x80) return static_cast<int32_t>(lead);
  size_t continuation_bytes = 0;
  uint32_t cp = 0, smallest = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    continuation_bytes = 1, cp = lead & 0x1F, smallest = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    continuation_bytes = 2, cp = lead & 0x0F, smallest = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    continuation_bytes = 3, cp = lead & 0x07, smallest = 0x10000;
  } else {
    return -1;
  }
  if (text.size() - i < continuation_bytes) return -1;
  for (size_t k = 0; k < continuation_bytes; ++k) {
    const unsigned byte = bytes[i + k];
    if ((byte & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (byte & 0x3F);
  }
  if (cp < smallest || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  i += continuation_bytes;
  return static_cast<int32_t>(cp);
}

// Appends cp (a valid code point) as UTF-8.
inline void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace kglm::tok
