// Date matching for TEKGEN's alignment (kg-align): a Wikidata time aligns to an English Wikipedia
// sentence when the sentence writes it in one of Wikipedia's date formats, compared component by
// component with TEKGEN's partial-component rule.
//
// Rules of find_dates:
//  - Month names: January ... December, capitalised (case-sensitive, so the verb "may" is no month),
//    and the abbreviations Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec, optionally followed by
//    '.'. A name must stand on word boundaries: no letter or digit of any script directly before it
//    or directly after it ("Mayor", "Marchant", "Janet" are not months).
//  - Forms, tried at each position and the longest taken:
//      D Month Y        "14 March 1879", "1st May 1924", "14th of March 1879" ("of" only after an ordinal)
//      Month D, Y       "March 14, 1879", "March 14 1879", "Sept. 14th, 1879" (comma optional)
//      YYYY-MM-DD       "1879-03-14" (exactly 4, 2 and 2 digits)
//      Month Y          "March 1879"
//      Y                "1879", "300 BC", "AD 79"
//    "Month D" without a year is not a date. The day is 1 or 2 digits with an optional ordinal suffix
//    (st, nd, rd, th).
//  - Years: 1-4 digits in the forms with a day; in "Month Y" and alone, 3 or 4 digits without a
//    leading zero (100-9999), or 1-4 digits when an era is written. Eras: "BC", "BCE", "B.C.",
//    "B.C.E." after the year (a negative year, "300 BC" = -300), "AD", "CE", "A.D.", "C.E." after it
//    or "AD"/"A.D." before it ("AD 79", "19 August AD 14"). Year 0 is no year.
//  - A year (and a day) is a whole number token: it starts where find_numbers lets a number start
//    (no letter or digit of any script before it, no '.' or ',' before it unless that follows a
//    letter: "c.1500" is a year), and has no minus sign (a '-' or U+2212 not after a letter or digit),
//    '$', '#', '£' or '€' directly before it; no letter or digit of any script, '%', '°', '.' or ','
//    followed by a digit, or "'s" after a final 0 directly after it. So "1920s", "1990's", "1879th",
//    "1990km", "1,924", "3.1924", "1924.5", "−300" and "50%" hold no year ("1968's" does), while in
//    ranges each full year counts ("1914–1918", "1914-1918": 1914 and 1918; "1914–18": 1914;
//    "pre-1900": 1900).
//  - Components are separated by runs of spaces, U+00A0 (no-break space) or U+202F.
//  - The day must exist in the month (February 29 always allowed). A form that is complete but names
//    no real day ("30 February 1900", "1900-13-01") gives no date at all, not even its year.
//  - Mentions are in text order and never overlap; offsets are UTF-8 byte offsets into the text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kglm::text {

struct DateValue {
  int64_t year = 0;  // < 0: BC (Wikidata "-0300" = 300 BC)
  int month = 0;     // 0: absent
  int day = 0;       // 0: absent
  bool operator==(const DateValue&) const = default;
};

struct DateMention {
  uint32_t begin = 0;  // UTF-8 byte offsets into the text
  uint32_t end = 0;
  DateValue date;
};

// Every date written in English text the ways Wikipedia writes them (rules above), in text order,
// non-overlapping (the longest form wins): clears out first.
void find_dates(std::string_view text, std::vector<DateMention>& out);

// A Wikidata time value ("+1879-03-14T00:00:00Z", "-0300-00-00T00:00:00Z") at its precision (9 year,
// 10 month, 11 day, 12-14 finer = day): components finer than the precision are dropped (set 0).
// nullopt for precision < 9 (decades, centuries...) or > 14, an unparsable value, year 0, or a kept
// component that is out of range.
std::optional<DateValue> parse_wikidata_time(std::string_view value, int precision);

// TEKGEN's partial-component rule: years equal; months must agree only when both have one; days only
// when both have one.
bool dates_agree(const DateValue& a, const DateValue& b);

// "14 March 1879", "March 1879", "1879", "300 BC", "14 March 300 BC".
std::string format_date_en(const DateValue& d);

// "1879-03-14", "1879-03", "1879"; years padded to 4 digits, BC years negative: "-0300".
std::string format_date_iso(const DateValue& d);

// The number of days month (1-12) can have, February 29 included; 0 for other months.
int days_in_month(int month);

}  // namespace kglm::text
