#include "train/batch_order.hpp"

#include "core/error.hpp"
#include "core/rng.hpp"

namespace kglm::train {

BatchOrder::BatchOrder(std::vector<std::vector<uint32_t>> groups, std::optional<sample::LanguageSampler> sampler,
                       uint64_t seed)
    : groups_(std::move(groups)), sampler_(std::move(sampler)), seed_(seed) {
  if (groups_.empty()) throw Error("batch order: no training sequences");
  order_.resize(groups_.size());
  cursors_.resize(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) shuffle(g);
}

void BatchOrder::shuffle(size_t g) {
  std::vector<uint32_t>& order = order_[g];
  order = groups_[g];
  // Keyed by (seed, group, epoch): any epoch's order can be rebuilt on resume.
  Rng rng(seed_, (static_cast<uint64_t>(g) << 40) | cursors_[g].epoch, 0x6f726472u);  // "ordr"
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
}

void BatchOrder::next(uint64_t batch, size_t count, std::vector<uint32_t>& out) {
  size_t g = sampler_ ? sampler_->pick(batch) : 0;
  if (groups_[g].empty()) throw Error("batch order: group " + std::to_string(g) + " has no sequences");
  OrderCursor& c = cursors_[g];
  for (size_t k = 0; k < count; ++k) {
    if (c.position == order_[g].size()) {
      ++c.epoch;
      c.position = 0;
      shuffle(g);
    }
    out.push_back(order_[g][c.position++]);
  }
}

void BatchOrder::restore(const std::vector<OrderCursor>& cursors) {
  if (cursors.size() != groups_.size())
    throw Error("batch order: the saved state has " + std::to_string(cursors.size()) + " groups, the data " +
                std::to_string(groups_.size()));
  cursors_ = cursors;
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (cursors_[g].position > groups_[g].size())
      throw Error("batch order: the saved position is beyond the data (was the dataset changed?)");
    shuffle(g);
  }
}

}  // namespace kglm::train
