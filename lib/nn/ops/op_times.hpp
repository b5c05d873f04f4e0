// Where a CPU run spends its time, by op class: with KGLM_OP_TIMES=FILE in the environment, every
// op dispatched to the CPU is timed (wall clock, the outermost op only when ops nest) and FILE gets,
// at exit, a JSON object {"classes": {class: seconds}, "ops": {op: [calls, seconds]}}. Classes:
// linear (the gemms of every linear layer), attention, elementwise (embeddings, LayerNorm, GELU,
// dropout, residual adds, gathers), head (every op run inside an OpClassScope("head"): the task and
// MLM heads, their linears and losses included), optimizer, other. Without the variable the cost is
// one branch per op. CUDA ops are asynchronous and not timed here (use Nsight Systems).
#pragma once

#include <chrono>
#include <string_view>

namespace kglm::nn {

bool op_times_enabled();

// Within its lifetime on this thread, ops count towards `name` instead of their own class.
class OpClassScope {
 public:
  explicit OpClassScope(const char* name);
  ~OpClassScope();
  OpClassScope(const OpClassScope&) = delete;
  OpClassScope& operator=(const OpClassScope&) = delete;

 private:
  const char* previous_;
};

namespace detail {

// Times the op named `op` from construction to destruction when op_times_enabled().
class OpTimer {
 public:
  explicit OpTimer(std::string_view op) : op_(op), on_(op_times_enabled() && enter()) {
    if (on_) start_ = std::chrono::steady_clock::now();
  }
  ~OpTimer() {
    if (on_) leave(op_, std::chrono::steady_clock::now() - start_);
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  static bool enter();  // false when an op is already being timed on this thread
  static void leave(std::string_view op, std::chrono::steady_clock::duration elapsed);
  std::string_view op_;
  bool on_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace detail
}  // namespace kglm::nn
