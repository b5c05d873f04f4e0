#include "nn/tensor.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/error.hpp"
#include "nn/cuda/runtime.hpp"

namespace kglm::nn {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return 4;
    case DType::F64:
      return 8;
    case DType::BF16:
      return 2;
    case DType::F16:
      return 2;
    case DType::I32:
      return 4;
    case DType::I64:
      return 8;
    case DType::U8:
      return 1;
  }
  return 0;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return "F32";
    case DType::F64:
      return "F64";
    case DType::BF16:
      return "BF16";
    case DType::F16:
      return "F16";
    case DType::I32:
      return "I32";
    case DType::I64:
      return "I64";
    case DType::U8:
      return "U8";
  }
  return "?";
}

std::string_view device_name(Device device) { return device == Device::Cuda ? "cuda" : "cpu"; }

Device parse_device(std::string_view name) {
  if (name == "cpu") return Device::Cpu;
  if (name == "cuda") return Device::Cuda;
  throw UsageError("--device must be cpu or cuda, not '" + std::string(name) + "'");
}

void require_device(Device device) {
  if (device == Device::Cuda && !cuda::available()) throw Error("--device cuda: " + cuda::unavailable_reason());
}

std::string shape_string(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

namespace {

int64_t count_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error("tensor: negative dimension in shape " + shape_string(shape));
    n *= d;
  }
  return n;
}

struct AlignedFree {
  void operator()(std::byte* p) const { std::free(p); }
};

}  // namespace

Tensor Tensor::empty(Shape shape, DType dtype, Device device) {
  Tensor t;
  t.numel_ = count_elements(shape);
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.device_ = device;
  if (device == Device::Cuda) {
    t.storage_ = cuda::allocate(t.nbytes());
    return t;
  }
  size_t bytes = (t.nbytes() + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes == 0 ? 64 : bytes);
  if (!p) throw std::bad_alloc();
  t.storage_ = std::shared_ptr<std::byte[]>(static_cast<std::byte*>(p), AlignedFree{});
  return t;
}

Tensor Tensor::zeros(Shape shape, DType dtype, Device device) {
  Tensor t = empty(std::move(shape), dtype, device);
  t.zero();
  return t;
}

template <class T>
Tensor Tensor::from(Shape shape, const std::vector<T>& values) {
  Tensor t = empty(std::move(shape), dtype_of<T>());
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw Error("tensor: " + std::to_string(values.size()) + " values for shape " + shape_string(t.shape()));
  if (t.nbytes() > 0) std::memcpy(t.raw(), values.data(), t.nbytes());  // an empty vector's data() may be null
  return t;
}
template Tensor Tensor::from<float>(Shape, const std::vector<float>&);
template Tensor Tensor::from<double>(Shape, const std::vector<double>&);
template Tensor Tensor::from<int32_t>(Shape, const std::vector<int32_t>&);
template Tensor Tensor::from<int64_t>(Shape, const std::vector<int64_t>&);
template Tensor Tensor::from<uint8_t>(Shape, const std::vector<uint8_t>&);

int64_t Tensor::dim(int axis) const {
  int r = rank();
  int a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    throw Error("tensor: axis " + std::to_string(axis) + " out of range for " + shape_string(shape_));
  return shape_[a];
}

template <class T>
T* Tensor::data() {
  if (dtype_ != dtype_of<T>())
    throw Error("tensor: accessed a " + std::string(dtype_name(dtype_)) + " tensor as " +
                std::string(dtype_name(dtype_of<T>())));
  if (device_ != Device::Cpu) throw Error("tensor: host access to a device tensor");
  return reinterpret_cast<T*>(storage_.get() + offset_);
}
template <class T>
const T* Tensor::data() const {
  return const_cast<Tensor*>(this)->data<T>();
}
#define KGLM_TENSOR_DATA(T)      \
  template T* Tensor::data<T>(); \
  template const T* Tensor::data<T>() const;
KGLM_TENSOR_DATA(float)
KGLM_TENSOR_DATA(double)
KGLM_TENSOR_DATA(int32_t)
KGLM_TENSOR_DATA(int64_t)
KGLM_TENSOR_DATA(uint8_t)
#undef KGLM_TENSOR_DATA

Tensor Tensor::view(Shape shape) const {
  if (count_elements(shape) != numel_)
    throw Error("tensor: cannot view " + shape_string(shape_) + " as " + shape_string(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::rows(int64_t begin, int64_t end) const {
  if (rank() == 0 || begin < 0 || end < begin || end > shape_[0])
    throw Error("tensor: rows [" + std::to_string(begin) + ", " + std::to_string(end) + ") of " + shape_string(shape_));
  int64_t row = shape_[0] == 0 ? 0 : numel_ / shape_[0];
  Tensor t = *this;
  t.offset_ += static_cast<size_t>(begin * row) * dtype_size(dtype_);
  t.shape_[0] = end - begin;
  t.numel_ = (end - begin) * row;
  return t;
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_, dtype_, device_);
  t.copy_from(*this);
  return t;
}

void Tensor::zero() {
  if (device_ == Device::Cuda) {
    cuda::fill_zero(raw(), nbytes());
  } else {
    std::memset(raw(), 0, nbytes());
  }
}

void Tensor::copy_from(const Tensor& other) {
  if (other.shape_ != shape_ || other.dtype_ != dtype_)
    throw Error("tensor: copy of " + shape_string(other.shape_) + " " + std::string(dtype_name(other.dtype_)) +
                " into " + shape_string(shape_) + " " + std::string(dtype_name(dtype_)));
  if (device_ == Device::Cpu && other.device_ == Device::Cpu) {
    std::memcpy(raw(), other.raw(), nbytes());
  } else if (device_ == Device::Cpu) {
    cuda::copy(raw(), other.raw(), nbytes(), cuda::Copy::DeviceToHost);
  } else {
    cuda::copy(raw(), other.raw(), nbytes(),
               other.device_ == Device::Cpu ? cuda::Copy::HostToDevice : cuda::Copy::DeviceToDevice);
  }
}

Tensor Tensor::to(Device device) const {
  if (!defined() || device == device_) return *this;
  Tensor t = empty(shape_, dtype_, device);
  t.copy_from(*this);
  return t;
}

void check_defined(const Tensor& t, std::string_view op, std::string_view arg) {
  if (!t.defined()) throw Error(std::string(op) + ": argument '" + std::string(arg) + "' is missing");
}

void check_shape(const Tensor& t, const Shape& expected, std::string_view op, std::string_view arg) {
  check_defined(t, op, arg);
  if (t.shape() != expected)
    throw Error(std::string(op) + ": '" + std::string(arg) + "' has shape " + shape_string(t.shape()) + ", expected " +
                shape_string(expected));
}

void check_dtype(const Tensor& t, DType expected, std::string_view op, std::string_view arg) {
  check_defined(t, op, arg);
  if (t.dtype() != expected)
    throw Error(std::string(op) + ": '" + std::string(arg) + "' is " + std::string(dtype_name(t.dtype())) +
                ", expected " + std::string(dtype_name(expected)));
}

void check_same_device(const Tensor& a, const Tensor& b, std::string_view op) {
  if (a.defined() && b.defined() && a.device() != b.device())
    throw Error(std::string(op) + ": arguments on different devices");
}

}  // namespace kglm::nn
