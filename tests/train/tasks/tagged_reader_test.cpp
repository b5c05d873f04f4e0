// The PAN-X and CoNLL readers on hand-written files: sentences, colons inside words, -DOCSTART-,
// any tag column, LANG=PATH, CRLF and compressed input; bad lines reported as FILE:LINE with their
// sentence skipped; a file of only bad lines refused.
#include "train/tasks/tagged_reader.hpp"

#include <gtest/gtest.h>

#include "../../unit/test_paths.hpp"

namespace kglm::train::tasks {
namespace {

using ::kglm::test::ScratchDir;

TEST(TaggedReader, PanX) {
  ScratchDir dir;
  const std::string path = dir.write("en.tsv",
                                     "en:Paris\tB-LOC\nen:is\tO\nen:nice\tO\n\n"
                                     "en:http://x.org\tO\r\nen:New\tB-ORG\r\nen:York:Times\tI-ORG\r\n\n\n");
  ErrorCounter errors(ErrorLimit{});
  const std::vector<TaggedSentence> s = read_tagged(path, {}, errors);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].words, (std::vector<std::string>{"Paris", "is", "nice"}));
  EXPECT_EQ(s[0].tags, (std::vector<std::string>{"B-LOC", "O", "O"}));
  EXPECT_EQ(s[0].lang, "en");
  EXPECT_EQ(s[0].line, 1u);
  EXPECT_EQ(s[1].words, (std::vector<std::string>{"http://x.org", "New", "York:Times"}));  // the first colon only
  EXPECT_EQ(s[1].tags.back(), "I-ORG");
  EXPECT_EQ(s[1].line, 5u);
  EXPECT_EQ(errors.count(), 0u);
  TaggedReadOptions sw;
  sw.lang = "sw";
  EXPECT_EQ(read_tagged(path, sw, errors)[1].lang, "sw");
}

TEST(TaggedReader, ConllColumns) {
  ScratchDir dir;
  const std::string path = dir.write("train.txt",
                                     "-DOCSTART- -X- -X- O\n\n"
                                     "EU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\n"
                                     "Peter NNP B-NP B-PER\tX\n");
  ErrorCounter errors(ErrorLimit{});
  TaggedReadOptions o;
  o.format = TaggedFormat::conll;
  o.tag_column = 3;
  const std::vector<TaggedSentence> s = read_tagged(path, o, errors);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].words, (std::vector<std::string>{"EU", "rejects"}));
  EXPECT_EQ(s[0].tags, (std::vector<std::string>{"B-ORG", "O"}));
  EXPECT_EQ(s[1].tags, (std::vector<std::string>{"B-PER"}));  // column 3, not the last
  o.tag_column = -1;
  EXPECT_EQ(read_tagged(path, o, errors)[1].tags, (std::vector<std::string>{"X"}));
  o.tag_column = -2;
  EXPECT_EQ(read_tagged(path, o, errors)[0].tags, (std::vector<std::string>{"B-NP", "B-VP"}));
}

TEST(TaggedReader, BadLinesSkipTheirSentence) {
  ScratchDir dir;
  const std::string path = dir.write("bad.tsv",
                                     "en:Good\tO\n\n"
                                     "en:Fine\tO\nno tab here\nen:Lost\tO\n\n"
                                     "nocolon\tO\n\n"
                                     "en:Two\tB-PER I-PER\n\n"
                                     "en:Kept\tB-PER\n");
  ErrorCounter errors(ErrorLimit{});
  const std::vector<TaggedSentence> s = read_tagged(path, {}, errors);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].words, (std::vector<std::string>{"Good"}));
  EXPECT_EQ(s[1].words, (std::vector<std::string>{"Kept"}));
  EXPECT_EQ(errors.count(), 3u);  // lines 4, 7 and 9
  const std::string only_bad = dir.write("only-bad.tsv", "a b c\n\nd e f\n");
  EXPECT_THROW(read_tagged(only_bad, {}, errors), Error);
  TaggedReadOptions conll;
  conll.format = TaggedFormat::conll;
  EXPECT_THROW(read_tagged(dir.write("one-column.txt", "word\n"), conll, errors), Error);
}

TEST(TaggedReader, RefusesWhatIsNotText) {
  ScratchDir dir;
  ErrorCounter errors(ErrorLimit{});
  EXPECT_THROW(read_tagged(dir.write("bin", std::string("\0\1\2\3\0\0binary", 12)), {}, errors), Error);
  EXPECT_THROW(read_tagged(dir.file("missing.tsv"), {}, errors), Error);
  EXPECT_TRUE(read_tagged(dir.write("empty.tsv", ""), {}, errors).empty());
}

}  // namespace
}  // namespace kglm::train::tasks
