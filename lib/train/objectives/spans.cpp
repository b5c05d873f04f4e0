#include "train/objectives/spans.hpp"

#include <algorithm>

namespace kglm::train {

void collect_mentions(const Sequence& seq, const Vocabulary& vocab, std::vector<Mention>& out) {
  out.clear();
  for (size_t i = 0; i < seq.size(); ++i) {
    const int32_t s = seq.span[i];
    const uint8_t f = seq.flags[i];
    if (s < 0 || vocab.never_target(seq, i) || !(f & (kInEntity | kInRelation))) continue;
    // Spans are usually met in order; a later token of an earlier span is looked up.
    auto it = !out.empty() && out.back().span == s
                  ? out.end() - 1
                  : std::find_if(out.begin(), out.end(), [s](const Mention& m) { return m.span == s; });
    if (it == out.end()) {
      out.push_back({s, false, {}});
      it = out.end() - 1;
    }
    it->positions.push_back(static_cast<uint32_t>(i));
    if ((f & kInRelation) && !(f & kInEntity)) it->relation = true;
  }
  std::sort(out.begin(), out.end(), [](const Mention& a, const Mention& b) { return a.span < b.span; });
}

}  // namespace kglm::train
