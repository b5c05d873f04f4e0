// A bounded cache of token blocks, so that a dataset far larger than memory trains with a few GB
// per rank: the token columns (ids, flags, span) are read in blocks of kTokenBlock tokens (the
// HDF5 chunk prepare writes, so each read decompresses whole chunks once) through HDF5 hyperslabs,
// and the least recently used blocks are dropped once the cache holds more than its capacity.
// Hand-written: an LRU map is a few lines, and no Debian library offers one for this.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace kglm::train {

// Tokens per block: prepare's HDF5 chunk of the token columns.
inline constexpr uint64_t kTokenBlock = uint64_t{1} << 16;
inline constexpr uint64_t kTokenBytes = 2 * sizeof(int32_t) + sizeof(uint8_t);  // id, span, flags

struct TokenBlock {
  std::vector<int32_t> ids;
  std::vector<uint8_t> flags;
  std::vector<int32_t> span;
  size_t bytes() const { return ids.size() * kTokenBytes; }
};

struct TokenCacheStats {
  uint64_t hits = 0, misses = 0;  // block lookups
  uint64_t bytes_read = 0;        // token bytes read from the files
  uint64_t peak_bytes = 0;        // the most the cache held at once
};

class TokenBlockCache {
 public:
  explicit TokenBlockCache(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // Block `key`, read by `load` when absent. The block stays valid for as long as the caller holds
  // it, even if the cache drops it meanwhile. Safe to call from several threads.
  std::shared_ptr<const TokenBlock> get(uint64_t key, const std::function<TokenBlock()>& load);

  uint64_t capacity() const { return capacity_; }
  TokenCacheStats stats() const;

 private:
  using Entry = std::pair<uint64_t, std::shared_ptr<const TokenBlock>>;
  uint64_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> recent_;  // most recently used first
  std::unordered_map<uint64_t, std::list<Entry>::iterator> where_;
  uint64_t held_ = 0;
  TokenCacheStats stats_;
};

}  // namespace kglm::train
