#include "train/token_shards.hpp"

#include <glob.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "core/error.hpp"
#include "core/temporaries.hpp"

namespace kglm::train {

std::string shard_path(const std::string& path, size_t shard, size_t shards) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  const std::string stem = has_extension ? path.substr(0, dot) : path;
  const std::string extension = has_extension ? path.substr(dot) : "";
  char number[48];
  std::snprintf(number, sizeof number, "-%05zu-of-%05zu", shard, shards);
  return stem + number + extension;
}

std::vector<std::string> dataset_paths(const std::string& spec) {
  std::vector<std::string> paths;
  size_t begin = 0;
  while (begin <= spec.size()) {
    const size_t comma = std::min(spec.find(',', begin), spec.size());
    const std::string item = spec.substr(begin, comma - begin);
    begin = comma + 1;
    if (item.empty()) throw UsageError("--data '" + spec + "': an empty name in the list");
    if (item.find_first_of("*?[") == std::string::npos) {
      paths.push_back(item);
      continue;
    }
    glob_t found{};
    const int status = ::glob(item.c_str(), 0, nullptr, &found);
    if (status == 0)
      for (size_t k = 0; k < found.gl_pathc; ++k) paths.emplace_back(found.gl_pathv[k]);  // sorted by glob
    globfree(&found);
    if (status == GLOB_NOMATCH) throw UsageError("--data '" + item + "' matches no file");
    if (status != 0) throw Error("--data '" + item + "': cannot list the matching files");
  }
  return paths;
}

ShardedTokenWriter::ShardedTokenWriter(const std::string& path, size_t shards, const TokenDatasetInfo& info,
                                       const Provenance& provenance)
    : dealt_(shards) {
  if (shards < 1 || shards > 99999) throw UsageError("--shards must be in 1..99999");
  // One id for the run's shards, which readers check (TokenDataset::open).
  std::random_device entropy;
  char run[17];
  std::snprintf(run, sizeof run, "%08x%08x", entropy(), entropy());
  for (size_t s = 0; s < shards; ++s) {
    paths_.push_back(shards == 1 ? path : shard_path(path, s, shards));
    writers_.push_back(std::make_unique<TokenDatasetWriter>(paths_.back(), info, provenance));
    writers_.back()->set_shard(s, shards, run);
  }
}

void ShardedTokenWriter::append(const SequenceBatch& batch) {
  if (writers_.size() == 1) {
    writers_.front()->append(batch);
    next_ += batch.size();
    return;
  }
  for (SequenceBatch& d : dealt_) d.clear();
  uint64_t begin = 0;
  for (size_t k = 0; k < batch.size(); ++k) {
    SequenceBatch& d = dealt_[next_++ % dealt_.size()];
    for (uint64_t t = begin; t < batch.ends[k]; ++t) d.push_token(batch.ids[t], batch.flags[t], batch.span[t]);
    begin = batch.ends[k];
    d.end_sequence(batch.languages[batch.lang[k]], static_cast<SequenceKind>(batch.kind[k]), batch.source_line[k],
                   batch.input[k]);
  }
  for (size_t s = 0; s < writers_.size(); ++s)
    if (dealt_[s].size() > 0) writers_[s]->append(dealt_[s]);
}

void ShardedTokenWriter::set_job_part(const Shard& part, const std::string& run,
                                      const std::vector<int64_t>& first_bytes) {
  for (auto& w : writers_) w->set_job_part(part, run, first_bytes);
}

void ShardedTokenWriter::finish() {
  // Every shard complete before the first is renamed into place: the renames follow one another at
  // once, and a reader refuses a mix that an interruption between them would leave.
  for (auto& w : writers_) w->close();
  const CommitSection together;  // an interrupting signal waits for the renames
  for (auto& w : writers_) w->commit();
}

uint64_t ShardedTokenWriter::sequences() const {
  uint64_t n = 0;
  for (const auto& w : writers_) n += w->sequences();
  return n;
}

uint64_t ShardedTokenWriter::tokens() const {
  uint64_t n = 0;
  for (const auto& w : writers_) n += w->tokens();
  return n;
}

std::vector<std::string> ShardedTokenWriter::languages() const {
  std::vector<std::string> names;
  for (const auto& w : writers_)
    for (const std::string& l : w->languages())
      if (std::find(names.begin(), names.end(), l) == names.end()) names.push_back(l);
  return names;
}

std::vector<uint64_t> ShardedTokenWriter::language_sequences() const {
  const std::vector<std::string> names = languages();
  std::vector<uint64_t> counts(names.size());
  for (const auto& w : writers_)
    for (size_t l = 0; l < w->languages().size(); ++l)
      counts[static_cast<size_t>(std::find(names.begin(), names.end(), w->languages()[l]) - names.begin())] +=
          w->language_sequences()[l];
  return counts;
}

}  // namespace kglm::train
