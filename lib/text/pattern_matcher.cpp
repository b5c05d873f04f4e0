#include "text/pattern_matcher.hpp"

#include <algorithm>

namespace kglm::text {

void PatternMatcher::clear() {
  nodes_.assign(1, Node{});
  outputs_.clear();
  root_.fill(kNone);
  if (keys_.empty()) {
    keys_.assign(1024, 0);
    values_.assign(1024, 0);
  } else {
    std::fill(keys_.begin(), keys_.end(), 0);
  }
  mask_ = keys_.size() - 1;
  used_ = 0;
}

void PatternMatcher::grow() {
  std::vector<uint64_t> old_keys(keys_.size() * 2, 0);
  std::vector<uint32_t> old_values(values_.size() * 2, 0);
  old_keys.swap(keys_);
  old_values.swap(values_);
  mask_ = keys_.size() - 1;
  for (size_t i = 0; i < old_keys.size(); ++i) {
    if (old_keys[i] == 0) continue;
    size_t slot = hash(old_keys[i]) & mask_;
    while (keys_[slot] != 0) slot = (slot + 1) & mask_;
    keys_[slot] = old_keys[i];
    values_[slot] = old_values[i];
  }
}

uint32_t PatternMatcher::add_child(uint32_t node, uint8_t byte) {
  if (uint32_t existing = child(node, byte); existing != kNone) return existing;
  const uint32_t created = static_cast<uint32_t>(nodes_.size());
  Node n;
  n.parent = node;
  n.depth = nodes_[node].depth + 1;
  n.byte = byte;
  nodes_.push_back(n);
  if (node == 0) {
    root_[byte] = created;
    return created;
  }
  if (2 * (used_ + 1) > keys_.size()) grow();
  const uint64_t key = (uint64_t{node} << 8 | byte) + 1;
  size_t slot = hash(key) & mask_;
  while (keys_[slot] != 0) slot = (slot + 1) & mask_;
  keys_[slot] = key;
  values_[slot] = created;
  ++used_;
  return created;
}

void PatternMatcher::add(std::string_view pattern, uint32_t tag) {
  if (nodes_.empty()) clear();
  if (pattern.empty()) return;
  uint32_t node = 0;
  for (char c : pattern) node = add_child(node, static_cast<uint8_t>(c));
  outputs_.push_back({node, tag});
}

void PatternMatcher::build() {
  if (nodes_.empty()) clear();
  // Outputs grouped by node (stable: tags keep their order of addition).
  std::stable_sort(outputs_.begin(), outputs_.end(), [](const Output& a, const Output& b) { return a.node < b.node; });
  for (Node& n : nodes_) n.out_begin = n.out_end = 0;
  for (uint32_t o = 0; o < outputs_.size(); ++o) {
    Node& n = nodes_[outputs_[o].node];
    if (n.out_begin == n.out_end) n.out_begin = o;
    n.out_end = o + 1;
  }
  // Fail links in breadth-first order: a node's fail target is shallower, so it is done already.
  std::vector<uint32_t> order(nodes_.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return nodes_[a].depth < nodes_[b].depth; });
  for (uint32_t id : order) {
    Node& n = nodes_[id];
    if (n.depth <= 1) {
      n.fail = 0;
    } else {
      uint32_t f = nodes_[n.parent].fail;
      uint32_t next;
      while ((next = child(f, n.byte)) == kNone && f != 0) f = nodes_[f].fail;
      n.fail = next == kNone ? 0 : next;
    }
    const Node& f = nodes_[n.fail];
    n.dict = id == 0 ? 0 : (f.out_begin != f.out_end ? n.fail : f.dict);
  }
}

}  // namespace kglm::text
