// Documents: JSON and plain round trips, WikiExtractor input, sentence splitting.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "text/document.hpp"
#include "text/sentence_splitter.hpp"
#include "text/wikiextractor_input.hpp"
#include "text/wikitext.hpp"

using namespace kglm::text;

namespace {

Document sample() {
  Document d;
  d.id = "12";
  d.title = "Sample \"quoted\"";
  clean_wikitext(
      "Dr. Smith met [[[Albert Einstein|Einstein]]] in [[Washington, D.C.|Washington D.C.]] in 1921. He "
      "liked [[München]]. Tab\tand \"quotes\".\n\n== Life ==\nBorn in [[Ulm]]. Died in [[Princeton, New Jersey|"
      "Princeton. N.J.]] in 1955.",
      CleanOptions{}, d);
  return d;
}

}  // namespace

TEST(Document, JsonRoundTrip) {
  Document d = sample();
  std::string line;
  append_document_json(line, d);
  ASSERT_EQ(line.back(), '\n');
  line.pop_back();
  EXPECT_EQ(parse_document_json(line), d);
}

TEST(Document, JsonRejectsBadSpans) {
  EXPECT_THROW(
      parse_document_json(R"({"id":"1","title":"t","text":"ab","links":[[0,3,"X"]],"sections":[],"root_end":2})"),
      kglm::Error);
  EXPECT_THROW(
      parse_document_json(R"({"id":"1","title":"t","text":"é","links":[[0,1,"X"]],"sections":[],"root_end":2})"),
      kglm::Error);
  EXPECT_THROW(parse_document_json(R"({"id":"1","title":"t","text":"ab","links":[],"sections":[]})"), kglm::Error);
}

TEST(Document, PlainRoundTrip) {
  Document d = sample();
  std::string plain;
  append_linked_text(plain, d.text, d.links, 0, static_cast<uint32_t>(d.text.size()));
  EXPECT_NE(plain.find("[[Albert Einstein|Einstein]]"), std::string::npos);
  Document back;
  parse_linked_text(plain, back);
  EXPECT_EQ(back.text, d.text);
  EXPECT_EQ(back.links, d.links);
  std::string doc;
  append_document_plain(doc, d);
  EXPECT_EQ(doc.rfind("<doc id=\"12\" title=\"Sample &quot;quoted&quot;\">\n", 0), 0u);
}

TEST(Document, WikiExtractorInput) {
  Document d = parse_wikiextractor_record(
      R"({"id": "7", "url": "https://en.wikipedia.org/wiki?curid=7", "title": "T", "text": "The <a href=\"dog%20show\">dog</a>s of <a href=\"AT%26T\">AT&amp;T</a> &lt;3.\nSecond paragraph."})");
  EXPECT_EQ(d.id, "7");
  EXPECT_EQ(d.text, "The dogs of AT&T <3.\nSecond paragraph.");
  ASSERT_EQ(d.links.size(), 2u);
  EXPECT_EQ(d.text.substr(d.links[0].begin, d.links[0].end - d.links[0].begin), "dogs");
  EXPECT_EQ(d.links[0].target, "Dog show");
  EXPECT_EQ(d.links[1].target, "AT&T");
  EXPECT_EQ(d.root_end, d.text.find('\n'));
  EXPECT_THROW(parse_wikiextractor_record(R"({"id": "7", "text": "x"})"), kglm::Error);
  EXPECT_THROW(parse_wikiextractor_record("{not json"), kglm::Error);
}

TEST(SentenceSplitter, AbbreviationsDoNotSwallowWordEndings) {
  Document d;
  d.text = "He lives in Africa. He likes it. The company is Acme Co. in Ohio.";
  SentenceSplitter splitter("en");
  std::vector<Sentence> sentences;
  splitter.split(d, sentences);
  ASSERT_EQ(sentences.size(), 3u);
  EXPECT_EQ(d.text.substr(sentences[0].begin, sentences[0].end - sentences[0].begin), "He lives in Africa.");
}

TEST(SentenceSplitter, NeverInsideLinksAndKeepsAbbreviations) {
  Document d = sample();
  SentenceSplitter splitter("en");
  std::vector<Sentence> sentences;
  splitter.split(d, sentences);
  std::vector<std::string> texts;
  for (const Sentence& s : sentences) texts.push_back(d.text.substr(s.begin, s.end - s.begin));
  ASSERT_EQ(texts.size(), 5u) << ::testing::PrintToString(texts);
  EXPECT_EQ(texts[0], "Dr. Smith met [Einstein] in Washington D.C. in 1921.");
  EXPECT_EQ(texts[1], "He liked München.");
  EXPECT_EQ(texts[3], "Born in Ulm.");
  EXPECT_EQ(texts[4], "Died in Princeton. N.J. in 1955.");  // the boundary inside the link is refused
  EXPECT_EQ(sentences[0].section, -1);
  EXPECT_EQ(sentences[3].section, 0);
  EXPECT_EQ(sentences[0].last_link - sentences[0].first_link, 2u);
  EXPECT_EQ(sentences[4].last_link - sentences[4].first_link, 1u);
  for (const Link& l : d.links) {
    int containing = 0;
    for (const Sentence& s : sentences) containing += s.begin <= l.begin && l.end <= s.end;
    EXPECT_EQ(containing, 1) << l.target;
  }
}
