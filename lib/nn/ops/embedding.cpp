#include "nn/ops/embedding.hpp"

#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

void embedding_forward(const Tensor& ids, const Tensor& table, Tensor& out, GradMode mode) {
  constexpr std::string_view op = "embedding_forward";
  check_floating(table, op, "table");
  check_rank(table, 2, op, "table");
  check_rank(ids, 1, op, "ids");
  const int64_t n = ids.dim(0), v = table.dim(0), h = table.dim(1);
  check_index(ids, DType::I32, table, {n}, op, "ids");
  check_like(out, table, {n, h}, op, "out");
  check_disjoint(out, table, op, "out", "table");
  check_disjoint(out, ids, op, "out", "ids");
  if (table.device() == Device::Cuda) no_backend(op);
  with_floating(table.dtype(), [&](auto zero) {
    using T = decltype(zero);
    cpu::gather_rows<T>(op, "ids", ids.data<int32_t>(), n, table.data<T>(), v, h, out.data<T>(),
                        mode == GradMode::Accumulate);
  });
}

void embedding_backward(const Tensor& ids, const Tensor& dout, Tensor& dtable) {
  constexpr std::string_view op = "embedding_backward";
  check_floating(dtable, op, "dtable");
  check_rank(dtable, 2, op, "dtable");
  check_rank(ids, 1, op, "ids");
  const int64_t n = ids.dim(0), v = dtable.dim(0), h = dtable.dim(1);
  check_index(ids, DType::I32, dtable, {n}, op, "ids");
  check_like(dout, dtable, {n, h}, op, "dout");
  check_disjoint(dtable, dout, op, "dtable", "dout");
  check_disjoint(dtable, ids, op, "dtable", "ids");
  if (dtable.device() == Device::Cuda) no_backend(op);
  with_floating(dtable.dtype(), [&](auto zero) {
    using T = decltype(zero);
    cpu::scatter_add_rows<T>(op, "ids", ids.data<int32_t>(), n, dout.data<T>(), v, h, dtable.data<T>());
  });
}

}  // namespace kglm::nn
