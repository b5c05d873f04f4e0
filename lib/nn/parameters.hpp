// All trainable tensors of a model in one allocation (and all their gradients in a second one of
// the same layout), so that zeroing, the global gradient norm, an all-reduce across ranks or a copy
// to a device is one call over one buffer. Each parameter knows the Hugging Face tensor names it
// is stored under: usually one, but the fused q|k|v projection is three row ranges.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nn/tensor.hpp"

namespace kglm::nn {

// One Hugging Face tensor = rows [row_begin, row_end) of a parameter (all rows when unfused).
struct HfTensorName {
  std::string name;
  int64_t row_begin = 0, row_end = 0;
};

struct Parameter {
  std::string name;  // kglm's name: the HF name, or the fused "...attention.self.qkv.weight"
  Shape shape;
  bool weight_decay = true;  // false for biases and LayerNorm parameters (as HF's Trainer)
  bool trainable = true;     // false: frozen (no gradient, no optimizer state, no update)
  enum class Init : uint8_t { Normal, Zeros, Ones, Uniform } init = Init::Normal;
  double init_std = 0;  // the normal's standard deviation (0: the one given to initialize()), or
                        // the half-width a of Uniform's U(−a, a)
  std::vector<HfTensorName> hf_names;
  Tensor value, grad;  // views into the store's buffers, valid after allocate(); grad is undefined
                       // for a frozen parameter, so every backward op skips it
  Tensor compute;      // what the forward and backward read: value itself, or its BF16/F16 copy
  int64_t offset = 0;  // of value/grad in the flat buffers (elements)
};

class ParameterStore {
 public:
  // The buffers live on `device`; values are initialised and checkpoints read on the host, then
  // copied there. With a BF16 or F16 `compute` dtype (mixed precision, CUDA), the F32 values stay
  // the master weights that AdamW updates and checkpoints store, gradients stay F32, and the model
  // reads a rounded copy of the values, refreshed by refresh_compute().
  explicit ParameterStore(Device device = Device::Cpu, DType compute = DType::F32);
  ~ParameterStore();
  ParameterStore(const ParameterStore&) = delete;
  ParameterStore& operator=(const ParameterStore&) = delete;
  Device device() const { return device_; }
  DType compute_dtype() const { return compute_dtype_; }

  // Declares a parameter; returns its index. Only before allocate().
  size_t add(std::string name, Shape shape, Parameter::Init init, bool weight_decay,
             std::vector<HfTensorName> hf_names = {});
  // Allocates the value and gradient buffers (gradients zeroed, values uninitialised), their
  // length a multiple of 16 · `shards`, so that ZeRO's ranks get equal, aligned shards. Without
  // gradients (a model that only predicts) every parameter is frozen and grads() is undefined.
  void allocate(int64_t shards = 1, bool gradients = true);
  // Fills values per each parameter's Init: normal(0, init_std or else std) from (seed, parameter
  // index), so the initial model depends on the seed only.
  void initialize(uint64_t seed, double std);

  // Freezes parameter i (after allocate()): its gradient view is dropped, so no op computes it.
  void freeze(size_t i);
  int64_t trainable_count() const;  // elements of the trainable parameters
  int64_t parameter_count() const;  // elements of every parameter (count() adds the alignment padding)

  size_t size() const { return params_.size(); }
  Parameter& operator[](size_t i) { return params_[i]; }
  const Parameter& operator[](size_t i) const { return params_[i]; }
  Parameter& get(std::string_view name);  // kglm::Error when absent
  const Parameter* find(std::string_view name) const;
  std::vector<Parameter>& all() { return params_; }
  const std::vector<Parameter>& all() const { return params_; }

  // The flat buffers (1-D, every parameter's value/grad is a view into them, in declaration order).
  Tensor& values() { return values_; }
  const Tensor& values() const { return values_; }
  Tensor& grads() { return grads_; }
  const Tensor& grads() const { return grads_; }
  int64_t count() const { return values_.defined() ? values_.numel() : 0; }
  void zero_grads() { grads_.zero(); }
  // Rounds the values into the compute copy (after they changed: initialisation, loading, an
  // optimizer step); nothing to do when the compute dtype is F32. A store without gradients on the
  // CPU (a model that only predicts) also declares its values final until the next call, so that
  // --precision bf16 rounds each weight matrix once (nn/cpu/kernels.hpp, freeze_weights).
  void refresh_compute();

 private:
  // A store on the CPU without gradients: its values change only through load and refresh_compute.
  bool predicts_on_cpu() const { return values_.defined() && !grads_.defined() && device_ == Device::Cpu; }

  Device device_;
  DType compute_dtype_;
  std::vector<Parameter> params_;
  Tensor values_, grads_, compute_;
};

}  // namespace kglm::nn
