// Argument checks and backend selection shared by the op dispatch files (private to lib/nn/ops).
// A dispatch file checks everything that can be checked without reading tensor data (shapes,
// dtypes, devices, overlapping outputs), then hands raw pointers to the backend of the device.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/error.hpp"
#include "nn/cuda/kernels.hpp"
#include "nn/ops/op_times.hpp"
#include "nn/tensor.hpp"

namespace kglm::nn::detail {

[[noreturn]] inline void no_backend(std::string_view op) {
  throw Error(std::string(op) + ": this build has no CUDA backend");
}

// The device branch of every op: `cpu()` runs for host tensors (F32 and F64 kernels); `gpu(T{})`
// for device ones, with T the CUDA kernels' storage type of t's dtype (float, cuda::Bf16 or
// cuda::Half), or an error naming the op in a build without the backend. `t` is the tensor whose
// device and dtype every other argument has been checked against.
template <class Cpu, class Gpu>
decltype(auto) on_device(const Tensor& t, std::string_view op, Cpu&& cpu, Gpu&& gpu) {
  const DType dtype = t.dtype();
  if (t.device() != Device::Cuda) {
    if (dtype == DType::BF16 || dtype == DType::F16)
      throw Error(std::string(op) + ": " + std::string(dtype_name(dtype)) + " compute runs on CUDA devices only");
    const OpTimer timer(op);
    return std::forward<Cpu>(cpu)();
  }
  if (dtype == DType::F64) throw Error(std::string(op) + ": the CUDA kernels take F32, BF16 or F16, not F64");
#ifdef KGLM_WITH_CUDA
  if (dtype == DType::BF16) return std::forward<Gpu>(gpu)(cuda::Bf16{});
  if (dtype == DType::F16) return std::forward<Gpu>(gpu)(cuda::Half{});
  return std::forward<Gpu>(gpu)(float{});
#else
  (void)gpu;
  no_backend(op);
#endif
}

// For the ops whose CUDA kernels take F32 only (the optimizer's): f() when T is float.
template <class T, class F>
void f32_only(std::string_view op, F&& f) {
  if constexpr (std::is_same_v<T, float>) {
    std::forward<F>(f)();
  } else {
    throw Error(std::string(op) + ": the CUDA kernel takes F32 only");
  }
}

// What a half-precision op accumulates in — parameter gradients, LayerNorm statistics — is F32;
// for F32 and F64 it is the dtype itself.
inline DType wide_dtype(DType dtype) { return dtype == DType::BF16 || dtype == DType::F16 ? DType::F32 : dtype; }

// Typed device pointer of a checked tensor (null when undefined); Tensor::data<T>() is host-only.
template <class T>
T* device_data(Tensor& t) {
  return t.defined() ? static_cast<T*>(t.raw()) : nullptr;
}
template <class T>
const T* device_data(const Tensor& t) {
  return t.defined() ? static_cast<const T*>(t.raw()) : nullptr;
}

// A floating dtype: F32 or F64 on the CPU, F32, BF16 or F16 on CUDA (on_device refuses the others).
inline void check_floating(const Tensor& t, std::string_view op, std::string_view arg) {
  check_defined(t, op, arg);
  if (t.dtype() != DType::F32 && t.dtype() != DType::F64 && t.dtype() != DType::BF16 && t.dtype() != DType::F16)
    throw Error(std::string(op) + ": '" + std::string(arg) + "' is " + std::string(dtype_name(t.dtype())) +
                ", expected a floating dtype");
}

inline void check_rank(const Tensor& t, int rank, std::string_view op, std::string_view arg) {
  check_defined(t, op, arg);
  if (t.rank() != rank)
    throw Error(std::string(op) + ": '" + std::string(arg) + "' has shape " + shape_string(t.shape()) + ", expected " +
                std::to_string(rank) + " dimensions");
}

// `t` has `shape`, the dtype of `ref` and its device.
inline void check_like(const Tensor& t, const Tensor& ref, const Shape& shape, std::string_view op,
                       std::string_view arg) {
  check_shape(t, shape, op, arg);
  check_dtype(t, ref.dtype(), op, arg);
  check_same_device(t, ref, op);
}

// `t` has `shape`, the wide dtype of `ref` (wide_dtype) and its device: a parameter gradient or a
// statistic of a half-precision op.
inline void check_wide(const Tensor& t, const Tensor& ref, const Shape& shape, std::string_view op,
                       std::string_view arg) {
  check_shape(t, shape, op, arg);
  check_dtype(t, wide_dtype(ref.dtype()), op, arg);
  check_same_device(t, ref, op);
}

// An integer tensor (ids, targets, masks) of `dtype` and `shape` on the device of `ref`.
inline void check_index(const Tensor& t, DType dtype, const Tensor& ref, const Shape& shape, std::string_view op,
                        std::string_view arg) {
  check_shape(t, shape, op, arg);
  check_dtype(t, dtype, op, arg);
  check_same_device(t, ref, op);
}

inline bool overlap(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.nbytes() == 0 || b.nbytes() == 0) return false;
  auto* pa = static_cast<const std::byte*>(a.raw());
  auto* pb = static_cast<const std::byte*>(b.raw());
  return pa < pb + b.nbytes() && pb < pa + a.nbytes();
}

// Output `out` must not share any element with input `in` (gemms and row-wise kernels would read
// what they have already overwritten).
inline void check_disjoint(const Tensor& out, const Tensor& in, std::string_view op, std::string_view out_arg,
                           std::string_view in_arg) {
  if (overlap(out, in))
    throw Error(std::string(op) + ": '" + std::string(out_arg) + "' overlaps '" + std::string(in_arg) + "'");
}

// Elementwise ops: `out` may be `in` itself, but not a shifted view of it.
inline void check_same_or_disjoint(const Tensor& out, const Tensor& in, std::string_view op, std::string_view out_arg,
                                   std::string_view in_arg) {
  if (overlap(out, in) && out.raw() != in.raw())
    throw Error(std::string(op) + ": '" + std::string(out_arg) + "' partially overlaps '" + std::string(in_arg) + "'");
}

struct Named {
  const Tensor& tensor;
  std::string_view name;
};

// No output shares an element with an input or with another output (undefined tensors pass).
inline void check_disjoint(std::string_view op, std::initializer_list<Named> outputs,
                           std::initializer_list<Named> inputs) {
  for (auto o = outputs.begin(); o != outputs.end(); ++o) {
    for (const Named& i : inputs) check_disjoint(o->tensor, i.tensor, op, o->name, i.name);
    for (auto p = outputs.begin(); p != o; ++p) check_disjoint(o->tensor, p->tensor, op, o->name, p->name);
  }
}

// Typed data of an optional argument, null when it is undefined.
template <class T>
T* data_or_null(Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}
template <class T>
const T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// Calls f(T{}) with T the scalar of a floating dtype (checked before by check_floating).
template <class F>
decltype(auto) with_floating(DType dtype, F&& f) {
  if (dtype == DType::F64) return std::forward<F>(f)(double{});
  return std::forward<F>(f)(float{});
}

// Row gather and scatter-add with an index tensor, shared by embedding_* and gather/scatter_add_rows
// (op and index_arg name them in errors). Defined in elementwise.cpp.
void gather_rows_checked(std::string_view op, std::string_view index_arg, const Tensor& index, const Tensor& src,
                         Tensor& out, bool accumulate);
void scatter_add_rows_checked(std::string_view op, std::string_view index_arg, const Tensor& index, const Tensor& dout,
                              Tensor& dsrc);

}  // namespace kglm::nn::detail
