// pretrain prepare with the real SentencePiece fixture model on a real novel (botchan.txt): every
// line's tokens kept across splits, annotated spans flagged on exactly the overlapping tokens,
// and the same dataset whatever --threads or the input's compression. Skipped without fixtures.
#include <gtest/gtest.h>

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../unit/test_paths.hpp"
#include "prepare_checks.hpp"

namespace kglm::train {
namespace {

using ::kglm::test::ScratchDir;

const std::string kModel = ::kglm::test::fixture("tokenizer/spm-test-vocab1000.model");
const std::string kText = ::kglm::test::fixture("tokenizer/botchan.txt");

#define REQUIRE_TOKENIZER_FIXTURES()                                       \
  if (!std::filesystem::exists(kModel) || !std::filesystem::exists(kText)) \
  GTEST_SKIP() << "tokenizer fixtures not found under " KGLM_FIXTURES_DIR

std::vector<std::string> botchan_lines() {
  std::istringstream in(::kglm::test::read_file(kText));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

TEST(PrepareSentencePiece, BotchanLinesSplitWithoutLoss) {
  REQUIRE_TOKENIZER_FIXTURES();
  ScratchDir dir;
  const std::vector<std::string> lines = botchan_lines();
  ASSERT_GT(lines.size(), 4000u);
  PrepareOptions o = checks::prepare_options(kModel, {kText}, dir.file("t2.h5"), 24);
  o.threads = 2;
  o.batch_bytes = 16384;  // some 17 batches
  const Stats stats = run_prepare(o);
  const auto tokenizer = tok::load_tokenizer(kModel);
  const TokenDataset d = TokenDataset::open(o.output);
  std::vector<checks::ExpectedRecord> expected;
  for (size_t i = 0; i < lines.size(); ++i) expected.push_back({i + 1, lines[i], {}});
  checks::expect_records(d, *tokenizer, 0, expected);
  EXPECT_EQ(d.tokenizer_kind(), tok::TokenizerKind::SentencePiece);
  EXPECT_EQ(d.vocab_size(), tokenizer->vocab_size());
  EXPECT_EQ(d.special().bos, tokenizer->special().bos);
  // Recorded absolute and canonical, with the vocabulary's checksum.
  EXPECT_EQ(d.tokenizer_source(), std::filesystem::weakly_canonical(kModel).string());
  EXPECT_EQ(d.tokenizer_checksum(), tok::vocabulary_checksum(*tokenizer));
  EXPECT_EQ(stats.get("lines"), static_cast<int64_t>(lines.size()));
  EXPECT_GT(stats.get("split_lines"), 500);
  EXPECT_EQ(stats.get("bad_records"), 0);
  EXPECT_LT(stats.get("unk_per_million"), 10000);
  EXPECT_EQ(stats.get("sequences"), static_cast<int64_t>(d.size()));

  o.threads = 1;
  o.output = dir.file("t1.h5");
  run_prepare(o);
  checks::expect_same_content(d, TokenDataset::open(o.output));

  gzFile f = gzopen(dir.file("botchan.txt.gz").c_str(), "wb");
  const std::string text = ::kglm::test::read_file(kText);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  o.threads = 2;
  o.inputs = {dir.file("botchan.txt.gz")};
  o.output = dir.file("gz.h5");
  run_prepare(o);
  checks::expect_same_content(d, TokenDataset::open(o.output));
  EXPECT_TRUE(checks::temp_files(dir.file("")).empty());
}

// Spans over whole words, parts of words, several words, and overlapping one another.
std::vector<RecordSpan> spans_of(const std::string& line, size_t seed) {
  std::vector<std::pair<uint64_t, uint64_t>> words;
  for (size_t i = 0; i < line.size();) {
    if (line[i] == ' ') {
      ++i;
      continue;
    }
    const size_t end = std::min(line.find(' ', i), line.size());
    words.push_back({i, end});
    i = end;
  }
  const uint8_t kinds[] = {kInEntity, kInRelation, kLinkSlot, kInAnswer};
  std::vector<RecordSpan> spans;
  for (size_t w = 0; w < words.size(); ++w) {
    const auto [b, e] = words[w];
    const bool ascii =
        std::all_of(line.begin() + b, line.begin() + e, [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if ((w + seed) % 3 == 0) spans.push_back({b, e, kinds[(w + seed) % 4]});
    if ((w + seed) % 5 == 1 && e - b > 2 && ascii) spans.push_back({b + 1, e - 1, kInAnswer});  // inside a word
    if ((w + seed) % 7 == 2 && w + 2 < words.size()) spans.push_back({b, words[w + 2].second, kInEntity});
  }
  return spans;
}

TEST(PrepareSentencePiece, AnnotatedBotchanSpansOnTheOverlappingTokens) {
  REQUIRE_TOKENIZER_FIXTURES();
  ScratchDir dir;
  std::vector<checks::ExpectedRecord> expected;
  {
    std::ofstream out(dir.file("botchan.jsonl"), std::ios::binary);
    uint64_t line = 0;
    for (const std::string& text : botchan_lines()) {
      if (text.empty()) continue;
      expected.push_back({++line, text, spans_of(text, line)});
      out << checks::annotated_json(text, line % 2 ? "en" : "ja", expected.back().spans);
      if (line == 1500) break;
    }
  }
  PrepareOptions o = checks::prepare_options(kModel, {dir.file("botchan.jsonl")}, dir.file("a.h5"), 32);
  o.threads = 2;
  o.batch_bytes = 32768;
  const Stats stats = run_prepare(o);
  const auto tokenizer = tok::load_tokenizer(kModel);
  const TokenDataset d = TokenDataset::open(o.output);
  checks::expect_records(d, *tokenizer, 0, expected);
  EXPECT_EQ(d.languages(), (std::vector<std::string>{"en", "ja"}));
  EXPECT_EQ(stats.get("annotated_records"), 1500);
  EXPECT_GT(stats.get("split_lines"), 50);
  uint64_t entity_tokens = 0, answer_tokens = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    const Sequence s = d.sequence(i);
    EXPECT_EQ(s.kind, SequenceKind::annotated);
    for (uint8_t f : s.flags) {
      entity_tokens += (f & kInEntity) != 0;
      answer_tokens += (f & kInAnswer) != 0;
    }
  }
  EXPECT_GT(entity_tokens, 1000u);
  EXPECT_GT(answer_tokens, 1000u);
}

}  // namespace
}  // namespace kglm::train
