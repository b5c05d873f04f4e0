// Multi-pattern matching (Aho–Corasick) over bytes: every occurrence of every pattern in one pass
// over the text, whatever the number of patterns. Written here because Debian packages no C++
// Aho–Corasick library; transitions live in one open-addressing hash table (plus a direct table
// for the root), so a matcher over a few thousand names is built in microseconds and reused.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace kglm::text {

class PatternMatcher {
 public:
  // Forgets all patterns (keeps the memory for the next build).
  void clear();
  // Adds pattern (bytes; empty patterns are ignored) reported with tag. Call build() afterwards.
  void add(std::string_view pattern, uint32_t tag);
  void build();
  size_t pattern_count() const { return outputs_.size(); }

  // Calls on_match(begin, end, tag) for every occurrence, ordered by end offset.
  template <class OnMatch>
  void scan(std::string_view text, OnMatch&& on_match) const {
    uint32_t state = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      const uint8_t byte = static_cast<uint8_t>(text[i]);
      uint32_t next = kNone;
      while ((next = child(state, byte)) == kNone && state != 0) state = nodes_[state].fail;
      state = next == kNone ? 0 : next;
      for (uint32_t n = nodes_[state].out_begin != nodes_[state].out_end ? state : nodes_[state].dict; n != 0;
           n = nodes_[n].dict) {
        for (uint32_t o = nodes_[n].out_begin; o < nodes_[n].out_end; ++o)
          on_match(i + 1 - nodes_[n].depth, i + 1, outputs_[o].tag);
      }
    }
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Node {
    uint32_t parent = 0;
    uint32_t depth = 0;
    uint32_t fail = 0;
    uint32_t dict = 0;  // nearest node on the fail chain with outputs (0: none)
    uint32_t out_begin = 0;
    uint32_t out_end = 0;
    uint8_t byte = 0;
  };
  struct Output {
    uint32_t node;
    uint32_t tag;
  };

  uint32_t child(uint32_t node, uint8_t byte) const {
    if (node == 0) return root_[byte];
    const uint64_t key = (uint64_t{node} << 8 | byte) + 1;
    for (size_t slot = hash(key) & mask_;; slot = (slot + 1) & mask_) {
      if (keys_[slot] == key) return values_[slot];
      if (keys_[slot] == 0) return kNone;
    }
  }
  static size_t hash(uint64_t key) { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 20); }
  uint32_t add_child(uint32_t node, uint8_t byte);
  void grow();

  std::vector<Node> nodes_;
  std::vector<Output> outputs_;
  std::array<uint32_t, 256> root_{};
  std::vector<uint64_t> keys_;  // (node << 8 | byte) + 1; 0 = empty slot
  std::vector<uint32_t> values_;
  size_t mask_ = 0;
  size_t used_ = 0;
};

}  // namespace kglm::text
