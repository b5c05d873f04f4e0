// ELMo's window streams (train/elmo_windows.hpp): every row reads whole sentences end to end, each
// epoch's sentences split over the rows; windows overlap by the one token that is the last
// target; the backward stream reverses each sentence in place; a row's stream does not depend on
// which other rows are read (data parallelism); cursors restore the exact continuation.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "core/provenance.hpp"
#include "temp_dir.hpp"
#include "train/elmo_windows.hpp"
#include "train/token_dataset.hpp"

namespace kglm::train {
namespace {

constexpr int32_t kVocabulary = 20000;  // above 3 + 30 · the sentences

// Sentences of 2..31 tokens, <S>=0 … </S>=1, every inner id unique to its sentence and place, so a
// token says where it came from: id = 3 + 30·sentence + position.
struct Fixture {
  kglm::testing::TempDir dir;
  std::string path = (dir.path() / "words.h5").string();
  std::vector<std::vector<int32_t>> sentences;

  explicit Fixture(size_t count) {
    TokenDatasetInfo info;
    info.tokenizer_kind = tok::TokenizerKind::Words;
    info.tokenizer_source = "vocab.txt";
    info.vocab_size = kVocabulary;
    info.special = {0, 1, 2, -1, -1};
    info.max_len = 32;
    std::mt19937 rng(5);
    TokenDatasetWriter writer(path, info, make_provenance("test", "", {"a.txt"}, 0));
    SequenceBatch batch;
    for (size_t s = 0; s < count; ++s) {
      std::vector<int32_t> ids{0};
      const size_t inner = rng() % 30;
      for (size_t t = 0; t < inner; ++t) ids.push_back(static_cast<int32_t>(3 + (30 * s + t) % (kVocabulary - 3)));
      ids.push_back(1);
      for (int32_t id : ids) batch.push_token(id, 0, -1);
      batch.end_sequence("en", SequenceKind::text, s + 1, 0);
      sentences.push_back(ids);
    }
    writer.append(batch);
    writer.finish();
  }
};

std::vector<uint32_t> all_sentences(size_t n) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint32_t>(i);
  return v;
}

// Row r's forward and backward streams over `windows` windows of `steps` tokens (the overlap
// token checked and dropped).
void read_rows(ElmoWindows& w, size_t windows, size_t steps, size_t begin, size_t end,
               std::vector<std::vector<int32_t>>& forward, std::vector<std::vector<int32_t>>& backward) {
  forward.assign(end - begin, {});
  backward.assign(end - begin, {});
  ElmoWindowTokens t;
  for (size_t k = 0; k < windows; ++k) {
    w.peek(steps, begin, end, t);
    w.advance(steps);
    ASSERT_EQ(t.rows, end - begin);
    for (size_t r = 0; r < t.rows; ++r) {
      const int32_t* f = t.forward.data() + r * (steps + 1);
      const int32_t* b = t.backward.data() + r * (steps + 1);
      if (!forward[r].empty()) {  // this window starts where the last one's target was
        ASSERT_EQ(forward[r].back(), f[0]);
        ASSERT_EQ(backward[r].back(), b[0]);
        forward[r].pop_back();
        backward[r].pop_back();
      }
      forward[r].insert(forward[r].end(), f, f + steps + 1);
      backward[r].insert(backward[r].end(), b, b + steps + 1);
    }
  }
}

TEST(ElmoWindows, RowsReadWholeSentencesAndEveryOneOncePerEpoch) {
  Fixture fx(500);
  const size_t rows = 8, steps = 20;
  // Enough windows for every row to finish its first epoch's sentences (500 / 8 · 31 tokens at most).
  std::vector<std::vector<int32_t>> forward, backward;
  const TokenDataset data = TokenDataset::open(fx.path);
  ElmoWindows windows(data, all_sentences(500), rows, 11);
  read_rows(windows, 110, steps, 0, rows, forward, backward);
  std::map<int32_t, int> seen;  // sentence → times read in the first epoch
  for (size_t r = 0; r < rows; ++r) {
    size_t at = 0;
    int count = 0;
    const size_t expected = (500 - r + rows - 1) / rows;
    while (count < static_cast<int>(expected)) {
      ASSERT_LT(at, forward[r].size()) << "row " << r << " ran out after " << count << " sentences";
      ASSERT_EQ(forward[r][at], 0) << "row " << r << " is not at a sentence start";
      const size_t s = forward[r][at + 1] == 1 ? SIZE_MAX : static_cast<size_t>(forward[r][at + 1] - 3) / 30;
      size_t length = 2;
      while (forward[r][at + length - 1] != 1) ++length;
      if (s != SIZE_MAX) {
        ASSERT_EQ(std::vector<int32_t>(forward[r].begin() + at, forward[r].begin() + at + length), fx.sentences[s]);
        ++seen[static_cast<int32_t>(s)];
      }
      // The backward stream holds the same sentence reversed, at the same place.
      ASSERT_TRUE(std::equal(backward[r].begin() + at, backward[r].begin() + at + length,
                             forward[r].rbegin() + (forward[r].size() - at - length)));
      at += length;
      ++count;
    }
  }
  for (size_t s = 0; s < 500; ++s)
    if (fx.sentences[s].size() > 2) {
      EXPECT_EQ(seen[static_cast<int32_t>(s)], 1) << "sentence " << s;
    }
}

TEST(ElmoWindows, RowsDoNotDependOnTheOtherRowsRead) {
  Fixture fx(300);
  const TokenDataset data = TokenDataset::open(fx.path);
  ElmoWindows whole(data, all_sentences(300), 6, 3), first(data, all_sentences(300), 6, 3),
      second(data, all_sentences(300), 6, 3);
  std::vector<std::vector<int32_t>> f, b, f1, b1, f2, b2;
  read_rows(whole, 150, 7, 0, 6, f, b);  // past the first epoch
  read_rows(first, 150, 7, 0, 2, f1, b1);
  read_rows(second, 150, 7, 2, 6, f2, b2);
  f1.insert(f1.end(), f2.begin(), f2.end());
  b1.insert(b1.end(), b2.begin(), b2.end());
  EXPECT_EQ(f, f1);
  EXPECT_EQ(b, b1);
  EXPECT_EQ(whole.cursors(), first.cursors());  // every rank advances every row's cursor
}

TEST(ElmoWindows, CursorsRestoreTheContinuationAndEpochsDiffer) {
  Fixture fx(64);
  const TokenDataset data = TokenDataset::open(fx.path);
  ElmoWindows a(data, all_sentences(64), 4, 9);
  std::vector<std::vector<int32_t>> f, b;
  read_rows(a, 40, 20, 0, 4, f, b);
  ElmoWindows resumed(data, all_sentences(64), 4, 9);
  resumed.restore(a.cursors());
  std::vector<std::vector<int32_t>> fa, ba, fr, br;
  read_rows(a, 60, 20, 0, 4, fa, ba);
  read_rows(resumed, 60, 20, 0, 4, fr, br);
  EXPECT_EQ(fa, fr);
  EXPECT_EQ(ba, br);
  EXPECT_GT(a.cursors()[0].epoch, 2u);
  // Another seed orders the sentences otherwise.
  ElmoWindows other(data, all_sentences(64), 4, 10);
  std::vector<std::vector<int32_t>> fo, bo, fs, bs;
  ElmoWindows same(data, all_sentences(64), 4, 9);
  read_rows(other, 10, 20, 0, 4, fo, bo);
  read_rows(same, 10, 20, 0, 4, fs, bs);
  EXPECT_NE(fo, fs);
}

TEST(ElmoWindows, RefusesTooFewSentencesAndBadCursors) {
  Fixture fx(5);
  const TokenDataset data = TokenDataset::open(fx.path);
  EXPECT_THROW(ElmoWindows(data, all_sentences(5), 6, 1), Error);
  ElmoWindows w(data, all_sentences(5), 5, 1);
  std::vector<ElmoRowCursor> bad(5);
  bad[1].index = 1;  // row 1 has one sentence per epoch
  EXPECT_THROW(w.restore(bad), Error);
  bad[1].index = 0;
  bad[2].offset = 40;  // beyond any sentence
  EXPECT_THROW(w.restore(bad), Error);
  EXPECT_THROW(w.restore(std::vector<ElmoRowCursor>(4)), Error);
}

}  // namespace
}  // namespace kglm::train
