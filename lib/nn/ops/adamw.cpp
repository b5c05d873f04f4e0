#include "nn/ops/adamw.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

namespace {

void check_hyper(const AdamWHyper& hyper, std::string_view op) {
  const std::string name(op);
  if (hyper.step < 1) throw Error(name + ": step must be >= 1 (1-based), got " + std::to_string(hyper.step));
  if (!(hyper.beta1 >= 0 && hyper.beta1 < 1 && hyper.beta2 >= 0 && hyper.beta2 < 1))
    throw Error(name + ": betas must be in [0, 1)");
  if (!(hyper.eps > 0)) throw Error(name + ": eps must be > 0");
}

}  // namespace

void adamw_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamWHyper& hyper, double grad_scale) {
  constexpr std::string_view op = "adamw_update";
  check_floating(param, op, "param");
  check_like(grad, param, param.shape(), op, "grad");
  check_like(m, param, param.shape(), op, "m");
  check_like(v, param, param.shape(), op, "v");
  check_disjoint(op, {{param, "param"}, {m, "m"}, {v, "v"}}, {{grad, "grad"}});
  check_hyper(hyper, op);
  on_device(
      param, op,
      [&] {
        with_floating(param.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::adamw_update<T>(param.data<T>(), grad.data<T>(), m.data<T>(), v.data<T>(), param.numel(), hyper,
                               grad_scale);
        });
      },
      [&](auto tag) {
        f32_only<decltype(tag)>(op, [&] {
          cuda::adamw_update<float>(device_data<float>(param), device_data<float>(grad), device_data<float>(m),
                                    device_data<float>(v), param.numel(), hyper, grad_scale);
        });
      });
}

Tensor adamw_segment_table(const std::vector<AdamWSegment>& segments, int64_t param_count, int64_t state_count,
                           Device device) {
  std::vector<int64_t> rows;
  for (const AdamWSegment& s : segments) {
    if (s.size < 0 || s.param_offset < 0 || s.state_offset < 0 || s.param_offset + s.size > param_count ||
        s.state_offset + s.size > state_count)
      throw Error("adamw_segment_table: segment [" + std::to_string(s.param_offset) + ", +" + std::to_string(s.size) +
                  ") is outside the buffers");
    for (int64_t at = 0; at < s.size; at += kAdamWChunkElements)
      rows.insert(rows.end(), {s.param_offset + at, s.state_offset + at, std::min(kAdamWChunkElements, s.size - at),
                               s.decay ? 1 : 0});
  }
  const auto chunks = static_cast<int64_t>(rows.size() / 4);
  return Tensor::from<int64_t>({chunks, 4}, rows).to(device);
}

void adamw_update_segments(Tensor& values, const Tensor& grads, Tensor& m, Tensor& v, const Tensor& table,
                           const AdamWHyper& hyper, double grad_scale) {
  constexpr std::string_view op = "adamw_update_segments";
  check_dtype(values, DType::F32, op, "values");
  check_rank(values, 1, op, "values");
  check_like(grads, values, values.shape(), op, "grads");
  check_rank(m, 1, op, "m");
  check_like(m, values, m.shape(), op, "m");
  check_like(v, values, m.shape(), op, "v");
  check_rank(table, 2, op, "table");
  check_index(table, DType::I64, values, {table.dim(0), 4}, op, "table");
  check_disjoint(op, {{values, "values"}, {m, "m"}, {v, "v"}}, {{grads, "grads"}, {table, "table"}});
  check_hyper(hyper, op);
  const int64_t chunks = table.dim(0);
  on_device(
      values, op,
      [&] {
        const int64_t* row = table.data<int64_t>();
        AdamWHyper h = hyper;
        for (int64_t c = 0; c < chunks; ++c, row += 4) {
          if (row[0] < 0 || row[2] < 0 || row[0] + row[2] > values.numel() || row[1] < 0 || row[1] + row[2] > m.numel())
            throw Error("adamw_update_segments: chunk " + std::to_string(c) + " is outside the buffers");
          h.weight_decay = row[3] ? hyper.weight_decay : 0.0;
          cpu::adamw_update<float>(values.data<float>() + row[0], grads.data<float>() + row[0],
                                   m.data<float>() + row[1], v.data<float>() + row[1], row[2], h, grad_scale);
        }
      },
      [&](auto) {
        cuda::adamw_update_segments(device_data<float>(values), device_data<float>(grads), device_data<float>(m),
                                    device_data<float>(v), device_data<int64_t>(table), chunks, hyper, grad_scale);
      });
}

}  // namespace kglm::nn
