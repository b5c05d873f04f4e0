// Dense, contiguous, row-major tensors. A tensor is a shape, a dtype, a device and a view into a
// shared byte buffer: views (reshape, row ranges) share storage, which is how the model keeps all
// its parameters (and all gradients) in one allocation. fp32 is the compute type; F64 exists for
// finite-difference gradient checks on the CPU; BF16/F16 store checkpoints and, on CUDA, the
// activations and weight copies of mixed precision. Storage lives on a device: host memory (64-byte aligned) or, with the CUDA backend,
// GPU memory from its caching allocator (nn/cuda/runtime.hpp). Host accessors (data<T>()) throw
// on device memory; copies, zero fills and to() work on either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kglm::nn {

enum class DType : uint8_t { F32, F64, BF16, F16, I32, I64, U8 };
enum class Device : uint8_t { Cpu, Cuda };

size_t dtype_size(DType dtype);
std::string_view dtype_name(DType dtype);     // "F32", "BF16", ... (safetensors spelling)
std::string_view device_name(Device device);  // "cpu", "cuda" (as --device spells them)
Device parse_device(std::string_view name);   // the inverse; kglm::UsageError for another name
// Throws kglm::Error, in one line that says why, when `device` cannot be used by this process
// (a CUDA device in a build without the backend, or on a machine without a GPU).
void require_device(Device device);

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::F32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::F64;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::I32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::I64;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::U8;
}

using Shape = std::vector<int64_t>;
std::string shape_string(const Shape& shape);  // "[2, 3]"

class Tensor {
 public:
  Tensor() = default;  // undefined: stands for "absent" in op arguments

  // Uninitialised / zero-filled storage (64-byte aligned on the host, 256 on a GPU).
  static Tensor empty(Shape shape, DType dtype = DType::F32, Device device = Device::Cpu);
  static Tensor zeros(Shape shape, DType dtype = DType::F32, Device device = Device::Cpu);
  template <class T>
  static Tensor from(Shape shape, const std::vector<T>& values);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int axis) const;  // negative axes count from the end
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }

  void* raw() { return storage_.get() + offset_; }
  const void* raw() const { return storage_.get() + offset_; }
  // Typed access; throws when T does not match the dtype or the tensor is not on the CPU.
  template <class T>
  T* data();
  template <class T>
  const T* data() const;

  // Same storage, new shape with the same number of elements.
  Tensor view(Shape shape) const;
  // Rows [begin, end) along axis 0, sharing storage.
  Tensor rows(int64_t begin, int64_t end) const;
  // A new tensor with a copy of the data, on the same device.
  Tensor clone() const;
  void zero();
  // Same shape and dtype; the two may be on different devices (a copy to the host waits for the
  // GPU, the others are queued on its stream).
  void copy_from(const Tensor& other);
  // This tensor when it is on `device`, else a copy there.
  Tensor to(Device device) const;

 private:
  std::shared_ptr<std::byte[]> storage_;
  size_t offset_ = 0;
  Shape shape_;
  int64_t numel_ = 0;
  DType dtype_ = DType::F32;
  Device device_ = Device::Cpu;
};

// Argument checks shared by the ops: each throws kglm::Error naming the op and the argument.
void check_defined(const Tensor& t, std::string_view op, std::string_view arg);
void check_shape(const Tensor& t, const Shape& expected, std::string_view op, std::string_view arg);
void check_dtype(const Tensor& t, DType expected, std::string_view op, std::string_view arg);
void check_same_device(const Tensor& a, const Tensor& b, std::string_view op);

}  // namespace kglm::nn
