#include "nn/loss_scaler.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace kglm::nn {

bool LossScaler::update(bool overflowed) {
  if (!dynamic_) return false;
  if (overflowed) {
    clean_steps_ = 0;
    // Below 1 the scale would only shrink gradients further; an overflow at S = 1 is a divergence.
    if (scale_ <= 1.0) throw Error("loss scaling: gradients overflow even at scale 1 (diverged; lower --lr)");
    scale_ /= 2;
    return true;
  }
  if (++clean_steps_ < kGrowthInterval) return false;
  clean_steps_ = 0;
  scale_ *= 2;
  return true;
}

void LossScaler::restore(double scale, int64_t clean_steps) {
  if (!(scale >= 1.0) || !std::isfinite(scale) || clean_steps < 0 || clean_steps >= kGrowthInterval)
    throw Error("loss scaling: invalid saved state (scale " + std::to_string(scale) + ", clean steps " +
                std::to_string(clean_steps) + ")");
  scale_ = dynamic_ ? scale : 1.0;
  clean_steps_ = dynamic_ ? clean_steps : 0;
}

}  // namespace kglm::nn
