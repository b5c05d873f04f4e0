#include "train/elmo_windows.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace kglm::train {

ElmoWindows::ElmoWindows(const TokenDataset& data, std::vector<uint32_t> sentences, size_t rows, uint64_t seed)
    : data_(data), sentences_(std::move(sentences)), seed_(seed), cursors_(rows) {
  if (rows == 0) throw Error("ELMo windows: no rows");
  if (sentences_.size() < rows)
    throw Error("ELMo: " + std::to_string(sentences_.size()) + " training sentences cannot fill " +
                std::to_string(rows) + " windows per batch (lower --batch or give more text)");
}

size_t ElmoWindows::sentences_in_epoch(size_t row) const {
  return (sentences_.size() - row + cursors_.size() - 1) / cursors_.size();
}

uint32_t ElmoWindows::sentence(size_t row, const ElmoRowCursor& c) {
  auto it = permutations_.find(c.epoch);
  if (it == permutations_.end()) {
    std::vector<uint32_t> order = sentences_;
    // Keyed by (seed, epoch): any epoch's order can be rebuilt on resume.
    Rng rng(seed_, c.epoch, 0x656c6d6fu);  // "elmo"
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    it = permutations_.emplace(c.epoch, std::move(order)).first;
  }
  return it->second[row + c.index * cursors_.size()];
}

void ElmoWindows::step_on(size_t row, ElmoRowCursor& c, uint64_t tokens) {
  c.offset += tokens;
  for (;;) {
    const uint64_t length = data_.length(sentence(row, c));
    if (c.offset < length) return;
    c.offset -= length;
    if (++c.index == sentences_in_epoch(row)) c.index = 0, ++c.epoch;
  }
}

void ElmoWindows::peek(size_t steps, size_t begin, size_t end, ElmoWindowTokens& out) {
  if (begin > end || end > rows()) throw Error("ELMo windows: rows out of range");
  const size_t width = steps + 1;
  out.rows = end - begin, out.steps = steps;
  out.forward.resize(out.rows * width);
  out.backward.resize(out.rows * width);
  for (size_t row = begin; row < end; ++row) {
    ElmoRowCursor c = cursors_[row];
    size_t filled = 0;
    while (filled < width) {
      const Sequence s = data_.sequence(sentence(row, c));
      const size_t length = s.size();
      const size_t take = std::min(width - filled, length - static_cast<size_t>(c.offset));
      int32_t* forward = out.forward.data() + (row - begin) * width + filled;
      int32_t* backward = out.backward.data() + (row - begin) * width + filled;
      for (size_t k = 0; k < take; ++k) {
        const size_t at = static_cast<size_t>(c.offset) + k;
        forward[k] = s.ids[at];
        backward[k] = s.ids[length - 1 - at];
      }
      filled += take;
      step_on(row, c, take);
    }
  }
}

void ElmoWindows::advance(size_t steps) {
  for (size_t row = 0; row < rows(); ++row) step_on(row, cursors_[row], steps);
  forget_old_epochs();
}

void ElmoWindows::forget_old_epochs() {
  uint64_t oldest = UINT64_MAX;
  for (const ElmoRowCursor& c : cursors_) oldest = std::min(oldest, c.epoch);
  permutations_.erase(permutations_.begin(), permutations_.lower_bound(oldest));
}

void ElmoWindows::restore(const std::vector<ElmoRowCursor>& cursors) {
  if (cursors.size() != rows())
    throw Error("ELMo windows: the saved state has " + std::to_string(cursors.size()) + " rows, the run " +
                std::to_string(rows()));
  for (size_t row = 0; row < rows(); ++row) {
    const ElmoRowCursor& c = cursors[row];
    if (c.index >= sentences_in_epoch(row))
      throw Error("ELMo windows: row " + std::to_string(row) + "'s saved sentence is beyond its epoch");
    cursors_[row] = c;
    if (c.offset >= data_.length(sentence(row, c)))
      throw Error("ELMo windows: row " + std::to_string(row) + "'s saved offset is beyond its sentence");
  }
  forget_old_epochs();
}

}  // namespace kglm::train
