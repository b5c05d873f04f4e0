// Small UTF-8 helpers on top of ICU's code-point macros and case mappings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kglm::text {

// Appends code point cp as UTF-8 (invalid code points become U+FFFD).
void append_utf8(std::string& out, uint32_t cp);

// MediaWiki's first-letter case rule: the first code point upper-cased (ICU simple mapping),
// the rest unchanged.
std::string upper_first(std::string_view s);

// Lower-cases ASCII letters only (namespace and tag names are ASCII).
std::string ascii_lower(std::string_view s);

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
inline bool is_ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_ascii_alnum(char c) { return is_ascii_alpha(c) || (c >= '0' && c <= '9'); }

// The value of a hexadecimal digit, or -1.
int hex_digit_value(char c);

// True when s is well-formed UTF-8.
bool is_valid_utf8(std::string_view s);

// Whether the code point ending just before byte pos (or starting at pos) is a letter or decimal
// digit of any script; false at the ends of the text and on malformed UTF-8. The word boundaries
// of the name, date and number matchers.
bool word_char_before(std::string_view text, size_t pos);
bool word_char_at(std::string_view text, size_t pos);
// s without leading and trailing spaces, tabs and newlines.
std::string_view trim(std::string_view s);

}  // namespace kglm::text
