#include "train/token_block_cache.hpp"

#include <algorithm>

namespace kglm::train {

std::shared_ptr<const TokenBlock> TokenBlockCache::get(uint64_t key, const std::function<TokenBlock()>& load) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = where_.find(key); it != where_.end()) {
      ++stats_.hits;
      recent_.splice(recent_.begin(), recent_, it->second);
      return it->second->second;
    }
    ++stats_.misses;
  }
  // Read outside the lock: a slow read does not hold up hits of other blocks.
  auto block = std::make_shared<const TokenBlock>(load());
  std::lock_guard lock(mutex_);
  stats_.bytes_read += block->bytes();
  if (auto it = where_.find(key); it != where_.end()) return it->second->second;  // loaded meanwhile
  recent_.emplace_front(key, block);
  where_.emplace(key, recent_.begin());
  held_ += block->bytes();
  stats_.peak_bytes = std::max(stats_.peak_bytes, held_);
  // Drop the least recently used blocks, never the one just read.
  while (held_ > capacity_ && recent_.size() > 1) {
    held_ -= recent_.back().second->bytes();
    where_.erase(recent_.back().first);
    recent_.pop_back();
  }
  return block;
}

TokenCacheStats TokenBlockCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace kglm::train
