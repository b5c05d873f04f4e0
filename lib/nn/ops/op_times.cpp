#include "nn/ops/op_times.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace kglm::nn {

namespace {

thread_local const char* scope_class = nullptr;
thread_local bool timing = false;

const char* op_class(std::string_view op) {
  if (scope_class) return scope_class;
  auto has = [&](std::string_view s) { return op.find(s) != std::string_view::npos; };
  if (has("attention")) return "attention";
  if (has("linear") || has("gemm")) return "linear";
  if (has("adamw") || has("clip") || has("norm_sq")) return "optimizer";
  if (has("norm") || has("gelu") || has("relu") || has("tanh") || has("dropout") || has("embedding") || has("add") ||
      has("scale") || has("rows") || has("convert") || has("copy"))
    return "elementwise";
  if (has("cross_entropy")) return "head";
  return "other";
}

struct Totals {
  std::mutex mutex;
  std::map<std::string, std::pair<long, double>, std::less<>> ops;
  std::string path;
  ~Totals() {  // written at exit
    if (path.empty() || ops.empty()) return;
    std::map<std::string, double> classes;
    for (const auto& [op, t] : ops) classes[op.substr(0, op.find('/'))] += t.second;
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return;
    std::fprintf(f, "{\"classes\": {");
    const char* sep = "";
    for (const auto& [c, s] : classes) std::fprintf(f, "%s\"%s\": %.6f", std::exchange(sep, ", "), c.c_str(), s);
    std::fprintf(f, "}, \"ops\": {");
    sep = "";
    for (const auto& [op, t] : ops)
      std::fprintf(f, "%s\"%s\": [%ld, %.6f]", std::exchange(sep, ", "), op.c_str(), t.first, t.second);
    std::fprintf(f, "}}\n");
    std::fclose(f);
  }
};

Totals& totals() {
  static Totals t;
  return t;
}

}  // namespace

bool op_times_enabled() {
  static const bool on = [] {
    const char* path = std::getenv("KGLM_OP_TIMES");
    if (!path || !*path) return false;
    totals().path = path;
    return true;
  }();
  return on;
}

OpClassScope::OpClassScope(const char* name) : previous_(scope_class) { scope_class = name; }
OpClassScope::~OpClassScope() { scope_class = previous_; }

namespace detail {

bool OpTimer::enter() { return !std::exchange(timing, true); }

void OpTimer::leave(std::string_view op, std::chrono::steady_clock::duration elapsed) {
  timing = false;
  // Keyed "class/op", so that the same op inside and outside a head scope stays apart.
  std::string key = std::string(op_class(op)) + "/" + std::string(op);
  Totals& t = totals();
  std::lock_guard lock(t.mutex);
  auto& entry = t.ops[key];
  entry.first += 1;
  entry.second += std::chrono::duration<double>(elapsed).count();
}

}  // namespace detail
}  // namespace kglm::nn
