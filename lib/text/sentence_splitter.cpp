#include "text/sentence_splitter.hpp"

#include <unicode/brkiter.h>
#include <unicode/filteredbrk.h>

#include "core/error.hpp"
#include "text/break_text.hpp"
#include "text/unicode.hpp"

namespace kglm::text {

namespace {

// Titles and abbreviations common in English Wikipedia that CLDR's suppression list lacks. ICU
// matches them as word endings ("ca." would keep "Africa. He" together), so only forms that end no
// common word belong here.
constexpr const char* kEnglishAbbreviations[] = {
    "Dr.",  "St.",  "Mt.",   "Ft.",   "Gen.", "Col.", "Lt.",  "Sgt.",  "Capt.", "Gov.",    "Sen.",
    "Rep.", "Rev.", "Hon.",  "Fr.",   "Sr.",  "No.",  "Nos.", "Vol.",  "vs.",   "approx.", "Inc.",
    "Ltd.", "Co.",  "Corp.", "Bros.", "Jan.", "Feb.", "Aug.", "Sept.", "Oct.",  "Nov.",    "Dec."};

}  // namespace

SentenceSplitter::SentenceSplitter(const std::string& locale) {
  UErrorCode status = U_ZERO_ERROR;
  icu::Locale where(locale.c_str());
  // The builder starts from CLDR's sentence-break suppressions for the locale ("Mr.", "U.S.").
  std::unique_ptr<icu::FilteredBreakIteratorBuilder> builder(
      icu::FilteredBreakIteratorBuilder::createInstance(where, status));
  if (U_SUCCESS(status) && std::string(where.getLanguage()) == "en") {
    for (const char* abbreviation : kEnglishAbbreviations)
      builder->suppressBreakAfter(icu::UnicodeString::fromUTF8(abbreviation), status);
  }
  if (U_SUCCESS(status))
    iterator_.reset(builder->wrapIteratorWithFilter(icu::BreakIterator::createSentenceInstance(where, status), status));
  if (U_FAILURE(status) || !iterator_)
    throw Error("ICU sentence break iterator for locale '" + locale + "': " + u_errorName(status));
}

SentenceSplitter::~SentenceSplitter() = default;

void SentenceSplitter::split(const Document& doc, std::vector<Sentence>& out) {
  out.clear();
  const std::string& text = doc.text;
  if (text.empty()) return;
  const BreakText bound(*iterator_, text, "sentence splitting");
  size_t link = 0;
  size_t section = 0;
  uint32_t begin = 0;
  for (int32_t b = iterator_->next(); b != icu::BreakIterator::DONE; b = iterator_->next()) {
    uint32_t boundary = static_cast<uint32_t>(b);
    // Links are sorted: skip those that end before the boundary, then refuse one inside a link.
    while (link < doc.links.size() && doc.links[link].end <= boundary) ++link;
    if (link < doc.links.size() && doc.links[link].begin < boundary && boundary < text.size()) continue;
    std::string_view piece = trim(std::string_view(text).substr(begin, boundary - begin));
    if (!piece.empty()) {
      Sentence s;
      s.begin = static_cast<uint32_t>(piece.data() - text.data());
      s.end = s.begin + static_cast<uint32_t>(piece.size());
      while (section + 1 < doc.sections.size() && doc.sections[section + 1].begin <= s.begin) ++section;
      bool in_section = !doc.sections.empty() && s.begin >= doc.root_end && doc.sections[section].begin <= s.begin;
      s.section = in_section ? static_cast<int>(section) : -1;
      s.first_link = static_cast<uint32_t>(out.empty() ? 0 : out.back().last_link);
      while (s.first_link < doc.links.size() && doc.links[s.first_link].begin < s.begin) ++s.first_link;
      s.last_link = s.first_link;
      while (s.last_link < doc.links.size() && doc.links[s.last_link].end <= s.end) ++s.last_link;
      out.push_back(s);
    }
    begin = boundary;
  }
}

}  // namespace kglm::text
