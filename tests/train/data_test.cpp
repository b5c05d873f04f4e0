// The token dataset format (round trip, validation of hand-corrupted files), the building blocks
// of pretrain prepare with a scripted tokenizer, and run_prepare with a WordPiece vocabulary written
// here. The SentencePiece fixture model is exercised by data_fixtures_test.cpp.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <functional>
#include <random>

#include "../unit/test_paths.hpp"
#include "core/error.hpp"
#include "h5/h5.hpp"
#include "prepare_checks.hpp"
#include "train/token_shards.hpp"

namespace kglm::train {
namespace {

using ::kglm::test::ScratchDir;

// Words are runs of non-space bytes cut into pieces of at most 3 bytes; the first piece of a word
// starts it. Ids are a hash of the piece, so tests know every offset without a model file.
class ScriptedTokenizer : public tok::Tokenizer {
 public:
  tok::TokenizerKind kind() const override { return tok::TokenizerKind::WordPiece; }
  void encode(std::string_view text, tok::Encoding& out) const override {
    out.clear();
    for (size_t i = 0; i < text.size();) {
      if (text[i] == ' ') {
        ++i;
        continue;
      }
      const size_t word_end = std::min(text.find(' ', i), text.size());
      for (size_t p = i; p < word_end; p += 3) {
        const size_t e = std::min(p + 3, word_end);
        out.ids.push_back(10 + static_cast<int32_t>(std::hash<std::string_view>()(text.substr(p, e - p)) % 90));
        out.begin.push_back(static_cast<uint32_t>(p));
        out.end.push_back(static_cast<uint32_t>(e));
        out.word_start.push_back(p == i);
      }
      i = word_end;
    }
  }
  int32_t vocab_size() const override { return 100; }
  const tok::SpecialTokens& special() const override { return special_; }
  std::string piece(int32_t id) const override { return "p" + std::to_string(id); }
  int32_t piece_to_id(std::string_view) const override { return special_.unk; }
  std::string decode(const std::vector<int32_t>& ids) const override {
    std::string text;
    for (int32_t id : ids) text += piece(id);
    return text;
  }
  const std::filesystem::path& source() const override { return source_; }
  void save_hf_files(const std::filesystem::path&) const override {}

 private:
  tok::SpecialTokens special_{2, 3, 0, 1, 4};
  std::filesystem::path source_ = "scripted";
};

TokenDatasetInfo small_info() {
  TokenDatasetInfo info;
  info.tokenizer_kind = tok::TokenizerKind::WordPiece;
  info.tokenizer_source = "vocab.txt";
  info.vocab_size = 50;
  info.special = {2, 3, 0, 1, 4};
  info.max_len = 8;
  return info;
}

// ---------------------------------------------------------------------------------------------
// The format

TEST(TokenDataset, RoundTripAcrossBatchesAndChunks) {
  ScratchDir dir;
  const std::string path = dir.file("tokens.h5");
  const Provenance provenance = make_provenance("test", "test -o tokens.h5", {"a.txt", "b.jsonl"}, 7);
  std::mt19937 rng(1);
  const char* langs[] = {"en", "fr", "de"};
  SequenceBatch all;  // what was written, as one batch
  {
    TokenDatasetWriter writer(path, small_info(), provenance);
    for (int b = 0; b < 5; ++b) {
      SequenceBatch batch;
      for (int s = 0; s < 5000; ++s) {
        const size_t n = 2 + rng() % 7;
        for (size_t t = 0; t < n; ++t) {
          const int32_t id = t == 0 ? 2 : t + 1 == n ? 3 : static_cast<int32_t>(rng() % 50);  // bos ... eos
          const auto flags = static_cast<uint8_t>(rng() % 64);
          const int32_t span = static_cast<int32_t>(rng() % 5) - 1;
          batch.push_token(id, flags, span);
          all.push_token(id, flags, span);
        }
        const char* lang = langs[(b + s % 2) % 3];
        const auto kind = static_cast<SequenceKind>(s % 2);
        const uint64_t line = 1000 * b + s + 1;
        const auto input = static_cast<uint16_t>(s % 2);
        batch.end_sequence(lang, kind, line, input);
        all.end_sequence(lang, kind, line, input);
      }
      writer.append(batch);
    }
    writer.append(SequenceBatch());  // an empty batch is fine
    EXPECT_EQ(writer.sequences(), 25000u);
    EXPECT_EQ(writer.tokens(), all.ids.size());
    EXPECT_EQ(writer.languages(), (std::vector<std::string>{"en", "fr", "de"}));
    writer.finish();
  }
  EXPECT_TRUE(checks::temp_files(dir.file("")).empty());
  EXPECT_GT(all.ids.size(), size_t{1} << 16) << "the token columns should span several chunks";

  const TokenDataset d = TokenDataset::open(path);
  ASSERT_EQ(d.size(), all.size());
  EXPECT_EQ(d.total_tokens(), all.ids.size());
  EXPECT_EQ(d.languages(), (std::vector<std::string>{"en", "fr", "de"}));
  EXPECT_EQ(d.vocab_size(), 50);
  EXPECT_EQ(d.max_len(), 8u);
  EXPECT_EQ(d.special().bos, 2);
  EXPECT_EQ(d.special().mask, 4);
  EXPECT_EQ(d.tokenizer_kind(), tok::TokenizerKind::WordPiece);
  EXPECT_EQ(d.tokenizer_source(), "vocab.txt");
  EXPECT_EQ(d.provenance().tool, "test");
  EXPECT_EQ(d.provenance().seed, 7u);
  ASSERT_EQ(d.provenance().inputs.size(), 2u);
  EXPECT_EQ(d.provenance().inputs[1].name, "b.jsonl");
  uint64_t begin = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    const Sequence s = d.sequence(i);
    const uint64_t end = all.ends[i];
    ASSERT_EQ(s.size(), end - begin);
    for (size_t t = 0; t < s.size(); ++t) {
      ASSERT_EQ(s.ids[t], all.ids[begin + t]);
      ASSERT_EQ(s.flags[t], all.flags[begin + t]);
      ASSERT_EQ(s.span[t], all.span[begin + t]);
    }
    ASSERT_EQ(d.languages()[s.lang], all.languages[all.lang[i]]);
    ASSERT_EQ(static_cast<uint8_t>(s.kind), all.kind[i]);
    ASSERT_EQ(s.source_line, all.source_line[i]);
    ASSERT_EQ(s.input, all.input[i]);
    begin = end;
  }
  EXPECT_THROW(d.sequence(d.size()), Error);
}

// Shards and streaming: a run dealt into 3 files and read back as one dataset holds sequence k of
// the run at shard k mod 3; a cache far smaller than the tokens streams them and reads the same
// sequences, holding at most one block beyond its capacity.
TEST(TokenDataset, ShardsAndStreamingReadTheSameSequences) {
  ScratchDir dir;
  const Provenance provenance = make_provenance("test", "test", {"a.txt"}, 1);
  std::mt19937 rng(3);
  SequenceBatch run;
  for (int s = 0; s < 40000; ++s) {
    const size_t n = 2 + rng() % 7;
    for (size_t t = 0; t < n; ++t)
      run.push_token(t == 0 ? 2 : t + 1 == n ? 3 : static_cast<int32_t>(5 + rng() % 45), static_cast<uint8_t>(t), -1);
    run.end_sequence(s % 3 ? "en" : "sw", static_cast<SequenceKind>(s % 2), static_cast<uint64_t>(s) + 1, 0);
  }
  ShardedTokenWriter one(dir.file("one.h5"), 1, small_info(), provenance);
  one.append(run);
  one.finish();
  ShardedTokenWriter three(dir.file("three.h5"), 3, small_info(), provenance);
  three.append(run);
  EXPECT_EQ(three.sequences(), run.size());
  EXPECT_EQ(three.languages(), (std::vector<std::string>{"sw", "en"}));
  three.finish();
  EXPECT_EQ(three.paths()[1], dir.file("three-00001-of-00003.h5"));
  EXPECT_EQ(dataset_paths(dir.file("three-*-of-00003.h5")), three.paths());
  EXPECT_EQ(dataset_paths("a.h5,b.h5"), (std::vector<std::string>{"a.h5", "b.h5"}));
  EXPECT_THROW(dataset_paths(dir.file("none-*.h5")), UsageError);

  const TokenDataset whole = TokenDataset::open(dir.file("one.h5"));
  const TokenDataset streamed = TokenDataset::open(dir.file("one.h5"), {kTokenBlock * kTokenBytes});
  const TokenDataset shards = TokenDataset::open(three.paths(), {1});
  EXPECT_FALSE(whole.streaming());
  EXPECT_TRUE(streamed.streaming());
  ASSERT_GT(whole.total_tokens(), 3 * kTokenBlock) << "several blocks to stream";
  ASSERT_EQ(shards.size(), whole.size());
  EXPECT_EQ(shards.files(), 3u);
  auto shard_first = [&](size_t shard) {  // sequences of the shards before it: k < N with k mod 3 = j
    size_t first = 0;
    for (size_t j = 0; j < shard; ++j) first += (run.size() - j + 2) / 3;
    return first;
  };
  auto same = [](const Sequence& a, const Sequence& b) {
    return std::equal(a.ids.begin(), a.ids.end(), b.ids.begin(), b.ids.end()) &&
           std::equal(a.flags.begin(), a.flags.end(), b.flags.begin(), b.flags.end()) && a.kind == b.kind &&
           a.source_line == b.source_line;
  };
  std::mt19937 pick(5);
  for (int n = 0; n < 1000; ++n) {  // random order: blocks are dropped and read again
    const size_t k = pick() % whole.size();
    const Sequence w = whole.sequence(k);
    ASSERT_TRUE(same(w, streamed.sequence(k))) << k;
    const Sequence s = shards.sequence(shard_first(k % 3) + k / 3);
    ASSERT_TRUE(same(w, s)) << k;
    ASSERT_EQ(shards.languages()[s.lang], whole.languages()[w.lang]) << k;
  }
  const TokenCacheStats stats = streamed.cache_stats();
  EXPECT_GT(stats.misses, 100u);
  EXPECT_LE(stats.peak_bytes, 2 * kTokenBlock * kTokenBytes);  // the capacity and the block just read
  EXPECT_LT(stats.peak_bytes, whole.total_tokens() * kTokenBytes);

  // Files of another tokenizer are not one dataset.
  TokenDatasetInfo other = small_info();
  other.vocab_size = 60;
  ShardedTokenWriter different(dir.file("other.h5"), 1, other, provenance);
  different.append(run);
  different.finish();
  EXPECT_THROW(TokenDataset::open({dir.file("one.h5"), dir.file("other.h5")}), Error);
}

TEST(TokenDataset, EmptyDatasetIsValid) {
  ScratchDir dir;
  const std::string path = dir.file("empty.h5");
  TokenDatasetWriter writer(path, small_info(), make_provenance("test", "", {"a.txt"}, 0));
  writer.finish();
  const TokenDataset d = TokenDataset::open(path);
  EXPECT_EQ(d.size(), 0u);
  EXPECT_EQ(d.total_tokens(), 0u);
  EXPECT_TRUE(d.languages().empty());
}

TEST(TokenDataset, WriterRejectsBadSequencesAndLeavesNoFile) {
  ScratchDir dir;
  const std::string path = dir.file("bad.h5");
  const Provenance provenance = make_provenance("test", "", {"a.txt"}, 0);
  auto attempt = [&](const std::vector<int32_t>& ids, uint16_t input) {
    TokenDatasetWriter writer(path, small_info(), provenance);
    SequenceBatch batch;
    for (int32_t id : ids) batch.push_token(id, 0, -1);
    batch.end_sequence("en", SequenceKind::text, 1, input);
    writer.append(batch);
    writer.finish();
  };
  EXPECT_THROW(attempt({2, 50, 3}, 0), Error);                   // id beyond the vocabulary
  EXPECT_THROW(attempt({2, -1, 3}, 0), Error);                   // negative id
  EXPECT_THROW(attempt({2, 5, 5, 5, 5, 5, 5, 5, 3}, 0), Error);  // 9 tokens > max_len 8
  EXPECT_THROW(attempt({2, 5, 3}, 1), Error);
  EXPECT_THROW(attempt({5, 5, 3}, 0), Error);  // no bos
  EXPECT_THROW(attempt({2, 5}, 0), Error);     // no eos                    // only one input
  {
    TokenDatasetWriter unfinished(path, small_info(), provenance);
    EXPECT_FALSE(checks::temp_files(dir.file("")).empty());
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(checks::temp_files(dir.file("")).empty());
  attempt({2, 5, 3}, 0);
  EXPECT_EQ(TokenDataset::open(path).size(), 1u);
}

// A dataset written column by column with the h5 layer, so that tests can corrupt any part.
struct RawDataset {
  std::vector<int32_t> ids{2, 7, 8, 3, 2, 9, 3};
  std::vector<uint8_t> flags{32, 1, 0, 32, 32, 1, 32};
  std::vector<int32_t> span{-1, 0, 0, -1, -1, -1, -1};
  std::vector<uint64_t> offsets{0, 4, 7};
  std::vector<uint16_t> lang{0, 1};
  std::vector<uint8_t> kind{1, 0};
  std::vector<uint64_t> source_line{1, 2};
  std::vector<uint16_t> input{0, 0};
  std::vector<std::string> languages{"en", "fr"};
  std::string format = kTokenFormat;
  int64_t vocab_size = 50;
  int64_t max_len = 8;
  std::string skip;  // a dataset or attribute left out

  void write(const std::string& path) const {
    h5::File f = h5::File::create(path);
    const h5::Group& root = f.root();
    auto attribute = [&](const char* name, auto value) {
      if (skip != name) root.set_attribute(name, value);
    };
    attribute("format", std::string_view(format));
    attribute("format_version", kTokenFormatVersion);
    attribute("tokenizer_kind", std::string_view("wordpiece"));
    attribute("tokenizer_source", std::string_view("vocab.txt"));
    attribute("vocab_size", vocab_size);
    attribute("bos_id", int64_t{2});
    attribute("eos_id", int64_t{3});
    attribute("pad_id", int64_t{0});
    attribute("unk_id", int64_t{1});
    attribute("mask_id", int64_t{4});
    attribute("max_len", max_len);
    h5::write_provenance(root, make_provenance("test", "", {"a.txt"}, 0));
    const h5::Group tokens = root.create_group("tokens"), sequences = root.create_group("sequences");
    auto column = [&](const h5::Group& g, const char* name, const auto& values) {
      if (skip != name) h5::write_column(g, name, values);
    };
    column(tokens, "ids", ids);
    column(tokens, "flags", flags);
    column(tokens, "span", span);
    column(sequences, "offsets", offsets);
    column(sequences, "lang", lang);
    column(sequences, "kind", kind);
    column(sequences, "source_line", source_line);
    column(sequences, "input", input);
    if (skip != "languages") {
      h5::StringColumnWriter names(root, "languages");
      for (const auto& l : languages) names.append(l);
      names.finish();
    }
    f.close();
  }
};

// Opening the corrupted file fails with a message naming the file and containing `what`.
void expect_invalid(const std::function<void(RawDataset&)>& corrupt, const std::string& what) {
  ScratchDir dir;
  const std::string path = dir.file("corrupt.h5");
  RawDataset raw;
  corrupt(raw);
  raw.write(path);
  try {
    TokenDataset::open(path);
    ADD_FAILURE() << "no error; expected: " << what;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  }
}

TEST(TokenDataset, ValidatesTheLayout) {
  {
    ScratchDir dir;
    RawDataset().write(dir.file("ok.h5"));
    const TokenDataset d = TokenDataset::open(dir.file("ok.h5"));  // the uncorrupted file is valid
    EXPECT_EQ(d.size(), 2u);
    EXPECT_EQ(d.sequence(1).ids[1], 9);
    EXPECT_EQ(d.languages()[d.sequence(1).lang], "fr");
  }
  expect_invalid([](RawDataset& r) { r.offsets = {0, 4, 3}; }, "/sequences/offsets decreases at sequence 1");
  expect_invalid(
      [](RawDataset& r) {
        r.ids.push_back(3);
        r.flags.push_back(0);
        r.span.push_back(-1);
      },
      "ends at 7, not at the token count 8");
  expect_invalid([](RawDataset& r) { r.offsets = {0, 4, 9}; }, "goes past the token count 7 at sequence 1");
  expect_invalid([](RawDataset& r) { r.ids[4] = 7; }, "sequence 1 is not framed by bos_id and eos_id");
  expect_invalid([](RawDataset& r) { r.offsets = {0, 4, 4}; }, "sequence 1 is not framed");
  expect_invalid([](RawDataset& r) { r.offsets = {1, 4, 7}; }, "does not start at 0");
  expect_invalid([](RawDataset& r) { r.ids[5] = 50; }, "token 5 has id 50, not in [0, 50)");
  expect_invalid([](RawDataset& r) { r.ids[1] = -3; }, "token 1 has id -3");
  expect_invalid([](RawDataset& r) { r.skip = "flags"; }, "missing dataset /tokens/flags");
  expect_invalid([](RawDataset& r) { r.skip = "source_line"; }, "missing dataset /sequences/source_line");
  expect_invalid([](RawDataset& r) { r.skip = "languages"; }, "missing string table /languages");
  expect_invalid([](RawDataset& r) { r.skip = "max_len"; }, "missing root attribute max_len");
  expect_invalid([](RawDataset& r) { r.span.pop_back(); }, "/tokens/span has 6 elements, expected 7");
  expect_invalid([](RawDataset& r) { r.kind.push_back(0); }, "/sequences/kind has 3 elements, expected 2");
  expect_invalid([](RawDataset& r) { r.lang[1] = 2; }, "sequence 1: language index 2 but /languages has 2");
  expect_invalid([](RawDataset& r) { r.input[0] = 1; }, "sequence 0: input index 1 but 1 inputs");
  expect_invalid([](RawDataset& r) { r.max_len = 3; }, "sequence 0 has 4 tokens, more than max_len 3");
  expect_invalid([](RawDataset& r) { r.span[2] = -2; }, "token 2 has span -2");
  expect_invalid([](RawDataset& r) { r.vocab_size = 0; }, "vocab_size 0");
  expect_invalid([](RawDataset& r) { r.format = "kglm-cycles"; },
                 "is a cycles table (kglm-cycles); expected a token dataset");

  ScratchDir dir;
  std::ofstream(dir.file("text.h5")) << "not HDF5\n";
  EXPECT_THROW(TokenDataset::open(dir.file("text.h5")), Error);
  EXPECT_THROW(TokenDataset::open(dir.file("missing.h5")), Error);
}

// ---------------------------------------------------------------------------------------------
// Building blocks

TEST(Prepare, SplitAtWordStarts) {
  using V = std::vector<uint8_t>;
  using E = std::vector<size_t>;
  auto split = [](const V& ws, size_t budget) { return split_at_word_starts(ws, budget); };
  EXPECT_EQ(split(V{1, 0, 0, 1, 0, 1, 1, 0}, 3), (E{3, 6, 8}));
  EXPECT_EQ(split(V{1, 0, 0, 1, 0, 1, 1, 0}, 8), (E{8}));
  EXPECT_EQ(split(V{1, 0, 0, 0, 0, 0, 0}, 3), (E{3, 6, 7}));     // one long word: cut at the budget
  EXPECT_EQ(split(V{1, 1, 0, 0, 0, 0, 1, 0}, 4), (E{1, 5, 8}));  // the long word after "a" is cut
  EXPECT_EQ(split(V{1, 1, 1, 1}, 1), (E{1, 2, 3, 4}));
  EXPECT_EQ(split(V{}, 3), (E{0}));
  EXPECT_THROW(split(V{1}, 0), Error);
}

TEST(Prepare, CheckSpans) {
  const std::string text = "café au lait";  // 'é' is bytes 3-4
  auto check = [&](uint64_t b, uint64_t e) {
    const RecordSpan s{b, e, kInEntity};
    return check_spans(text, std::span<const RecordSpan>(&s, 1));
  };
  EXPECT_EQ(check(0, 5), "");
  EXPECT_EQ(check(13, 13), "");
  EXPECT_EQ(check(6, 6), "");
  EXPECT_NE(check(5, 4).find("begin after end"), std::string::npos);
  EXPECT_NE(check(6, 14).find("beyond the text of 13 bytes"), std::string::npos);
  EXPECT_NE(check(0, 4).find("inside a UTF-8 character"), std::string::npos);
  EXPECT_NE(check(4, 6).find("span 0 [4, 6)"), std::string::npos);
  EXPECT_EQ(span_kind_flag("entity"), kInEntity);
  EXPECT_EQ(span_kind_flag("relation"), kInRelation);
  EXPECT_EQ(span_kind_flag("link"), kLinkSlot);
  EXPECT_EQ(span_kind_flag("answer"), kInAnswer);
  EXPECT_EQ(span_kind_flag("Entity"), 0);
}

TEST(Prepare, SequenceBuilderMarksSpansAndSplits) {
  const ScriptedTokenizer tokenizer;
  // Tokens: Dou gla s | Ada ms | wro te | Hit chh ike r
  const std::string text = "Douglas Adams wrote Hitchhiker";
  const std::vector<RecordSpan> spans = {
      {0, 13, kInEntity}, {14, 19, kInRelation}, {20, 25, kInAnswer}, {8, 8, kLinkSlot}};
  SequenceBuilder builder(tokenizer, 64);
  SequenceBatch out;
  const SequenceBuilder::Result r = builder.build(text, spans, "en", SequenceKind::annotated, 4, 0, out);
  EXPECT_EQ(r.sequences, 1u);
  EXPECT_EQ(r.text_tokens, 11u);
  ASSERT_EQ(out.ids.size(), 13u);
  const std::vector<uint8_t> flags = {kSpecialToken,
                                      kWordStart | kInEntity,
                                      kInEntity,
                                      kInEntity,
                                      kWordStart | kInEntity,
                                      kInEntity,
                                      kWordStart | kInRelation,
                                      kInRelation,
                                      kWordStart | kInAnswer,
                                      kInAnswer,
                                      0,
                                      0,
                                      kSpecialToken};
  const std::vector<int32_t> span = {-1, 0, 0, 0, 0, 0, 1, 1, 2, 2, -1, -1, -1};
  EXPECT_EQ(out.flags, flags);
  EXPECT_EQ(out.span, span);
  EXPECT_EQ(out.ids.front(), 2);
  EXPECT_EQ(out.ids.back(), 3);
  EXPECT_EQ(out.languages, std::vector<std::string>{"en"});
  EXPECT_EQ(out.source_line, std::vector<uint64_t>{4});

  // Spans that touch a token without sharing a byte leave it out: [3, 6) is exactly "gla".
  out.clear();
  const std::vector<RecordSpan> touching = {{3, 6, kInAnswer}, {0, 3, kInEntity}};
  builder.build(text, touching, "en", SequenceKind::annotated, 4, 0, out);
  EXPECT_EQ(std::vector<uint8_t>(out.flags.begin(), out.flags.begin() + 5),
            (std::vector<uint8_t>{kSpecialToken, kWordStart | kInEntity, kInAnswer, 0, kWordStart}));
  EXPECT_EQ(std::vector<int32_t>(out.span.begin(), out.span.begin() + 5), (std::vector<int32_t>{-1, 1, 0, -1, -1}));

  // max_len 6 = 4 tokens a piece: cuts before "Ada" and "Hit", the last word starts that fit.
  SequenceBuilder small(tokenizer, 6);
  out.clear();
  EXPECT_EQ(small.build(text, spans, "en", SequenceKind::annotated, 4, 0, out).sequences, 3u);
  EXPECT_EQ(out.ends, (std::vector<uint64_t>{5, 11, 17}));
  EXPECT_EQ(out.span, (std::vector<int32_t>{-1, 0, 0, 0, -1, -1, 0, 0, 1, 1, -1, -1, 2, 2, -1, -1, -1}));
  // A word longer than the budget is cut where it must; nothing is lost.
  out.clear();
  EXPECT_EQ(small.build("abcdefghijklmnop q", {}, "en", SequenceKind::text, 1, 0, out).sequences, 2u);
  EXPECT_EQ(out.ends, (std::vector<uint64_t>{6, 11}));
  EXPECT_EQ(out.flags[1], kWordStart);
  EXPECT_EQ(out.flags[7], 0);  // the cut word goes on
  // No tokens, no sequence.
  out.clear();
  EXPECT_EQ(small.build("   ", {}, "en", SequenceKind::text, 1, 0, out).sequences, 0u);
  EXPECT_TRUE(out.ids.empty());
  EXPECT_THROW(SequenceBuilder(tokenizer, 2), UsageError);
}

// ---------------------------------------------------------------------------------------------
// run_prepare with a WordPiece vocabulary

class PrepareWordPiece : public ::testing::Test {
 protected:
  void SetUp() override {
    vocab_ = dir_.file("vocab.txt");
    checks::write_text(vocab_, {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the",   "The",   "cat",  "sat",
                                "on",    "mat",   ".",     ",",     "play",   "##ing", "##s",   "##ed", "Douglas",
                                "Adams", "wrote", "a",     "book",  "about",  "Hitch", "##hik", "##er", "caf",
                                "##é",   "au",    "lait",  "in",    "Paris",  "and",   "dog",   "runs", "fast"});
    tokenizer_ = tok::load_tokenizer(vocab_);
  }
  std::string file(const std::string& name) const { return dir_.file(name); }
  PrepareOptions options(std::vector<std::string> inputs, const std::string& output, uint32_t max_len = 512) const {
    return checks::prepare_options(vocab_, std::move(inputs), file(output), max_len);
  }
  static std::vector<checks::ExpectedRecord> records(const std::vector<std::string>& lines) {
    std::vector<checks::ExpectedRecord> out;
    for (size_t i = 0; i < lines.size(); ++i) out.push_back({i + 1, lines[i], {}});
    return out;
  }

  ScratchDir dir_;
  std::string vocab_;
  std::unique_ptr<tok::Tokenizer> tokenizer_;
};

TEST_F(PrepareWordPiece, PlainTextLines) {
  const std::vector<std::string> lines = {
      "The cat sat on the mat.",
      "",
      "Douglas Adams wrote a book about the Hitchhiker, and the cat sat on a mat in Paris.",
      "   ",
      "a dog runs fast on zebras",  // "zebras" is unknown
      "café au lait\r",
  };
  checks::write_text(file("in.txt"), lines);
  PrepareOptions o = options({file("in.txt")}, "out.h5", 8);
  const Stats stats = run_prepare(o);
  const TokenDataset d = TokenDataset::open(o.output);
  std::vector<checks::ExpectedRecord> expected = records(lines);
  expected[5].text = "café au lait";
  checks::expect_records(d, *tokenizer_, 0, expected);
  EXPECT_EQ(d.languages(), std::vector<std::string>{"und"});
  EXPECT_EQ(d.sequence(0).kind, SequenceKind::text);
  EXPECT_EQ(d.tokenizer_kind(), tok::TokenizerKind::WordPiece);
  EXPECT_EQ(d.special().bos, 2);
  EXPECT_EQ(d.max_len(), 8u);
  EXPECT_EQ(d.provenance().tool, "pretrain prepare");
  EXPECT_EQ(d.provenance().inputs.at(0).name, file("in.txt"));
  EXPECT_EQ(stats.get("lines"), 6);
  EXPECT_EQ(stats.get("empty_lines"), 1);
  EXPECT_EQ(stats.get("empty_records"), 1);
  EXPECT_EQ(stats.get("records"), 5);
  EXPECT_EQ(stats.get("split_lines"), 2);  // line 1 is 7 tokens with its '.', more than 8 - 2
  EXPECT_EQ(stats.get("unk_tokens"), 1);
  EXPECT_EQ(stats.get("sequences"), static_cast<int64_t>(d.size()));
  EXPECT_EQ(stats.get("sequences.und"), static_cast<int64_t>(d.size()));
  EXPECT_EQ(stats.get("tokens"), static_cast<int64_t>(d.total_tokens()));
  EXPECT_EQ(stats.get("bad_records"), 0);
  EXPECT_TRUE(checks::temp_files(file("")).empty());
}

TEST_F(PrepareWordPiece, AnnotatedRecordsFlagTheirSpans) {
  const std::string t1 = "Douglas Adams wrote a book about the Hitchhiker.";
  const std::string t2 = "The cat sat on the mat in Paris.";
  const std::string t3 = "café au lait";
  const std::vector<checks::ExpectedRecord> expected = {
      {1, t1, {{0, 13, kInEntity}, {14, 19, kInRelation}, {37, 47, kInEntity}, {20, 21, kLinkSlot}}},
      {2, t2, {{4, 7, kInEntity}, {26, 31, kInAnswer}, {5, 10, kInRelation}}},  // overlapping spans
      {3, t3, {{0, 5, kInEntity}, {0, 2, kInAnswer}}},                          // spans inside a word
  };
  {
    std::ofstream out(file("in.jsonl"), std::ios::binary);
    out << checks::annotated_json(t1, "en", expected[0].spans) << checks::annotated_json(t2, "fr", expected[1].spans)
        << checks::annotated_json(t3, "en", expected[2].spans);
  }
  PrepareOptions o = options({file("in.jsonl")}, "out.h5");
  const Stats stats = run_prepare(o);
  const TokenDataset d = TokenDataset::open(o.output);
  checks::expect_records(d, *tokenizer_, 0, expected);
  EXPECT_EQ(d.languages(), (std::vector<std::string>{"en", "fr"}));
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d.sequence(1).lang, 1);
  EXPECT_EQ(d.sequence(0).kind, SequenceKind::annotated);
  // Spot checks by hand: "Hitch ##hik ##er" are entity 2; "." after it is in no span.
  const Sequence s = d.sequence(0);
  const size_t n = s.size();
  EXPECT_EQ(s.span[n - 5], 2);
  EXPECT_EQ(s.span[n - 3], 2);
  EXPECT_EQ(s.flags[n - 3] & kInEntity, kInEntity);
  EXPECT_EQ(s.span[n - 2], -1);
  EXPECT_EQ(stats.get("annotated_records"), 3);
  EXPECT_EQ(stats.get("spans"), 9);
  EXPECT_EQ(stats.get("sequences.en"), 2);
  EXPECT_EQ(stats.get("sequences.fr"), 1);
}

TEST_F(PrepareWordPiece, BadRecordsAreReportedWithFileAndLineAndSkipped) {
  const std::string good = "The cat sat on the mat.";
  const std::vector<std::string> lines = {
      checks::annotated_json(good, "en", {{4, 7, kInEntity}}),
      R"({"text":"The cat","lang":"en","spans":[[5,4,"entity","Q1"]]})",
      R"({"text":"The cat","lang":"en","spans":[[4,8,"entity","Q1"]]})",
      R"({"text":"café","lang":"en","spans":[[0,4,"entity","Q1"]]})",
      R"({"text":"The cat","lang":"en","spans":[[0,3,"person","Q1"]]})",
      R"({"text":"The cat","lang":"en","spans":[[0,-3,"entity","Q1"]]})",
      R"({"text":"The cat","lang":"e n"})",
      R"({"lang":"en"})",
      R"({"text":"The cat", broken)",
      "",
      checks::annotated_json("the mat", "de", {}),
  };
  {
    std::ofstream out(file("in.jsonl"), std::ios::binary);
    for (const auto& l : lines) out << l << (l.empty() || l.back() != '\n' ? "\n" : "");
  }
  PrepareOptions o = options({file("in.jsonl")}, "out.h5");
  ::testing::internal::CaptureStderr();
  const Stats stats = run_prepare(o);
  const std::string messages = ::testing::internal::GetCapturedStderr();
  for (const char* expected :
       {"in.jsonl:2: span 0 [5, 4): begin after end", "in.jsonl:3: span 0 [4, 8): beyond the text of 7 bytes",
        "in.jsonl:4: span 0 [0, 4): an offset inside a UTF-8 character", "in.jsonl:5: span 0: unknown kind \"person\"",
        "in.jsonl:6: span 0 is not", "in.jsonl:7: \"e n\" is not a language code",
        "in.jsonl:8: no string field \"text\"", "in.jsonl:9: not JSON"})
    EXPECT_NE(messages.find(expected), std::string::npos) << expected << "\n" << messages;
  EXPECT_EQ(stats.get("bad_records"), 8);
  EXPECT_EQ(stats.get("records"), 2);
  EXPECT_EQ(stats.get("empty_lines"), 1);
  const TokenDataset d = TokenDataset::open(o.output);
  checks::expect_records(d, *tokenizer_, 0, {{1, good, {{4, 7, kInEntity}}}, {11, "the mat", {}}});
  EXPECT_EQ(d.languages(), (std::vector<std::string>{"en", "de"}));

  // Past --max-errors the run fails and leaves neither the output nor a temporary file.
  o.output = file("fail.h5");
  o.max_errors = 7;
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(run_prepare(o), Error);
  ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(std::filesystem::exists(o.output));
  EXPECT_TRUE(checks::temp_files(file("")).empty());
}

// Many lines of the vocabulary's words, some too long for max_len.
std::vector<std::string> generated_lines(size_t n) {
  const char* words[] = {"The", "cat", "sat", "on", "the", "mat", ".", "playing", "Hitchhiker", "café", "zebra", ","};
  std::mt19937 rng(3);
  std::vector<std::string> lines;
  for (size_t i = 0; i < n; ++i) {
    std::string line;
    for (size_t w = rng() % 30; w > 0; --w) line += std::string(line.empty() ? "" : " ") + words[rng() % 12];
    lines.push_back(line);
  }
  return lines;
}

void write_gzip(const std::string& path, const std::vector<std::string>& lines) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  for (const auto& l : lines) {
    gzwrite(f, l.data(), static_cast<unsigned>(l.size()));
    gzwrite(f, "\n", 1);
  }
  gzclose(f);
}

TEST_F(PrepareWordPiece, SameDatasetWhateverThreadsAndCompression) {
  const std::vector<std::string> lines = generated_lines(4000);
  checks::write_text(file("in.txt"), lines);
  write_gzip(file("in.txt.gz"), lines);
  PrepareOptions o = options({file("in.txt")}, "t1.h5", 16);
  o.batch_bytes = 4096;  // dozens of batches
  o.threads = 1;
  const Stats s1 = run_prepare(o);
  o.threads = 2;
  o.output = file("t2.h5");
  const Stats s2 = run_prepare(o);
  o.inputs = {file("in.txt.gz")};
  o.output = file("gz.h5");
  run_prepare(o);
  EXPECT_EQ(s1.values(), s2.values());
  EXPECT_GT(s1.get("split_lines"), 100);
  const TokenDataset d1 = TokenDataset::open(file("t1.h5"));
  checks::expect_same_content(d1, TokenDataset::open(file("t2.h5")));
  checks::expect_same_content(d1, TokenDataset::open(file("gz.h5")));
  checks::expect_records(d1, *tokenizer_, 0, records(lines));
  EXPECT_TRUE(checks::temp_files(file("")).empty());
}

TEST_F(PrepareWordPiece, LanguagesFromLangPathJsonlAndDefault) {
  checks::write_text(file("fr.txt"), {"the cat", "on the mat"});
  checks::write_text(file("mixed.jsonl"), {"", R"({"text":"the cat","lang":"de"})", R"({"text":"the mat"})"});
  checks::write_text(file("plain.txt"), {"{ not JSON: text because --format text", "the dog"});
  PrepareOptions o = options({"fr=" + file("fr.txt"), file("mixed.jsonl"), file("plain.txt")}, "out.h5");
  o.default_lang = "en";
  o.max_errors = 1;
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(run_prepare(o), Error);  // plain.txt is auto-detected as JSONL: both lines are bad
  ::testing::internal::GetCapturedStderr();
  o.max_errors = 10;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run_prepare(o).get("bad_records"), 2);
  ::testing::internal::GetCapturedStderr();
  o.format = sample::RecordFormat::text;  // now the JSONL file is text too
  run_prepare(o);
  o.format = sample::RecordFormat::auto_detect;
  o.inputs.pop_back();
  run_prepare(o);
  const TokenDataset d = TokenDataset::open(o.output);
  EXPECT_EQ(d.languages(), (std::vector<std::string>{"fr", "de", "en"}));
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d.sequence(0).lang, 0);
  EXPECT_EQ(d.sequence(1).kind, SequenceKind::text);
  EXPECT_EQ(d.sequence(2).lang, 1);
  EXPECT_EQ(d.sequence(2).input, 1);
  EXPECT_EQ(d.sequence(2).source_line, 2u);
  EXPECT_EQ(d.sequence(2).kind, SequenceKind::annotated);
  EXPECT_EQ(d.sequence(3).lang, 2);  // no "lang": the default
  ASSERT_EQ(d.provenance().inputs.size(), 2u);
  EXPECT_EQ(d.provenance().inputs[0].name, file("fr.txt"));
  EXPECT_EQ(d.provenance().inputs[0].size, 19);
}

// Standard input replaced by a file for the lifetime of the object.
class StdinFrom {
 public:
  explicit StdinFrom(const std::string& path) : saved_(::dup(STDIN_FILENO)) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    ::dup2(fd, STDIN_FILENO);
    ::close(fd);
  }
  ~StdinFrom() {
    ::dup2(saved_, STDIN_FILENO);
    ::close(saved_);
  }

 private:
  int saved_;
};

TEST_F(PrepareWordPiece, StandardInput) {
  checks::write_text(file("in.jsonl"), {R"({"text":"the cat","lang":"fr"})", "{bad", R"({"text":"the mat"})"});
  PrepareOptions o = options({"-"}, "out.h5");
  std::string messages;
  {
    StdinFrom stdin_from(file("in.jsonl"));
    ::testing::internal::CaptureStderr();
    run_prepare(o);
    messages = ::testing::internal::GetCapturedStderr();
  }
  EXPECT_NE(messages.find("<stdin>:2: not JSON"), std::string::npos) << messages;
  const TokenDataset d = TokenDataset::open(o.output);
  checks::expect_records(d, *tokenizer_, 0, {{1, "the cat", {}}, {3, "the mat", {}}});
  EXPECT_EQ(d.languages(), (std::vector<std::string>{"fr", "und"}));
  ASSERT_EQ(d.provenance().inputs.size(), 1u);
  EXPECT_EQ(d.provenance().inputs[0].name, "<stdin>");
  EXPECT_EQ(d.provenance().inputs[0].size, -1);
}

TEST_F(PrepareWordPiece, UnusableInputsAndOptions) {
  checks::write_text(file("in.txt"), {"the cat"});
  PrepareOptions o = options({file("in.txt"), file("missing.txt")}, "out.h5");
  EXPECT_THROW(run_prepare(o), Error);
  EXPECT_FALSE(std::filesystem::exists(o.output));
  EXPECT_TRUE(checks::temp_files(file("")).empty());

  // A truncated gzip stream is unusable input.
  write_gzip(file("in.txt.gz"), generated_lines(2000));
  const std::string gz = ::kglm::test::read_file(file("in.txt.gz"));
  std::ofstream(file("cut.txt.gz"), std::ios::binary) << gz.substr(0, gz.size() / 2);
  o.inputs = {file("cut.txt.gz")};
  EXPECT_THROW(run_prepare(o), Error);
  EXPECT_FALSE(std::filesystem::exists(o.output));
  EXPECT_TRUE(checks::temp_files(file("")).empty());

  o.inputs = {file("in.txt")};
  o.tokenizer = file("missing.model");
  EXPECT_THROW(run_prepare(o), Error);
  o.tokenizer = vocab_;
  o.max_len = 2;
  EXPECT_THROW(run_prepare(o), UsageError);
  o.max_len = 8;
  o.output = "-";
  EXPECT_THROW(run_prepare(o), UsageError);
  o.output = file("out.h5");
  o.default_lang = "";
  EXPECT_THROW(run_prepare(o), UsageError);
  o.default_lang = "en";
  run_prepare(o);
  EXPECT_EQ(TokenDataset::open(o.output).size(), 1u);
}

}  // namespace
}  // namespace kglm::train
