#include "nn/parameters.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/elementwise.hpp"

namespace kglm::nn {

size_t ParameterStore::add(std::string name, Shape shape, Parameter::Init init, bool weight_decay,
                           std::vector<HfTensorName> hf_names) {
  if (values_.defined()) throw Error("parameters: '" + name + "' declared after allocation");
  if (find(name)) throw Error("parameters: '" + name + "' declared twice");
  if (hf_names.empty()) hf_names.push_back({name, 0, shape.empty() ? 1 : shape[0]});
  Parameter p;
  p.name = std::move(name);
  p.shape = std::move(shape);
  p.init = init;
  p.weight_decay = weight_decay;
  p.hf_names = std::move(hf_names);
  params_.push_back(std::move(p));
  return params_.size() - 1;
}

ParameterStore::ParameterStore(Device device, DType compute) : device_(device), compute_dtype_(compute) {
  if (compute != DType::F32 && compute != DType::BF16 && compute != DType::F16)
    throw Error("parameters: the compute dtype must be F32, BF16 or F16, not " + std::string(dtype_name(compute)));
}

ParameterStore::~ParameterStore() {
  if (predicts_on_cpu()) cpu::thaw_weights(static_cast<const float*>(values_.raw()));
}

void ParameterStore::refresh_compute() {
  if (compute_.defined()) convert(values_, compute_);
  if (predicts_on_cpu()) cpu::freeze_weights(static_cast<const float*>(values_.raw()), values_.numel());
}

void ParameterStore::allocate(int64_t shards, bool gradients) {
  if (shards < 1) throw Error("parameters: allocate() into " + std::to_string(shards) + " shards");
  int64_t total = 0;
  std::vector<int64_t> offsets;
  for (const Parameter& p : params_) {
    int64_t n = 1;
    for (int64_t d : p.shape) n *= d;
    offsets.push_back(total);
    total += (n + 15) / 16 * 16;  // each parameter starts on a 64-byte boundary (vector loads)
  }
  total = (total + 16 * shards - 1) / (16 * shards) * (16 * shards);
  values_ = Tensor::zeros({total}, DType::F32, device_);
  if (gradients) grads_ = Tensor::zeros({total}, DType::F32, device_);
  if (compute_dtype_ != DType::F32) compute_ = Tensor::zeros({total}, compute_dtype_, device_);
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = params_[i];
    int64_t n = 1;
    for (int64_t d : p.shape) n *= d;
    p.offset = offsets[i];
    p.value = values_.rows(offsets[i], offsets[i] + n).view(p.shape);
    if (gradients) {
      p.grad = grads_.rows(offsets[i], offsets[i] + n).view(p.shape);
    } else {
      p.trainable = false;  // as frozen: every op skips the absent gradient
    }
    p.compute = compute_.defined() ? compute_.rows(offsets[i], offsets[i] + n).view(p.shape) : p.value;
  }
}

void ParameterStore::freeze(size_t i) {
  if (!values_.defined()) throw Error("parameters: freeze() before allocate()");
  params_.at(i).trainable = false;
  params_[i].grad = Tensor();
}

int64_t ParameterStore::trainable_count() const {
  int64_t n = 0;
  for (const Parameter& p : params_)
    if (p.trainable) n += p.value.numel();
  return n;
}

int64_t ParameterStore::parameter_count() const {
  int64_t n = 0;
  for (const Parameter& p : params_) n += p.value.numel();
  return n;
}

void ParameterStore::initialize(uint64_t seed, double std) {
  // Drawn on the host (the same values on every device), then copied to the device.
  Tensor host = values_.device() == Device::Cpu ? values_ : Tensor::empty(values_.shape());
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = params_[i];
    float* v = host.data<float>() + p.offset;
    int64_t n = p.value.numel();
    switch (p.init) {
      case Parameter::Init::Zeros:
        for (int64_t j = 0; j < n; ++j) v[j] = 0;
        break;
      case Parameter::Init::Ones:
        for (int64_t j = 0; j < n; ++j) v[j] = 1;
        break;
      case Parameter::Init::Uniform: {
        Rng rng(seed, i, 0x696e6974u);
        const double a = p.init_std > 0 ? p.init_std : std;
        for (int64_t j = 0; j < n; ++j) v[j] = static_cast<float>(a * (2 * rng.uniform() - 1));
        break;
      }
      case Parameter::Init::Normal: {
        Rng rng(seed, i, 0x696e6974u);  // "init"
        // Box–Muller: two uniforms give two independent normals.
        for (int64_t j = 0; j < n; j += 2) {
          double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
          double r = std::sqrt(-2.0 * std::log(u1)) * (p.init_std > 0 ? p.init_std : std);
          v[j] = static_cast<float>(r * std::cos(2 * M_PI * u2));
          if (j + 1 < n) v[j + 1] = static_cast<float>(r * std::sin(2 * M_PI * u2));
        }
        break;
      }
    }
  }
  if (host.raw() != values_.raw()) values_.copy_from(host);
  refresh_compute();
}

Parameter& ParameterStore::get(std::string_view name) {
  for (Parameter& p : params_)
    if (p.name == name) return p;
  throw Error("parameters: no parameter '" + std::string(name) + "'");
}

const Parameter* ParameterStore::find(std::string_view name) const {
  for (const Parameter& p : params_)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace kglm::nn
