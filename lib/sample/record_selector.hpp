// Which records of one language a run writes, decided in a single sequential pass: whole passes
// (every record `copies` times) for up-sampling, plus a seeded selection without replacement for
// the rest of the target.
//
// The selection is Knuth's selection sampling (TAOCP 3.4.2, Algorithm S) generalised to records of
// different sizes: a record is taken with probability (units still wanted) / (units still to
// come). With unit sizes (lines) it takes exactly the target, each record with equal chance; with
// tokens or bytes it ends within one record's size of the target. Written by hand: no library
// offers a streaming weighted selection.
#pragma once

#include <cstdint>

#include "core/rng.hpp"

namespace kglm::sample {

class RecordSelector {
 public:
  // total: the language's size in units (all its records); target: the units to write.
  RecordSelector(uint64_t total, uint64_t target, uint64_t seed, uint64_t stream_key)
      : whole_passes_(total ? target / total : 0),
        wanted_(total ? target % total : 0),
        remaining_(total),
        rng_(seed, stream_key, kSelectionStream) {}

  // How many times the next record (of `units` units) is written: whole_passes() or one more.
  uint64_t copies(uint64_t units) {
    uint64_t extra = 0;
    if (wanted_ > 0 && remaining_ > 0) {
      // Records of size 0 take the current rate, so they are kept in the same proportion.
      if (wanted_ >= remaining_ || rng_.uniform() * static_cast<double>(remaining_) < static_cast<double>(wanted_)) {
        extra = 1;
        wanted_ -= units < wanted_ ? units : wanted_;
      }
    }
    remaining_ -= units < remaining_ ? units : remaining_;
    return whole_passes_ + extra;
  }

  uint64_t whole_passes() const { return whole_passes_; }

 private:
  static constexpr uint32_t kSelectionStream = 0x53454c;  // "SEL"
  uint64_t whole_passes_;
  uint64_t wanted_;
  uint64_t remaining_;
  Rng rng_;
};

}  // namespace kglm::sample
