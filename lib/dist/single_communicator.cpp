#include "dist/single_communicator.hpp"

#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"

namespace kglm::dist {

void SingleCommunicator::broadcast(nn::Tensor&, int root) {
  if (root != 0) throw Error("broadcast: root " + std::to_string(root) + " of a single rank");
}

void SingleCommunicator::reduce_scatter(const nn::Tensor& in, nn::Tensor& out, ReduceOp) {
  check_reducible(in, "reduce_scatter");
  if (in.numel() != out.numel())
    throw Error("reduce_scatter: " + std::to_string(in.numel()) + " elements into a block of " +
                std::to_string(out.numel()) + " on a single rank");
  if (out.raw() != in.raw()) out.copy_from(in);
}

void SingleCommunicator::abort(const std::string& message, int code) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::exit(code);
}

}  // namespace kglm::dist
