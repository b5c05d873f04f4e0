// The sentence TSV and RELX readers on hand-written files: named columns, pairs, markers taken out
// with the entities' bytes (RELX's own records, an empty entity), bad records skipped as FILE:LINE,
// files of only bad records refused.
#include "train/tasks/example_readers.hpp"

#include <gtest/gtest.h>

#include "../../unit/test_paths.hpp"

namespace kglm::train::tasks {
namespace {

using ::kglm::test::ScratchDir;

std::string entity(const RelationExample& r, int e) {
  return e == 1 ? r.text.substr(r.e1_begin, r.e1_end - r.e1_begin) : r.text.substr(r.e2_begin, r.e2_end - r.e2_begin);
}

TEST(SentenceTsv, NamedColumnsAndPairs) {
  ScratchDir dir;
  const std::string path = dir.write("pawsx.tsv",
                                     "id\tsentence1\tsentence2\tlabel\r\n"
                                     "1\tA cat.\tA feline.\t1\r\n\n"
                                     "2\tshort\n"
                                     "3\tRain.\t\t0\n"
                                     "4\tSun.\tMoon.\t0\n");
  ErrorCounter errors(ErrorLimit{});
  const std::vector<SentenceExample> pairs = read_sentence_tsv(path, {"sentence1", "sentence2", "label"}, errors);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].text, "A cat.");
  EXPECT_EQ(pairs[0].pair, "A feline.");
  EXPECT_EQ(pairs[0].label, "1");
  EXPECT_EQ(pairs[1].line, 6u);
  EXPECT_EQ(errors.count(), 2u);  // too few columns; an empty pair
  const std::vector<SentenceExample> single = read_sentence_tsv(path, {"sentence1", "", "label"}, errors);
  EXPECT_EQ(single.size(), 3u);  // line 5's pair column is not read
  EXPECT_THROW(read_sentence_tsv(path, {"premise", "", "label"}, errors), Error);
  EXPECT_THROW(read_sentence_tsv(dir.write("bad.tsv", "sentence1\tlabel\nonly\n"), {}, errors), Error);
}

TEST(SentenceTsv, NumberedColumnsReadAFileWithoutHeader) {
  ScratchDir dir;
  const std::string path = dir.write("xnli.tsv",
                                     "A man sleeps.\tNobody sleeps.\tcontradiction\n"
                                     "Short\n"
                                     "Two dogs.\tDogs.\tentailment\textra\n");
  ErrorCounter errors(ErrorLimit{});
  const std::vector<SentenceExample> pairs = read_sentence_tsv(path, {"1", "2", "3"}, errors);
  ASSERT_EQ(pairs.size(), 2u);  // the first line is a record, not a header
  EXPECT_EQ(pairs[0].text, "A man sleeps.");
  EXPECT_EQ(pairs[0].pair, "Nobody sleeps.");
  EXPECT_EQ(pairs[0].label, "contradiction");
  EXPECT_EQ(pairs[0].line, 1u);
  EXPECT_EQ(pairs[1].line, 3u);
  EXPECT_EQ(errors.count(), 1u);  // line 2: one column, 3 expected
  const std::vector<SentenceExample> swapped = read_sentence_tsv(path, {"2", "1", "3"}, errors);
  EXPECT_EQ(swapped[1].text, "Dogs.");
  EXPECT_THROW(read_sentence_tsv(path, {"1", "sentence2", "3"}, errors), UsageError);
  EXPECT_THROW(read_sentence_tsv(path, {"0", "2", "3"}, errors), UsageError);
}

TEST(MarkedSentence, MarkersComeOutAndSpansPointAtTheEntities) {
  RelationExample r = parse_marked_sentence(
      "\"The <e1> Sacramento Heatwave </e1> is a team based in Sacramento <e2> California </e2>.\"");
  EXPECT_EQ(r.text, "The Sacramento Heatwave is a team based in Sacramento California.");
  EXPECT_EQ(entity(r, 1), "Sacramento Heatwave");
  EXPECT_EQ(entity(r, 2), "California");
  r = parse_marked_sentence("<e1> Viva </e1> is the brand name for the <e2> York Region </e2> Rapid Transit Plan");
  EXPECT_EQ(r.text, "Viva is the brand name for the York Region Rapid Transit Plan");
  EXPECT_EQ(entity(r, 1), "Viva");
  EXPECT_EQ(r.e1_begin, 0u);
  r = parse_marked_sentence("Education ( <e2> SIMSREE </e2> ) and <e1> Polydor </e1> 's beliefs");
  EXPECT_EQ(r.text, "Education ( SIMSREE ) and Polydor 's beliefs");
  EXPECT_EQ(entity(r, 2), "SIMSREE");
  EXPECT_EQ(entity(r, 1), "Polydor");
  r = parse_marked_sentence("Sehgal received the <e1> </e1> Prize at Art <e2> Basel </e2> Switzerland in 2004.");
  EXPECT_EQ(r.text, "Sehgal received the Prize at Art Basel Switzerland in 2004.");
  EXPECT_EQ(r.e1_begin, r.e1_end);  // RELX has an empty entity: kept, at its place
  EXPECT_EQ(entity(r, 2), "Basel");
  for (const char* bad : {"no markers", "<e1> a </e1> b", "<e1> a <e2> b </e2> </e1>", "</e1> a <e1> <e2> b </e2>",
                          "<e1> a </e1> <e1> b </e1> <e2> c </e2>"})
    EXPECT_THROW(parse_marked_sentence(bad), Error) << bad;
}

TEST(Relx, RecordsBadRecordsAndRefusal) {
  ScratchDir dir;
  const std::string path =
      dir.write("RELX_en.txt",
                "17647\t\"The <e1> Sacramento Heatwave </e1> is based in <e2> California </e2>.\"\n"
                "org:stateorprovince_of_headquarters(e1,e2)\n\n\n"
                "17648\t\"<e1> no second entity </e1>.\"\n"
                "no_relation\n\n\n"
                "17649\t\"<e1> A </e1> and <e2> B </e2>\"\n\n\n"
                "17650\t\"<e2> C </e2> met <e1> D </e1>\"\n"
                "per:spouse(e2,e1)\n");
  ErrorCounter errors(ErrorLimit{});
  const std::vector<RelationExample> r = read_relx(path, errors);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].id, "17647");
  EXPECT_EQ(r[0].label, "org:stateorprovince_of_headquarters(e1,e2)");
  EXPECT_EQ(entity(r[0], 2), "California");
  EXPECT_EQ(r[1].label, "per:spouse(e2,e1)");
  EXPECT_EQ(entity(r[1], 1), "D");
  EXPECT_EQ(r[1].line, 12u);
  EXPECT_EQ(errors.count(), 2u);  // line 5's one entity; line 9 without its relation
  EXPECT_THROW(read_relx(dir.write("bad.txt", "1\t\"x\"\nno_relation\n"), errors), Error);
}

TEST(Relx, SemEvalCommentLinesAreNotRecords) {
  ScratchDir dir;
  const std::string path =
      dir.write("TRAIN_FILE.TXT",
                "8001\t\"The most common <e1>audits</e1> were about <e2>waste</e2> and recycling.\"\n"
                "Message-Topic(e1,e2)\n"
                "Comment: Assuming an audit = an audit document.\n\n"
                "8002\t\"The <e1>company</e1> fabricates plastic <e2>chairs</e2>.\"\n"
                "Product-Producer(e2,e1)\n"
                "Comment:\n\n");
  ErrorCounter errors(ErrorLimit{});
  const std::vector<RelationExample> r = read_relx(path, errors);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(errors.count(), 0u);
  EXPECT_EQ(entity(r[0], 1), "audits");
  EXPECT_EQ(r[1].label, "Product-Producer(e2,e1)");
}

}  // namespace
}  // namespace kglm::train::tasks
