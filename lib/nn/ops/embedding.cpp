#include "nn/ops/embedding.hpp"

#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

// An embedding lookup is a row gather (its backward a scatter-add); only the names in errors differ.
void embedding_forward(const Tensor& ids, const Tensor& table, Tensor& out, GradMode mode) {
  gather_rows_checked("embedding_forward", "ids", ids, table, out, mode == GradMode::Accumulate);
}

void embedding_backward(const Tensor& ids, const Tensor& dout, Tensor& dtable) {
  scatter_add_rows_checked("embedding_backward", "ids", ids, dout, dtable);
}

}  // namespace kglm::nn
