// ELMo's training batches as bilm-tf builds them: `rows` endless token streams, each a sequence of
// whole sentences (<S> … </S>) laid end to end, cut into windows of `steps` tokens with no padding;
// the LSTM state of a row is carried from one window to the next. Each window's targets are the
// stream's next tokens, so a window reads steps + 1 tokens and moves on by steps. The backward
// language model reads every sentence reversed, in the same order.
//
// Row b's sentences are those at positions b, b + rows, b + 2·rows, … of each epoch's seeded
// permutation of the training sentences: a row's stream depends on its number alone, so data-
// parallel ranks (each reading its own rows) see exactly the windows of one process. bilm-tf lets
// the rows take sentences from one shared generator as they run out, which depends on every row's
// lengths, and shuffles the two directions separately; the streams here are equally random and
// can be rebuilt from a cursor per row (checkpoints).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "train/token_dataset.hpp"

namespace kglm::train {

// Where a row's stream stands: its `index`-th sentence of `epoch`, at token `offset`.
struct ElmoRowCursor {
  uint64_t epoch = 0, index = 0, offset = 0;
  bool operator==(const ElmoRowCursor&) const = default;
};

// A window's token ids, row-major: [rows][steps + 1] (the last column is the next window's first).
struct ElmoWindowTokens {
  size_t rows = 0, steps = 0;
  std::vector<int32_t> forward, backward;
};

class ElmoWindows {
 public:
  // sentences: the training sentences' indices in `data` (at least `rows` of them).
  ElmoWindows(const TokenDataset& data, std::vector<uint32_t> sentences, size_t rows, uint64_t seed);

  // The next window of rows [begin, end), without moving on.
  void peek(size_t steps, size_t begin, size_t end, ElmoWindowTokens& out);
  // Moves every row on by `steps` tokens (sentence lengths only: no tokens are read).
  void advance(size_t steps);

  size_t rows() const { return cursors_.size(); }
  const std::vector<ElmoRowCursor>& cursors() const { return cursors_; }
  void restore(const std::vector<ElmoRowCursor>& cursors);

 private:
  uint32_t sentence(size_t row, const ElmoRowCursor& c);  // the dataset index at a cursor
  size_t sentences_in_epoch(size_t row) const;
  void step_on(size_t row, ElmoRowCursor& c, uint64_t tokens);
  void forget_old_epochs();

  const TokenDataset& data_;
  std::vector<uint32_t> sentences_;
  uint64_t seed_;
  std::vector<ElmoRowCursor> cursors_;
  std::map<uint64_t, std::vector<uint32_t>> permutations_;  // by epoch: those some row still needs
};

}  // namespace kglm::train
