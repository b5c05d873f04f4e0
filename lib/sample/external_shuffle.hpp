// A uniformly random order of a record stream larger than memory (records are lines). Records
// collect in a buffer of --memory-mb; a full buffer is shuffled (Fisher–Yates) and spilled to an
// unnamed temporary run file; at the end the runs are merged by drawing the next record from a run
// chosen with probability proportional to the records it has left, which makes every permutation
// of the whole stream equally likely. Memory stays near the budget whatever the input size.
// Written by hand: Debian has no C++ library for external shuffling.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/output_stream.hpp"
#include "core/rng.hpp"

namespace kglm::sample {

class ExternalShuffle {
 public:
  // tmp_dir: where spilled runs go (files are unlinked at once, so nothing is left behind even
  // after a kill); memory_bytes: the buffer budget; (seed, stream_key) pick the random stream.
  ExternalShuffle(std::string tmp_dir, size_t memory_bytes, uint64_t seed, uint64_t stream_key);
  ~ExternalShuffle();
  ExternalShuffle(const ExternalShuffle&) = delete;
  ExternalShuffle& operator=(const ExternalShuffle&) = delete;

  void add(std::string_view record);  // one line, without its '\n'
  // Writes every record added, each followed by '\n', in random order; the shuffle is then empty.
  void finish(OutputStream& out);

  uint64_t records() const { return records_; }
  uint64_t runs_spilled() const { return runs_spilled_; }

 private:
  struct FileRun;
  void shuffle_buffer();
  void spill();
  void clear_buffer();
  std::string_view buffered(size_t i) const;

  std::string tmp_dir_;
  size_t memory_;
  Rng rng_;
  // A buffered record; one 16-byte entry, so each swap of the shuffle touches one cache line.
  struct Entry {
    uint64_t start;  // in arena_
    uint64_t length;
  };
  std::string arena_;  // buffered records, back to back
  std::vector<Entry> entries_;
  std::vector<std::unique_ptr<FileRun>> runs_;
  uint64_t records_ = 0;
  uint64_t runs_spilled_ = 0;
};

}  // namespace kglm::sample
