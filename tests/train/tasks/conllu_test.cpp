// The CoNLL-U reader: words, multiword-token ranges and empty nodes (kept as lines, left out of the
// words), comments, HEAD "_" and CRLF; each kind of bad line reported as FILE:LINE with its sentence
// skipped; a file of only bad sentences refused; the writer's replacement of UPOS/HEAD/DEPREL; and
// the fixtures' UD treebanks read whole (their counts as the fixtures' README gives them) and
// written back byte for byte.
#include "train/tasks/conllu.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "../../unit/test_paths.hpp"
#include "core/input_stream.hpp"

namespace kglm::train::tasks {
namespace {

using ::kglm::test::ScratchDir;

constexpr const char* kSentence =
    "# sent_id = 1\n"
    "# text = Della casa.\n"
    "1-2\tDella\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tDi\tdi\tADP\tE\t_\t3\tcase\t_\t_\n"
    "2\tla\til\tDET\tRD\tDefinite=Def\t3\tdet\t_\t_\n"
    "3\tcasa\tcasa\tNOUN\tS\t_\t0\troot\t_\tSpaceAfter=No\n"
    "3.1\tè\tessere\tAUX\t_\t_\t_\t_\t3:cop\t_\n"
    "4\t.\t.\tPUNCT\tFS\t_\t3\tpunct:x\t_\t_\n";

TEST(Conllu, WordsRangesAndEmptyNodes) {
  const ConlluSentence s = parse_conllu_sentence(kSentence);
  ASSERT_EQ(s.words.size(), 4u);
  EXPECT_EQ(s.lines.size(), 8u);
  EXPECT_EQ(s.words[0].form, "Di");
  EXPECT_EQ(s.words[1].feats, "Definite=Def");
  EXPECT_EQ(s.words[2].head, 0);
  EXPECT_EQ(s.words[2].misc, "SpaceAfter=No");
  EXPECT_EQ(s.words[3].form, ".");  // the empty node 3.1 is not a word
  EXPECT_EQ(s.words[3].head, 3);
  EXPECT_EQ(s.universal_deprel(3), "punct");
  EXPECT_EQ(s.word_lines, (std::vector<uint32_t>{3, 4, 5, 7}));
  EXPECT_EQ(write_conllu_sentence(s), std::string(kSentence) + "\n");
  ConlluReplacement r;
  r.heads = {3, 1, 0, 3};
  r.deprels = {"case", "det", "root", "punct"};
  const std::string written = write_conllu_sentence(s, r);
  EXPECT_NE(written.find("2\tla\til\tDET\tRD\tDefinite=Def\t1\tdet\t_\t_\n"), std::string::npos) << written;
  EXPECT_NE(written.find("1-2\tDella\t_"), std::string::npos);
  EXPECT_NE(written.find("3.1\tè\tessere\tAUX\t_\t_\t_\t_\t3:cop"), std::string::npos);
  r = {};
  r.upos = {"X", "X", "X", "X"};
  EXPECT_NE(write_conllu_sentence(s, r).find("4\t.\t.\tX\tFS"), std::string::npos);
  EXPECT_TRUE(looks_like_conllu(kSentence));
  EXPECT_FALSE(looks_like_conllu("en:Paris\tB-LOC\n"));
}

TEST(Conllu, UnannotatedHeads) {
  const ConlluSentence s = parse_conllu_sentence("1\tHi\t_\t_\t_\t_\t_\t_\t_\t_\n2\t!\t_\t_\t_\t_\t_\t_\t_\t_\n");
  EXPECT_EQ(s.words[0].head, kNoHead);
  EXPECT_EQ(s.words[1].head, kNoHead);
}

TEST(Conllu, EachBadLineIsReportedWhereItIs) {
  const std::string word1 = "1\ta\t_\tX\t_\t_\t0\troot\t_\t_\n";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"1\ta\t_\tX\t_\t_\t0\troot\t_\n", "10 TAB-separated columns"},
      {"1\ta\t_\tX\t_\t_\t0\troot\t_\t_\t_\n", "got 11"},
      {"1\t\t_\tX\t_\t_\t0\troot\t_\t_\n", "column 2 is empty"},
      {"2\ta\t_\tX\t_\t_\t0\troot\t_\t_\n", "word 2 where word 1"},
      {"x\ta\t_\tX\t_\t_\t0\troot\t_\t_\n", "bad ID 'x'"},
      {word1 + "3\tb\t_\tX\t_\t_\t1\tdep\t_\t_\n", "word 3 where word 2"},
      {"1\ta\t_\tX\t_\t_\t1\troot\t_\t_\n", "its own head"},
      {"1\ta\t_\tX\t_\t_\t-1\troot\t_\t_\n", "bad HEAD"},
      {word1 + "2\tb\t_\tX\t_\t_\t7\tdep\t_\t_\n", "past the sentence"},
      {"1-1\ta\t_\t_\t_\t_\t_\t_\t_\t_\n" + word1, "bad multiword-token range"},
      {"2-3\tab\t_\t_\t_\t_\t_\t_\t_\t_\n" + word1, "must come just before word 2"},
      {word1 + "2-3\tbc\t_\t_\t_\t_\t_\t_\t_\t_\n2\tb\t_\tX\t_\t_\t1\tdep\t_\t_\n", "ends at 3"},
      {word1 + "3.1\tb\t_\t_\t_\t_\t_\t_\t_\t_\n", "must follow word 3"},
      {word1 + "1.0\tb\t_\t_\t_\t_\t_\t_\t_\t_\n", "bad empty-node ID"},
      {word1 + "2\tb\t_\tX\t_\t_\t_\tdep\t_\t_\n", "HEAD is _ on some words only"},
      {"# only a comment\n1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n", "a sentence with no word line"},
  };
  for (const auto& [text, why] : bad) {
    try {
      parse_conllu_sentence(text, "t.conllu");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what() << " for " << text;
      EXPECT_NE(std::string(e.what()).find("t.conllu:"), std::string::npos) << e.what();
    }
  }
}

TEST(Conllu, ABadLineCostsItsSentenceOnly) {
  ScratchDir dir;
  const std::string path = dir.write("t.conllu",
                                     "# newdoc\n\n"  // a stray comment block: ignored
                                     "1\tGood\t_\tADJ\t_\t_\t0\troot\t_\t_\r\n\r\n"
                                     "1\tBad\t_\tADJ\t_\t_\t0\troot\n"
                                     "2\tskipped\t_\tX\t_\t_\t1\tdep\t_\t_\n\n"
                                     "1\tAlso\t_\tADV\t_\t_\t2\tadvmod\t_\t_\n"
                                     "2\tgood\t_\tADJ\t_\t_\t0\troot\t_\t_\n");
  ErrorCounter errors(ErrorLimit{});
  const std::vector<ConlluSentence> s = read_conllu(path, errors);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].words[0].misc, "_");  // CRLF read as LF
  EXPECT_EQ(s[1].words[1].form, "good");
  EXPECT_EQ(s[1].line, 8u);
  EXPECT_EQ(errors.count(), 1u);
  const std::string only_bad = dir.write("bad.conllu", "1\tBad\n\n");
  EXPECT_THROW(read_conllu(only_bad, errors), Error);
  EXPECT_THROW(read_conllu(dir.write("empty.conllu", "# just a comment\n"), errors), Error);
}

// The fixtures' treebanks: sentence, word, range and empty-node counts, and a byte-exact rewrite.
struct TreebankCounts {
  const char* path;
  size_t sentences, words, ranges, empty_nodes;
};

TEST(Conllu, UniversalDependenciesTreebanks) {
  KGLM_REQUIRE_FIXTURES();
  for (const TreebankCounts& c : {TreebankCounts{"ud/en_ewt-ud-dev.conllu", 2001, 25147, 359, 4},
                                  TreebankCounts{"ud/en_ewt-ud-train.conllu.gz", 12544, 204577, 2614, 37},
                                  TreebankCounts{"ud/it_isdt-ud-dev.conllu", 564, 11907, 775, 1},
                                  TreebankCounts{"ud/sv_talbanken-ud-dev.conllu", 504, 9797, 0, 2},
                                  TreebankCounts{"ud/zh_gsd-ud-dev.conllu", 500, 12665, 0, 0}}) {
    const std::string path = ::kglm::test::fixture(c.path);
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
    ErrorCounter errors(ErrorLimit{});
    const std::vector<ConlluSentence> s = read_conllu(path, errors);
    EXPECT_EQ(errors.count(), 0u) << c.path;
    size_t words = 0, ranges = 0, empty = 0;
    std::string rewritten;
    for (const ConlluSentence& sentence : s) {
      words += sentence.words.size();
      for (const std::string& line : sentence.lines) {
        const std::string id = line.substr(0, line.find('\t'));
        ranges += !line.starts_with('#') && id.find('-') != std::string::npos;
        empty += !line.starts_with('#') && id.find('.') != std::string::npos;
      }
      for (size_t i = 0; i < sentence.words.size(); ++i) EXPECT_GE(sentence.words[i].head, 0) << c.path;
      rewritten += write_conllu_sentence(sentence);
    }
    EXPECT_EQ(s.size(), c.sentences) << c.path;
    EXPECT_EQ(words, c.words) << c.path;
    EXPECT_EQ(ranges, c.ranges) << c.path;
    EXPECT_EQ(empty, c.empty_nodes) << c.path;
    InputStream in(path);
    std::string original;
    char buf[1 << 16];
    for (size_t n; (n = in.read(buf, sizeof buf)) > 0;) original.append(buf, n);
    EXPECT_TRUE(rewritten == original) << c.path << ": the unchanged rewrite differs from the file";
  }
}

}  // namespace
}  // namespace kglm::train::tasks
