// Token datasets in several files: the names `pretrain prepare --shards N` gives them, the --data
// forms that name them (a path, a comma-separated list, a glob), and the writer that deals a
// prepare run's sequences out to N files.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "train/token_dataset.hpp"

namespace kglm::train {

// Shard `shard` (0-based) of `shards` of PATH: data.h5 → data-00001-of-00004.h5.
std::string shard_path(const std::string& path, size_t shard, size_t shards);

// The files of --data: "a.h5", "a.h5,b.h5", or a glob ("data-*-of-00004.h5", matches sorted).
// Throws UsageError when a glob matches nothing.
std::vector<std::string> dataset_paths(const std::string& spec);

// Writes sequence k of a run into shard k mod N (N = 1: PATH itself), so that the shards are of
// equal size whatever the inputs' order; each shard is an ordinary token dataset, written
// atomically (TokenDatasetWriter).
class ShardedTokenWriter {
 public:
  ShardedTokenWriter(const std::string& path, size_t shards, const TokenDatasetInfo& info,
                     const Provenance& provenance);

  void append(const SequenceBatch& batch);
  // The file is a job array's part (one file: shards == 1); TokenDatasetWriter::set_job_part.
  void set_job_part(const Shard& part, const std::string& run, const std::vector<int64_t>& first_bytes);
  void finish();

  uint64_t sequences() const;
  uint64_t tokens() const;
  // Every shard's languages, in order of first use, and their sequences.
  std::vector<std::string> languages() const;
  std::vector<uint64_t> language_sequences() const;
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  std::vector<std::string> paths_;
  std::vector<std::unique_ptr<TokenDatasetWriter>> writers_;
  std::vector<SequenceBatch> dealt_;  // reused by append()
  uint64_t next_ = 0;                 // the run's number of the next sequence
};

}  // namespace kglm::train
