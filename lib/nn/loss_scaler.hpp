// Dynamic loss scaling for fp16 training (Micikevicius et al., "Mixed Precision Training"): the
// loss is multiplied by S before the backward pass so that small gradients survive in fp16, and
// the gradients are divided by S again before the update. S starts at 2^16; a step whose
// gradients overflow (inf or NaN) is skipped and S halves; after 2000 clean steps in a row S
// doubles. bf16 and fp32 need none (their exponent range is fp32's): S stays 1.
#pragma once

#include <cstdint>

namespace kglm::nn {

class LossScaler {
 public:
  static constexpr double kInitialScale = 65536.0;
  static constexpr int64_t kGrowthInterval = 2000;

  explicit LossScaler(bool dynamic = false) : dynamic_(dynamic), scale_(dynamic ? kInitialScale : 1.0) {}

  bool dynamic() const { return dynamic_; }
  double scale() const { return scale_; }
  int64_t clean_steps() const { return clean_steps_; }

  // After an optimizer step: `overflowed` when its gradients were not finite (and it was skipped).
  // Returns true when the scale changed.
  bool update(bool overflowed);
  // State from a checkpoint.
  void restore(double scale, int64_t clean_steps);

 private:
  bool dynamic_;
  double scale_;
  int64_t clean_steps_ = 0;
};

}  // namespace kglm::nn
