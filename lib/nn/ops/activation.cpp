#include "nn/ops/activation.hpp"

#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

namespace {

// An elementwise unary op: out has the shape of in, and is in itself or disjoint from it.
void check_unary(const Tensor& in, const Tensor& out, std::string_view op, std::string_view in_arg,
                 std::string_view out_arg) {
  check_floating(in, op, in_arg);
  check_like(out, in, in.shape(), op, out_arg);
  check_same_or_disjoint(out, in, op, out_arg, in_arg);
}

// A backward of one: dx from dy and a saved tensor (x or y) of the same shape; dx may be dy.
void check_unary_backward(const Tensor& dy, const Tensor& saved, const Tensor& dx, std::string_view op,
                          std::string_view saved_arg) {
  check_floating(saved, op, saved_arg);
  check_like(dy, saved, saved.shape(), op, "dy");
  check_like(dx, saved, saved.shape(), op, "dx");
  check_same_or_disjoint(dx, dy, op, "dx", "dy");
  check_same_or_disjoint(dx, saved, op, "dx", saved_arg);
}

}  // namespace

void gelu_forward(const Tensor& x, Tensor& y) {
  check_unary(x, y, "gelu_forward", "x", "y");
  on_device(
      x, "gelu_forward",
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::gelu_forward<T>(x.data<T>(), y.data<T>(), x.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::gelu_forward<T>(device_data<T>(x), device_data<T>(y), x.numel());
      });
}

void gelu_backward(const Tensor& dy, const Tensor& x, Tensor& dx) {
  check_unary_backward(dy, x, dx, "gelu_backward", "x");
  on_device(
      x, "gelu_backward",
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::gelu_backward<T>(dy.data<T>(), x.data<T>(), dx.data<T>(), x.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::gelu_backward<T>(device_data<T>(dy), device_data<T>(x), device_data<T>(dx), x.numel());
      });
}

void tanh_forward(const Tensor& x, Tensor& y) {
  check_unary(x, y, "tanh_forward", "x", "y");
  on_device(
      x, "tanh_forward",
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::tanh_forward<T>(x.data<T>(), y.data<T>(), x.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::tanh_forward<T>(device_data<T>(x), device_data<T>(y), x.numel());
      });
}

void tanh_backward(const Tensor& dy, const Tensor& y, Tensor& dx) {
  check_unary_backward(dy, y, dx, "tanh_backward", "y");
  on_device(
      y, "tanh_backward",
      [&] {
        with_floating(y.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::tanh_backward<T>(dy.data<T>(), y.data<T>(), dx.data<T>(), y.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::tanh_backward<T>(device_data<T>(dy), device_data<T>(y), device_data<T>(dx), y.numel());
      });
}

void relu_forward(const Tensor& x, Tensor& y) {
  check_unary(x, y, "relu_forward", "x", "y");
  on_device(
      x, "relu_forward",
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::relu_forward<T>(x.data<T>(), y.data<T>(), x.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::relu_forward<T>(device_data<T>(x), device_data<T>(y), x.numel());
      });
}

void relu_backward(const Tensor& dy, const Tensor& y, Tensor& dx) {
  check_unary_backward(dy, y, dx, "relu_backward", "y");
  on_device(
      y, "relu_backward",
      [&] {
        with_floating(y.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::relu_backward<T>(dy.data<T>(), y.data<T>(), dx.data<T>(), y.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::relu_backward<T>(device_data<T>(dy), device_data<T>(y), device_data<T>(dx), y.numel());
      });
}

void gelu_tanh_forward(const Tensor& x, Tensor& y) {
  check_unary(x, y, "gelu_tanh_forward", "x", "y");
  on_device(
      x, "gelu_tanh_forward",
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::gelu_tanh_forward<T>(x.data<T>(), y.data<T>(), x.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::gelu_tanh_forward<T>(device_data<T>(x), device_data<T>(y), x.numel());
      });
}

void gelu_tanh_backward(const Tensor& dy, const Tensor& x, Tensor& dx) {
  check_unary_backward(dy, x, dx, "gelu_tanh_backward", "x");
  on_device(
      x, "gelu_tanh_backward",
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::gelu_tanh_backward<T>(dy.data<T>(), x.data<T>(), dx.data<T>(), x.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::gelu_tanh_backward<T>(device_data<T>(dy), device_data<T>(x), device_data<T>(dx), x.numel());
      });
}

}  // namespace kglm::nn
