// The sentence TSV and RELX readers on hand-written files: named columns, pairs, markers taken out
// with the entities' bytes (RELX's own records, an empty entity), bad records skipped as FILE:LINE,
// files of only bad records refused. The WiC reader on the real WiC sample (tests/data/wic), in WiC's
// layout and rewritten in XL-WiC's, and the wic task's encoding of the word in both sentences.
#include "train/tasks/example_readers.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "../../unit/test_paths.hpp"
#include "nn/model_config.hpp"
#include "tok/tokenizer.hpp"
#include "train/tasks/task_data.hpp"

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

const std::string kWicDev = ::kglm::test::source_dir() + "/tests/data/wic/dev.data.txt";

// The WiC dev set: 638 pairs, labels from dev.gold.txt, each word where its index says.
TEST(Wic, ReadsWicWithItsGoldFile) {
  ErrorCounter errors(ErrorLimit{});
  const std::vector<WicExample> w = read_wic(kWicDev, errors);
  ASSERT_EQ(w.size(), 638u);
  EXPECT_EQ(errors.count(), 0u);
  size_t same = 0;
  for (const WicExample& e : w) {
    ASSERT_TRUE(e.label == "true" || e.label == "false");
    same += e.label == "true";
    EXPECT_TRUE(e.begin1 == 0 || e.sentence1[e.begin1 - 1] == ' ');
    EXPECT_NE(e.sentence1[e.begin1], ' ');
  }
  EXPECT_EQ(same, 319u);  // WiC's dev set is balanced
  // The first line: "board N 2-1 ..." — word 2 of the first example, word 1 of the second.
  EXPECT_EQ(w[0].line, 1u);
}

// The same pairs in XL-WiC's layout (character spans, 1/0 labels), with and without the label column.
TEST(Wic, ReadsXlWicLayout) {
  ErrorCounter errors(ErrorLimit{});
  const std::vector<WicExample> wic = read_wic(kWicDev, errors);
  ScratchDir dir;
  std::string nine, eight, gold;
  auto chars = [](const std::string& s, size_t bytes) {
    size_t n = 0;
    for (size_t i = 0; i < bytes; ++i) n += (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
    return std::to_string(n);
  };
  for (const WicExample& e : wic) {
    const std::string row = e.word + "\tN\t" + chars(e.sentence1, e.begin1) + "\t" + chars(e.sentence1, e.begin1 + 1) +
                            "\t" + chars(e.sentence2, e.begin2) + "\t" + chars(e.sentence2, e.begin2 + 1) + "\t" +
                            e.sentence1 + "\t" + e.sentence2;
    nine += row + "\t" + (e.label == "true" ? "1" : "0") + "\n";
    eight += row + "\n";
    gold += std::string(e.label == "true" ? "1" : "0") + "\n";
  }
  const std::vector<WicExample> a = read_wic(dir.write("en_dev.txt", nine), errors);
  dir.write("en_test_gold.txt", gold);
  const std::vector<WicExample> b = read_wic(dir.write("en_test_data.txt", eight), errors);
  const std::vector<WicExample> c = read_wic(dir.write("unlabelled.txt", eight), errors);
  ASSERT_EQ(a.size(), wic.size());
  ASSERT_EQ(b.size(), wic.size());
  for (size_t i = 0; i < wic.size(); ++i) {
    EXPECT_EQ(a[i].begin1, wic[i].begin1);
    EXPECT_EQ(a[i].begin2, wic[i].begin2);
    EXPECT_EQ(a[i].label, wic[i].label);
    EXPECT_EQ(b[i].label, wic[i].label);
    EXPECT_EQ(c[i].label, "");  // no gold file beside it
  }
  EXPECT_EQ(errors.count(), 0u);
  // Bad lines cost themselves: a span outside its sentence, a bad label, a short line, a bad index.
  const std::string bad = dir.write("bad.txt",
                                    "bank\tN\t0\t4\t0\t4\tbank one\tbank two\t1\n"
                                    "bank\tN\t90\t94\t0\t4\tbank one\tbank two\t1\n"
                                    "bank\tN\t0\t4\t0\t4\tbank one\tbank two\tyes\n"
                                    "bank\tN\t0\t4\tbank one\n"
                                    "bank\tN\tx\t4\t0\t4\tbank one\tbank two\t0\n");
  EXPECT_EQ(read_wic(bad, errors).size(), 1u);
  EXPECT_EQ(errors.count(), 4u);
  EXPECT_THROW(read_wic(dir.write("allbad.txt", "a\tb\n"), errors), Error);
}

// Every dev pair encoded for an XLM-R model: e1 and e2 are the word's first token in each sentence
// (the token's piece spells the start of the word), also when the pair is cut to --max-len.
TEST(Wic, EncodingPointsAtTheWordInBothSentences) {
  const std::string spm = ::kglm::test::fixture("tokenizer/spm-test-vocab1000.model");
  if (!std::filesystem::exists(spm)) GTEST_SKIP() << spm << " not found";
  const auto tokenizer = tok::load_tokenizer(spm);
  for (nn::Architecture arch : {nn::Architecture::XlmRoberta, nn::Architecture::Bert}) {
    const nn::ModelConfig config = nn::default_config(arch, tokenizer->vocab_size());
    ErrorCounter errors(ErrorLimit{});
    const TaskData data = read_task_data(TaskKind::wic, kWicDev, "en", {}, errors);
    const LabelSet labels = LabelSet::from_data(data);
    ASSERT_EQ(labels.names(), (std::vector<std::string>{"false", "true"}));
    EncodeReport report;
    const std::vector<EncodedExample> enc = encode_task_data(data, labels, *tokenizer, config, 128, report);
    ASSERT_EQ(enc.size(), data.size());
    // The token's piece, without SentencePiece's word mark, begins the word; a bare mark (the word's
    // first token when SentencePiece splits it off, as the token task's first sub-token) is followed
    // by the token that does.
    auto spells = [&](const EncodedExample& e, int32_t at, const std::string& sentence, size_t begin) {
      for (int32_t t = at; t <= at + 1; ++t) {
        if (e.ids[static_cast<size_t>(t)] == tokenizer->special().unk) return true;  // nothing to spell
        std::string piece = tokenizer->piece(e.ids[static_cast<size_t>(t)]);
        if (piece.starts_with("\xe2\x96\x81")) piece = piece.substr(3);
        if (!piece.empty()) return sentence.compare(begin, piece.size(), piece) == 0;
      }
      return false;
    };
    size_t checked = 0;
    for (size_t i = 0; i < enc.size(); ++i) {
      const EncodedExample& e = enc[i];
      const WicExample& w = data.wic[i];
      ASSERT_GT(e.e1, 0);
      ASSERT_GT(e.e2, e.e1);
      ASSERT_LT(static_cast<size_t>(e.e2), e.ids.size() - 1);
      EXPECT_TRUE(spells(e, e.e1, w.sentence1, w.begin1)) << i;
      EXPECT_TRUE(spells(e, e.e2, w.sentence2, w.begin2)) << i;
      EXPECT_EQ(e.label, labels.id(w.label));
      ++checked;
    }
    EXPECT_GT(checked, 600u);
    EXPECT_EQ(report.entities_cut, 0u);
    // Cut to 24 tokens: a word past the cut stands at its segment's last kept token, counted.
    EncodeReport cut;
    const std::vector<EncodedExample> short_enc = encode_task_data(data, labels, *tokenizer, config, 24, cut);
    EXPECT_GT(cut.entities_cut, 0u);
    for (const EncodedExample& e : short_enc) {
      EXPECT_LE(e.ids.size(), 24u);
      EXPECT_LT(e.e1, e.e2);
    }
  }
}

}  // namespace
}  // namespace kglm::train::tasks
