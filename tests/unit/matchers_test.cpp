// The date and quantity matchers of kg-align: Wikipedia's ways of writing dates and numbers, one
// sentence per row, and Wikidata's time and amount values.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "text/dates.hpp"
#include "text/numbers.hpp"

using namespace kglm::text;

namespace {

struct ExpectedDate {
  std::string text;
  int64_t year;
  int month;
  int day;
};

struct DateCase {
  std::string sentence;
  std::vector<ExpectedDate> dates;
};

// One line per mention, so that a failing row shows the whole difference at once.
std::string render(const std::string& text, int64_t year, int month, int day) {
  return "[" + text + "] " + std::to_string(year) + "/" + std::to_string(month) + "/" + std::to_string(day) + "\n";
}

std::string render_found(std::string_view sentence) {
  std::vector<DateMention> mentions;
  find_dates(sentence, mentions);
  std::string out;
  for (const DateMention& m : mentions) {
    EXPECT_LT(m.begin, m.end);
    EXPECT_LE(m.end, sentence.size());
    out += render(std::string(sentence.substr(m.begin, m.end - m.begin)), m.date.year, m.date.month, m.date.day);
  }
  return out;
}

std::string render_expected(const std::vector<ExpectedDate>& dates) {
  std::string out;
  for (const ExpectedDate& d : dates) out += render(d.text, d.year, d.month, d.day);
  return out;
}

const std::vector<DateCase>& date_cases() {
  static const std::vector<DateCase> cases = {
      // Day-month-year, the form of most English Wikipedia biographies.
      {"Albert Einstein (14 March 1879 – 18 April 1955) was a physicist.",
       {{"14 March 1879", 1879, 3, 14}, {"18 April 1955", 1955, 4, 18}}},
      {"On 4 July 1776, the Declaration was adopted.", {{"4 July 1776", 1776, 7, 4}}},
      {"1 January 2000 was a Saturday.", {{"1 January 2000", 2000, 1, 1}}},
      {"The treaty was signed on 1st May 1924.", {{"1st May 1924", 1924, 5, 1}}},
      {"The armistice of 11th November 1918 ended the war.", {{"11th November 1918", 1918, 11, 11}}},
      {"It ended on the 3rd of July 1863.", {{"3rd of July 1863", 1863, 7, 3}}},
      {"He was born 29 February 1896 in Paris.", {{"29 February 1896", 1896, 2, 29}}},
      {"Released on 02 June 1990.", {{"02 June 1990", 1990, 6, 2}}},
      // Month-day-year, the American form, with and without the comma.
      {"He was born on March 14, 1879, in Ulm.", {{"March 14, 1879", 1879, 3, 14}}},
      {"On March 14 1879 he was born.", {{"March 14 1879", 1879, 3, 14}}},
      {"Apollo 11 landed on July 20, 1969.", {{"July 20, 1969", 1969, 7, 20}}},
      {"(born June 1, 1950) is an actor.", {{"June 1, 1950", 1950, 6, 1}}},
      {"It opened on October 3rd, 1990.", {{"October 3rd, 1990", 1990, 10, 3}}},
      // Abbreviations, with and without the dot.
      {"Released on Sept. 14, 1999.", {{"Sept. 14, 1999", 1999, 9, 14}}},
      {"Released on Sep 14, 1999.", {{"Sep 14, 1999", 1999, 9, 14}}},
      {"Dec. 7, 1941 is a date which will live in infamy.", {{"Dec. 7, 1941", 1941, 12, 7}}},
      {"Published in Jan. 2001 and Feb 2002.", {{"Jan. 2001", 2001, 1, 0}, {"Feb 2002", 2002, 2, 0}}},
      {"Filmed 5 Aug 1962 and 9 Oct. 1963.", {{"5 Aug 1962", 1962, 8, 5}, {"9 Oct. 1963", 1963, 10, 9}}},
      // Month and year, year alone.
      {"In May 1968, students protested.", {{"May 1968", 1968, 5, 0}}},
      {"The company was founded in 1998.", {{"1998", 1998, 0, 0}}},
      {"1879", {{"1879", 1879, 0, 0}}},
      {"Between 1870 and 1871 Paris was besieged.", {{"1870", 1870, 0, 0}, {"1871", 1871, 0, 0}}},
      {"He scored 25 goals in 2010.", {{"2010", 2010, 0, 0}}},
      {"Built c.1500 and rebuilt c. 1650.", {{"1500", 1500, 0, 0}, {"1650", 1650, 0, 0}}},
      {"The Mayor met him in 1924.", {{"1924", 1924, 0, 0}}},
      {"After 1968's riots and 1968’s strikes.", {{"1968", 1968, 0, 0}, {"1968", 1968, 0, 0}}},
      {"Mar del Plata hosted it in 1978.", {{"1978", 1978, 0, 0}}},
      // ISO dates.
      {"The version released 2021-06-30 fixed it.", {{"2021-06-30", 2021, 6, 30}}},
      {"Timestamps like 1999-12-31T23:59 are ISO.", {{"1999-12-31", 1999, 12, 31}}},
      // Eras.
      {"Julius Caesar was assassinated on 15 March 44 BC.", {{"15 March 44 BC", -44, 3, 15}}},
      {"Rome was founded in 753 BC.", {{"753 BC", -753, 0, 0}}},
      {"Vesuvius erupted in AD 79.", {{"AD 79", 79, 0, 0}}},
      {"Vesuvius erupted in 79 AD, burying Pompeii.", {{"79 AD", 79, 0, 0}}},
      {"Augustus (23 September 63 BC – 19 August AD 14) was emperor.",
       {{"23 September 63 BC", -63, 9, 23}, {"19 August AD 14", 14, 8, 19}}},
      {"Nero (15 December 37 – 9 June 68) was emperor.", {{"15 December 37", 37, 12, 15}, {"9 June 68", 68, 6, 9}}},
      {"The battle took place in 490 BCE.", {{"490 BCE", -490, 0, 0}}},
      {"Around 3000 B.C. writing appeared.", {{"3000 B.C.", -3000, 0, 0}}},
      {"He reigned until 1066 CE and in A.D. 1070 died.", {{"1066 CE", 1066, 0, 0}, {"A.D. 1070", 1070, 0, 0}}},
      {"Herod died in 4BC.", {{"4BC", -4, 0, 0}}},
      {"Born in 12 BC, he died in 5 AD.", {{"12 BC", -12, 0, 0}, {"5 AD", 5, 0, 0}}},
      {"Cleopatra died in August 30 BC.", {{"August 30 BC", -30, 8, 0}}},
      // Ranges: each full year.
      {"World War I (1914–1918) ended.", {{"1914", 1914, 0, 0}, {"1918", 1918, 0, 0}}},
      {"In 1914-1918 he served.", {{"1914", 1914, 0, 0}, {"1918", 1918, 0, 0}}},
      {"The war (1914–18) ended.", {{"1914", 1914, 0, 0}}},
      {"The 2010–11 season.", {{"2010", 2010, 0, 0}}},
      {"He served 1939—1945 and pre-1900 works.", {{"1939", 1939, 0, 0}, {"1945", 1945, 0, 0}, {"1900", 1900, 0, 0}}},
      {"From 1 March 1879 to 2 April 1880.", {{"1 March 1879", 1879, 3, 1}, {"2 April 1880", 1880, 4, 2}}},
      // Non-ASCII neighbours and no-break spaces.
      {"Café 14 March 1879 naïve", {{"14 March 1879", 1879, 3, 14}}},
      {"東京 1868 では «1879» “1880”…", {{"1868", 1868, 0, 0}, {"1879", 1879, 0, 0}, {"1880", 1880, 0, 0}}},
      {"born 14\u00a0March\u00a01879 in Ulm", {{"14\u00a0March\u00a01879", 1879, 3, 14}}},
      {"on March\u00a014,\u00a01879.", {{"March\u00a014,\u00a01879", 1879, 3, 14}}},
      {"in\u00a01879\u00a0BC", {{"1879\u00a0BC", -1879, 0, 0}}},
      {"Zürich1879 and ü1879 and 1879é", {}},
      // Negatives: no date at all.
      {"He may return next year.", {}},
      {"The Mayor of London and Emily Marchant.", {}},
      {"Junes and Janet and Decembers.", {}},
      {"Music of the 1920s, the 1990's and the 1880’s.", {}},
      {"A crowd of 1,924 people; 3.1924 times; 1924.5 metres.", {}},
      {"See page 12 of the report.", {}},
      {"The festival begins on March 14 each year.", {}},
      {"On May 5 they left.", {}},
      {"He died on 30 February 1900.", {}},
      {"Dates like 31 April 1900, April 31, 1900 and 0 May 1900 do not exist.", {}},
      {"Invalid ISO 2021-13-01 and 2021-02-30 here.", {}},
      {"The 1879th meeting on a 1990km trail.", {}},
      {"Unemployment rose by 250% and 1999%.", {}},
      {"It cost $1500, £1600, €1700 or #1800.", {}},
      {"Temperatures of −273 and -450 degrees at 1200°C.", {}},
      {"Year 0 BC and 0000 do not exist; 10000 is too long; 007 has a leading zero.", {}},
      {"ISBN 0-19-852663-6", {}},
      {"march 1879 is lower-case", {{"1879", 1879, 0, 0}}},
      {"version 2.3 and A380", {}},
  };
  return cases;
}

TEST(FindDates, WikipediaSentences) {
  for (const DateCase& c : date_cases()) EXPECT_EQ(render_found(c.sentence), render_expected(c.dates)) << c.sentence;
  EXPECT_GE(date_cases().size(), 40u);
}

TEST(FindDates, OffsetsAndClearing) {
  std::vector<DateMention> mentions(3);
  const std::string text = "é (14 March 1879)";
  find_dates(text, mentions);
  ASSERT_EQ(mentions.size(), 1u);
  EXPECT_EQ(mentions[0].begin, 4u);  // "é" is two bytes
  EXPECT_EQ(mentions[0].end, 17u);
  find_dates("", mentions);
  EXPECT_TRUE(mentions.empty());
}

TEST(FindDates, FormattedDatesAreFoundAgain) {
  std::mt19937_64 rng(7);
  for (int k = 0; k < 2000; ++k) {
    DateValue d;
    d.year = static_cast<int64_t>(rng() % 9999) + 1;
    if (rng() % 4 == 0) d.year = -d.year;
    if (rng() % 3 != 0) d.month = static_cast<int>(rng() % 12) + 1;
    if (d.month != 0 && rng() % 2 == 0) d.day = static_cast<int>(rng() % days_in_month(d.month)) + 1;
    const std::string sentence = "It happened on " + format_date_en(d) + ".";
    std::vector<DateMention> mentions;
    find_dates(sentence, mentions);
    const bool written_as_year = d.year < 0 || d.year >= 100 || d.day != 0;  // "March 79" is no date
    if (!written_as_year) {
      EXPECT_TRUE(mentions.empty()) << sentence;
      continue;
    }
    ASSERT_EQ(mentions.size(), 1u) << sentence;
    EXPECT_EQ(mentions[0].date, d) << sentence;
    EXPECT_EQ(sentence.substr(mentions[0].begin, mentions[0].end - mentions[0].begin), format_date_en(d));
  }
}

TEST(WikidataTime, Precisions) {
  const std::string einstein = "+1879-03-14T00:00:00Z";
  EXPECT_EQ(parse_wikidata_time(einstein, 11), (DateValue{1879, 3, 14}));
  EXPECT_EQ(parse_wikidata_time(einstein, 14), (DateValue{1879, 3, 14}));
  EXPECT_EQ(parse_wikidata_time(einstein, 12), (DateValue{1879, 3, 14}));
  EXPECT_EQ(parse_wikidata_time(einstein, 10), (DateValue{1879, 3, 0}));
  EXPECT_EQ(parse_wikidata_time(einstein, 9), (DateValue{1879, 0, 0}));
  EXPECT_EQ(parse_wikidata_time(einstein, 8), std::nullopt);  // decade
  EXPECT_EQ(parse_wikidata_time(einstein, 7), std::nullopt);  // century
  EXPECT_EQ(parse_wikidata_time(einstein, 15), std::nullopt);
  EXPECT_EQ(parse_wikidata_time("+1879-03-14", 11), (DateValue{1879, 3, 14}));
  EXPECT_EQ(parse_wikidata_time("+1879-03-14T00:00:00", 11), (DateValue{1879, 3, 14}));
}

TEST(WikidataTime, BeforeChristAndLargeYears) {
  EXPECT_EQ(parse_wikidata_time("-0300-00-00T00:00:00Z", 9), (DateValue{-300, 0, 0}));
  EXPECT_EQ(parse_wikidata_time("-0044-03-15T00:00:00Z", 11), (DateValue{-44, 3, 15}));
  EXPECT_EQ(parse_wikidata_time("-0300-00-00T00:00:00Z", 10), std::nullopt);  // month 00 kept
  EXPECT_EQ(parse_wikidata_time("-13798000000-00-00T00:00:00Z", 3), std::nullopt);
  EXPECT_EQ(parse_wikidata_time("-13798000000-00-00T00:00:00Z", 9), (DateValue{-13798000000, 0, 0}));
  EXPECT_EQ(parse_wikidata_time("+0000-01-01T00:00:00Z", 9), std::nullopt);  // no year 0
}

TEST(WikidataTime, DaysAndGarbage) {
  EXPECT_EQ(parse_wikidata_time("+2001-02-29T00:00:00Z", 11), (DateValue{2001, 2, 29}));
  EXPECT_EQ(parse_wikidata_time("+1879-02-30T00:00:00Z", 11), std::nullopt);
  EXPECT_EQ(parse_wikidata_time("+1879-02-30T00:00:00Z", 10), (DateValue{1879, 2, 0}));  // day dropped unchecked
  EXPECT_EQ(parse_wikidata_time("+1879-13-01T00:00:00Z", 10), std::nullopt);
  EXPECT_EQ(parse_wikidata_time("+1879-00-00T00:00:00Z", 11), std::nullopt);
  for (std::string_view garbage :
       {"", "garbage", "+", "+1879", "+1879-03", "+1879-3-14T00:00:00Z", "+1879-03-14X", "+1879-03-14T00:00Z",
        "1879/03/14", "+1879-03-14T00:00:00ZZ", "++1879-03-14T00:00:00Z", "+12345678901234567-01-01T00:00:00Z"})
    EXPECT_EQ(parse_wikidata_time(garbage, 11), std::nullopt) << garbage;
}

TEST(DatesAgree, PartialComponents) {
  const DateValue day{1879, 3, 14}, month{1879, 3, 0}, year{1879, 0, 0};
  EXPECT_TRUE(dates_agree(day, year));
  EXPECT_TRUE(dates_agree(year, day));
  EXPECT_TRUE(dates_agree(day, month));
  EXPECT_TRUE(dates_agree(month, day));
  EXPECT_TRUE(dates_agree(month, year));
  EXPECT_TRUE(dates_agree(day, day));
  EXPECT_FALSE(dates_agree(day, (DateValue{1879, 3, 15})));
  EXPECT_FALSE(dates_agree(day, (DateValue{1879, 4, 0})));
  EXPECT_FALSE(dates_agree((DateValue{1879, 4, 0}), day));
  EXPECT_FALSE(dates_agree(year, (DateValue{1880, 0, 0})));
  EXPECT_FALSE(dates_agree(day, (DateValue{1880, 3, 14})));
  EXPECT_FALSE(dates_agree((DateValue{-300, 0, 0}), (DateValue{300, 0, 0})));
}

TEST(FormatDate, EnglishAndIso) {
  EXPECT_EQ(format_date_en({1879, 3, 14}), "14 March 1879");
  EXPECT_EQ(format_date_en({1879, 3, 0}), "March 1879");
  EXPECT_EQ(format_date_en({1879, 0, 0}), "1879");
  EXPECT_EQ(format_date_en({-300, 0, 0}), "300 BC");
  EXPECT_EQ(format_date_en({-300, 3, 14}), "14 March 300 BC");
  EXPECT_EQ(format_date_en({79, 8, 24}), "24 August 79");
  EXPECT_EQ(format_date_iso({1879, 3, 14}), "1879-03-14");
  EXPECT_EQ(format_date_iso({1879, 3, 0}), "1879-03");
  EXPECT_EQ(format_date_iso({1879, 0, 0}), "1879");
  EXPECT_EQ(format_date_iso({-300, 0, 0}), "-0300");
  EXPECT_EQ(format_date_iso({-44, 3, 15}), "-0044-03-15");
  EXPECT_EQ(format_date_iso({79, 8, 24}), "0079-08-24");
  EXPECT_EQ(format_date_iso({12345, 0, 0}), "12345");
  EXPECT_EQ(format_date_iso({-13798000000, 0, 0}), "-13798000000");
}

TEST(FormatDate, IsoIsFoundAgain) {
  for (const DateValue& d : {DateValue{1879, 3, 14}, DateValue{2000, 2, 29}, DateValue{1000, 12, 31}}) {
    std::vector<DateMention> mentions;
    find_dates(format_date_iso(d), mentions);
    ASSERT_EQ(mentions.size(), 1u);
    EXPECT_EQ(mentions[0].date, d);
  }
}

struct NumberCase {
  std::string sentence;
  std::vector<std::pair<std::string, std::string>> numbers;  // mention text, value
};

std::string render_numbers(std::string_view sentence) {
  std::vector<NumberMention> mentions;
  find_numbers(sentence, mentions);
  std::string out;
  for (const NumberMention& m : mentions)
    out += "[" + std::string(sentence.substr(m.begin, m.end - m.begin)) + "] " + m.value + "\n";
  return out;
}

std::string render_numbers(const std::vector<std::pair<std::string, std::string>>& numbers) {
  std::string out;
  for (const auto& [text, value] : numbers) out += "[" + text + "] " + value + "\n";
  return out;
}

const std::vector<NumberCase>& number_cases() {
  static const std::vector<NumberCase> cases = {
      {"The population was 68,042,591 in 2020.", {{"68,042,591", "68042591"}, {"2020", "2020"}}},
      {"He is 1.96 m tall.", {{"1.96", "1.96"}}},
      {"The A380 runs v2.3 of the software.", {}},
      {"Winters reach −40 °C and -5 °F.", {{"−40", "-40"}, {"-5", "-5"}}},
      {"The x-5 and a−3 are names.", {{"5", "5"}, {"3", "3"}}},
      {"World War I (1914–1918)", {{"1914", "1914"}, {"1918", "1918"}}},
      {"1914-18", {{"1914", "1914"}, {"18", "18"}}},
      {"1,23", {{"1", "1"}}},
      {"1,234,5678", {{"1,234", "1234"}}},
      {"1234,567", {{"1234", "1234"}}},
      {"1,000,00", {{"1,000", "1000"}}},
      {"a 5km walk", {{"5", "5"}}},
      {"It cost $1,234.50.", {{"1,234.50", "1234.5"}}},
      {"About 0.05 of 007 agents.", {{"0.05", "0.05"}, {"007", "7"}}},
      {"Digits 3.14.15 here", {{"3.14", "3.14"}}},
      {"It ends in 5.", {{"5", "5"}}},
      {"Built c.1500, see No.5 and Fig. 7.", {{"1500", "1500"}, {"5", "5"}, {"7", "7"}}},
      {"A .45 caliber gun.", {}},
      {"It cost $1,000,000 (£800,000).", {{"1,000,000", "1000000"}, {"800,000", "800000"}}},
      {"A 12,000-strong army.", {{"12,000", "12000"}}},
      {"The COVID-19 pandemic", {{"19", "19"}}},
      {"-0 and 50%", {{"-0", "0"}, {"50", "50"}}},
      {"café 42 naïve, ü42 and ٣4", {{"42", "42"}}},
      {"2.5e10 joules", {{"2.5", "2.5"}}},
      {"3-4 times, --7 and 1.000", {{"3", "3"}, {"4", "4"}, {"-7", "-7"}, {"1.000", "1"}}},
      {"Chapters 12, 13 and 14.", {{"12", "12"}, {"13", "13"}, {"14", "14"}}},
      {"14\u00a0March 1879", {{"14", "14"}, {"1879", "1879"}}},
      {"No numbers here.", {}},
  };
  return cases;
}

TEST(FindNumbers, WikipediaSentences) {
  for (const NumberCase& c : number_cases())
    EXPECT_EQ(render_numbers(c.sentence), render_numbers(c.numbers)) << c.sentence;
  EXPECT_GE(number_cases().size(), 25u);
}

TEST(FindNumbers, OffsetsAndClearing) {
  std::vector<NumberMention> mentions(2);
  find_numbers("é −1,500.25!", mentions);
  ASSERT_EQ(mentions.size(), 1u);
  EXPECT_EQ(mentions[0].begin, 3u);
  EXPECT_EQ(mentions[0].end, 14u);
  EXPECT_EQ(mentions[0].value, "-1500.25");
  find_numbers("none", mentions);
  EXPECT_TRUE(mentions.empty());
}

TEST(CanonicalDecimal, Valid) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"+1.960", "1.96"},
      {"+0012", "12"},
      {"-0.50", "-0.5"},
      {"-0", "0"},
      {"+0", "0"},
      {"0", "0"},
      {"000", "0"},
      {"12.", "12"},
      {".5", "0.5"},
      {"-.5", "-0.5"},
      {"−3", "-3"},
      {"1.0", "1"},
      {"+68042591", "68042591"},
      {"-1234.5000", "-1234.5"},
      {"0.000", "0"},
      {"-0.000", "0"},
      {"0.001", "0.001"},
      {"100", "100"},
      {"-100.010", "-100.01"},
  };
  for (const auto& [input, expected] : cases) EXPECT_EQ(canonical_decimal(input), std::string(expected)) << input;
}

TEST(CanonicalDecimal, Invalid) {
  for (std::string_view s : {"1.2.3", "",    "+",   ".",    "-",  "+.",  "-.", "1e5",      " 1",   "1 ",
                             "1,000", "abc", "++1", "0x10", "１", "+-1", "1-", "\xE2\x88", "1.5.", "5%"})
    EXPECT_EQ(canonical_decimal(s), std::nullopt) << s;
}

TEST(FormatAmount, ThousandsSeparators) {
  EXPECT_EQ(format_amount_en("68042591"), "68,042,591");
  EXPECT_EQ(format_amount_en("-1234.5"), "-1,234.5");
  EXPECT_EQ(format_amount_en("1.96"), "1.96");
  EXPECT_EQ(format_amount_en("0"), "0");
  EXPECT_EQ(format_amount_en("999"), "999");
  EXPECT_EQ(format_amount_en("1000"), "1,000");
  EXPECT_EQ(format_amount_en("100000"), "100,000");
  EXPECT_EQ(format_amount_en("-100"), "-100");
  EXPECT_EQ(format_amount_en("1234567.891"), "1,234,567.891");
}

TEST(FormatAmount, IsFoundAgain) {
  std::mt19937_64 rng(11);
  const auto digit = [&rng] { return static_cast<char>('0' + rng() % 10); };
  for (int k = 0; k < 5000; ++k) {
    std::string x = rng() % 3 == 0 ? "-" : "";
    if (rng() % 5 == 0) {
      x += '0';
    } else {
      x += static_cast<char>('1' + rng() % 9);
      const size_t more_digits = rng() % 15;
      for (size_t d = 0; d < more_digits; ++d) x += digit();
    }
    if (rng() % 2 == 0) {
      x += '.';
      const size_t fraction_digits = rng() % 6;
      for (size_t d = 0; d < fraction_digits; ++d) x += digit();
      x += static_cast<char>('1' + rng() % 9);
    }
    const std::optional<std::string> canonical = canonical_decimal(x);
    ASSERT_TRUE(canonical) << x;
    const std::string written = format_amount_en(*canonical);
    std::vector<NumberMention> mentions;
    find_numbers(written, mentions);
    ASSERT_EQ(mentions.size(), 1u) << written;
    EXPECT_EQ(mentions[0].value, *canonical) << written;
    EXPECT_EQ(mentions[0].begin, 0u);
    EXPECT_EQ(mentions[0].end, written.size());
  }
}

}  // namespace
