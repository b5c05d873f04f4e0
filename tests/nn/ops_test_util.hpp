// Helpers shared by the op tests (ops_test.cpp, recurrent_ops_test.cpp): F64 tensors from a seed,
// finite-difference gradient checks, relative errors, and the device-parameterised fixture
// OpsOnDevice (instantiated once, in ops_test.cpp, over the CPU and CUDA).
#pragma once

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "nn/cuda/runtime.hpp"
#include "nn/tensor.hpp"

namespace kglm::nn {

// --- helpers -------------------------------------------------------------------------------------

inline double get(const Tensor& t, int64_t i) {
  return t.dtype() == DType::F64 ? t.data<double>()[i] : static_cast<double>(t.data<float>()[i]);
}

inline void set(Tensor& t, int64_t i, double v) {
  if (t.dtype() == DType::F64) {
    t.data<double>()[i] = v;
  } else {
    t.data<float>()[i] = static_cast<float>(v);
  }
}

// Uniform in [lo, hi), F64, reproducible from the seed.
inline Tensor random(const Shape& shape, uint64_t seed, double lo = -1, double hi = 1) {
  Tensor t = Tensor::empty(shape, DType::F64);
  Rng rng(seed, 0);
  for (int64_t i = 0; i < t.numel(); ++i) set(t, i, lo + (hi - lo) * rng.uniform());
  return t;
}

inline Tensor filled(const Shape& shape, DType dtype, double v) {
  Tensor t = Tensor::empty(shape, dtype);
  for (int64_t i = 0; i < t.numel(); ++i) set(t, i, v);
  return t;
}

inline Tensor cast(const Tensor& t, DType dtype) {
  Tensor out = Tensor::empty(t.shape(), dtype);
  for (int64_t i = 0; i < t.numel(); ++i) set(out, i, get(t, i));
  return out;
}

inline Tensor ids(const Shape& shape, const std::vector<int32_t>& values) {
  return Tensor::from<int32_t>(shape, values);
}

inline double dot(const Tensor& w, const Tensor& y) {
  double s = 0;
  for (int64_t i = 0; i < y.numel(); ++i) s += get(w, i) * get(y, i);
  return s;
}

inline double max_abs(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::abs(get(t, i)));
  return m;
}

// ‖a − b‖∞ / ‖b‖∞: b the reference.
inline double relative_error(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double diff = 0;
  for (int64_t i = 0; i < b.numel(); ++i) diff = std::max(diff, std::abs(get(a, i) - get(b, i)));
  const double scale = max_abs(b);
  return scale > 0 ? diff / scale : diff;
}

inline bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// Central differences of objective() with respect to every element of `input` (F64), against the
// analytic gradient. With h = 1e-6 the truncation error is O(h²) ~ 1e-12 and the rounding error
// about 1e-16 · Σ|w·y| / h ≲ 1e-9 for these sizes, so the error is measured relative to
// max(|analytic|, 0.1): a relative 1e-6 for gradients above 0.1, an absolute 1e-7 below, both far
// above the noise and far below what a wrong formula gives.
inline void expect_gradient(const char* what, Tensor& input, const Tensor& analytic,
                            const std::function<double()>& objective, double tol = 1e-6) {
  ASSERT_EQ(input.dtype(), DType::F64);
  ASSERT_EQ(analytic.shape(), input.shape()) << what;
  const double h = 1e-6;
  double worst = 0;
  int64_t worst_at = -1;
  for (int64_t i = 0; i < input.numel(); ++i) {
    const double saved = get(input, i);
    set(input, i, saved + h);
    const double up = objective();
    set(input, i, saved - h);
    const double down = objective();
    set(input, i, saved);
    const double fd = (up - down) / (2 * h);
    const double an = get(analytic, i);
    const double err = std::abs(fd - an) / std::max(std::abs(an), 0.1);
    if (err > worst) {
      worst = err;
      worst_at = i;
    }
  }
  EXPECT_LE(worst, tol) << what << ": element " << worst_at << " analytic " << get(analytic, worst_at);
  EXPECT_GT(max_abs(analytic), 1e-3) << what << ": the gradient is (nearly) zero, the check proves little";
}

template <class F>
void expect_error(F&& f, const std::string& op) {
  try {
    f();
    ADD_FAILURE() << "no kglm::Error thrown; expected one from " << op;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
  }
}

// Runs f at the given OpenMP thread count, restoring the previous one.
template <class F>
void with_threads(int threads, F&& f) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  f();
  omp_set_num_threads(saved);
}

class OpsOnDevice : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override {
    if (GetParam() == Device::Cuda && !cuda::available()) GTEST_SKIP() << cuda::unavailable_reason();
  }
  Device device() const { return GetParam(); }
  // An F32 (or integer) copy of a host tensor on the device under test.
  Tensor on_device(const Tensor& t) const {
    return (t.dtype() == DType::F64 ? cast(t, DType::F32) : t.clone()).to(device());
  }
};

// Runs `op` on the F64 tensors on the CPU and on F32 copies of them on `device`; every F64 output
// must agree within `tol` relative (‖·‖∞). `inputs` are copied; `outputs` are compared.
inline void expect_f32_matches_f64(Device device, const char* what, std::vector<Tensor> inputs,
                                   std::vector<Tensor> outputs,
                                   const std::function<void(std::vector<Tensor>&, std::vector<Tensor>&)>& op,
                                   double tol = 1e-5) {
  auto to32 = [device](const std::vector<Tensor>& v) {
    std::vector<Tensor> out;
    for (const Tensor& t : v) out.push_back((t.dtype() == DType::F64 ? cast(t, DType::F32) : t.clone()).to(device));
    return out;
  };
  std::vector<Tensor> in32 = to32(inputs), out32 = to32(outputs);
  op(inputs, outputs);
  op(in32, out32);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].dtype() != DType::F64) continue;
    EXPECT_LE(relative_error(out32[i].to(Device::Cpu), outputs[i]), tol) << what << " output " << i;
  }
}

}  // namespace kglm::nn
