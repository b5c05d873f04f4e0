// Quantity matching for TEKGEN's alignment (kg-align): numbers as English Wikipedia writes them
// ("68,042,591", "1.96", "−40") and the canonical decimal form that Wikidata amounts are compared in.
//
// Rules of find_numbers:
//  - A number is an optional minus sign ('-' or U+2212 '−'), digits, thousands separators and an
//    optional decimal part. The sign belongs to the number only when it sits directly before the
//    first digit and does not itself follow a letter or digit ("x-5" and "1914-18" give 5 and 18).
//  - ',' separates thousands only after a first group of 1-3 digits and between groups of exactly
//    3 digits: a ',' not followed by exactly three digits and then a non-digit ends the number before
//    it ("1,23" gives 1; "1,234,5678" gives 1234).
//  - '.' starts the decimal part only when a digit follows ("5." gives 5; "1.2.3" gives 1.2).
//  - Digits that directly follow a letter or digit of any script are part of a word and give nothing
//    ("A380", "v2"); so do digits after a '.' or ',' unless that follows a letter ("c.1500" and
//    "No.5" are numbers; the "3" of "v2.3", the "23" of "1,23" and the "45" of ".45" are not).
//  - Letters may follow a number directly ("5km" gives 5).
//  - The value is canonical_decimal of the sign and digits without separators.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kglm::text {

struct NumberMention {
  uint32_t begin = 0;  // UTF-8 byte offsets into the text
  uint32_t end = 0;
  std::string value;  // canonical decimal
};

// Every number written in the text, in text order: clears out first.
void find_numbers(std::string_view text, std::vector<NumberMention>& out);

// Canonical form of a decimal string, or nullopt when it is not one: optional sign ('+', '-' or
// U+2212), digits, optional '.' and digits (at least one digit in all). Leading zeros, a '+' sign,
// trailing fractional zeros and a bare '.' are dropped; "-0" -> "0". "+1.960" -> "1.96",
// "+0012" -> "12", "-0.50" -> "-0.5", "12." -> "12", ".5" -> "0.5".
std::optional<std::string> canonical_decimal(std::string_view s);

// Wikipedia's English form of a canonical decimal: thousands separators in the integer part:
// "68042591" -> "68,042,591", "-1234.5" -> "-1,234.5", "1.96" -> "1.96".
std::string format_amount_en(std::string_view canonical);

// Whether a number token may start with the digit at pos (the rule above, without the sign).
bool starts_number_token(std::string_view text, size_t pos);

}  // namespace kglm::text
