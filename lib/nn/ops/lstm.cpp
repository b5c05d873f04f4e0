#include "nn/ops/lstm.hpp"

#include <string>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

namespace {

void check_shape_values(const LstmShape& s, std::string_view op) {
  if (s.steps < 1 || s.streams < 1 || s.cell < 1 || s.projection < 1)
    throw Error(std::string(op) + ": steps, streams, cell and projection must be positive");
  if (s.cell_clip < 0 || s.proj_clip < 0) throw Error(std::string(op) + ": a clip value is negative");
}

// The arguments both passes share.
void check_common(const Tensor& like, const Tensor& w_h, const Tensor& w_proj, const Tensor& h0, const Tensor& c0,
                  const LstmSaved& saved, const LstmShape& s, std::string_view op) {
  check_shape_values(s, op);
  check_floating(like, op, "gates_x");
  const int64_t rows = s.steps * s.streams;
  check_like(w_h, like, {4 * s.cell, s.projection}, op, "w_h");
  check_like(w_proj, like, {s.projection, s.cell}, op, "w_proj");
  check_like(h0, like, {s.streams, s.projection}, op, "h0");
  check_wide(c0, like, {s.streams, s.cell}, op, "c0");
  check_like(saved.gates, like, {rows, 4 * s.cell}, op, "saved.gates");
  check_like(saved.memory, like, {rows, s.cell}, op, "saved.memory");
  check_like(saved.projected, like, {rows, s.projection}, op, "saved.projected");
  check_wide(saved.cell, like, {rows, s.cell}, op, "saved.cell");
}

}  // namespace

LstmSaved LstmSaved::allocate(const LstmShape& s, const Tensor& like) {
  const int64_t rows = s.steps * s.streams;
  const DType wide = detail::wide_dtype(like.dtype());
  return {Tensor::empty({rows, 4 * s.cell}, like.dtype(), like.device()),
          Tensor::empty({rows, s.cell}, like.dtype(), like.device()),
          Tensor::empty({rows, s.projection}, like.dtype(), like.device()),
          Tensor::empty({rows, s.cell}, wide, like.device())};
}

void lstm_forward(const Tensor& gates_x, const Tensor& w_h, const Tensor& w_proj, const Tensor& h0, const Tensor& c0,
                  const LstmShape& s, Tensor& h, LstmSaved& saved, Tensor& c_last) {
  constexpr std::string_view op = "lstm_forward";
  check_common(gates_x, w_h, w_proj, h0, c0, saved, s, op);
  const int64_t rows = s.steps * s.streams;
  check_like(gates_x, gates_x, {rows, 4 * s.cell}, op, "gates_x");
  check_like(h, gates_x, {rows, s.projection}, op, "h");
  check_wide(c_last, gates_x, {s.streams, s.cell}, op, "c_last");
  check_disjoint(op,
                 {{h, "h"},
                  {saved.gates, "saved.gates"},
                  {saved.memory, "saved.memory"},
                  {saved.projected, "saved.projected"},
                  {saved.cell, "saved.cell"}},
                 {{gates_x, "gates_x"}, {w_h, "w_h"}, {w_proj, "w_proj"}, {h0, "h0"}, {c0, "c0"}, {c_last, "c_last"}});
  if (c_last.raw() != c0.raw()) check_disjoint(c_last, c0, op, "c_last", "c0");
  on_device(
      gates_x, op,
      [&] {
        with_floating(gates_x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::lstm_forward<T>(gates_x.data<T>(), w_h.data<T>(), w_proj.data<T>(), h0.data<T>(), c0.data<T>(), s,
                               h.data<T>(), saved.gates.data<T>(), saved.memory.data<T>(), saved.projected.data<T>(),
                               saved.cell.data<T>(), c_last.data<T>());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::lstm_forward<T>(device_data<T>(gates_x), device_data<T>(w_h), device_data<T>(w_proj), device_data<T>(h0),
                              device_data<float>(c0), s, device_data<T>(h), device_data<T>(saved.gates),
                              device_data<T>(saved.memory), device_data<T>(saved.projected),
                              device_data<float>(saved.cell), device_data<float>(c_last));
      });
}

void lstm_backward(const Tensor& dh, const Tensor& w_h, const Tensor& w_proj, const Tensor& h0, const Tensor& c0,
                   const Tensor& h, const LstmSaved& saved, const LstmShape& s, Tensor& dgates_x, Tensor& dw_h,
                   Tensor& dw_proj) {
  constexpr std::string_view op = "lstm_backward";
  check_common(dh, w_h, w_proj, h0, c0, saved, s, op);
  const int64_t rows = s.steps * s.streams;
  check_like(dh, dh, {rows, s.projection}, op, "dh");
  check_like(h, dh, {rows, s.projection}, op, "h");
  check_like(dgates_x, dh, {rows, 4 * s.cell}, op, "dgates_x");
  check_wide(dw_h, dh, {4 * s.cell, s.projection}, op, "dw_h");
  check_wide(dw_proj, dh, {s.projection, s.cell}, op, "dw_proj");
  check_disjoint(op, {{dgates_x, "dgates_x"}, {dw_h, "dw_h"}, {dw_proj, "dw_proj"}},
                 {{dh, "dh"},
                  {w_h, "w_h"},
                  {w_proj, "w_proj"},
                  {h0, "h0"},
                  {c0, "c0"},
                  {h, "h"},
                  {saved.gates, "saved.gates"},
                  {saved.memory, "saved.memory"},
                  {saved.projected, "saved.projected"},
                  {saved.cell, "saved.cell"}});
  on_device(
      dh, op,
      [&] {
        with_floating(dh.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::lstm_backward<T>(dh.data<T>(), w_h.data<T>(), w_proj.data<T>(), h0.data<T>(), c0.data<T>(), h.data<T>(),
                                saved.gates.data<T>(), saved.memory.data<T>(), saved.projected.data<T>(),
                                saved.cell.data<T>(), s, dgates_x.data<T>(), dw_h.data<T>(), dw_proj.data<T>());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::lstm_backward<T>(device_data<T>(dh), device_data<T>(w_h), device_data<T>(w_proj), device_data<T>(h0),
                               device_data<float>(c0), device_data<T>(h), device_data<T>(saved.gates),
                               device_data<T>(saved.memory), device_data<T>(saved.projected),
                               device_data<float>(saved.cell), s, device_data<T>(dgates_x), device_data<float>(dw_h),
                               device_data<float>(dw_proj));
      });
}

}  // namespace kglm::nn
