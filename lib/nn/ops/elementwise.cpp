#include "nn/ops/elementwise.hpp"

#include <string>

#include "nn/convert.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"
#include "nn/ops/index_range.hpp"

namespace kglm::nn {

using namespace detail;

void add(const Tensor& a, const Tensor& b, Tensor& out) {
  constexpr std::string_view op = "add";
  check_floating(a, op, "a");
  check_like(b, a, a.shape(), op, "b");
  check_like(out, a, a.shape(), op, "out");
  check_same_or_disjoint(out, a, op, "out", "a");
  check_same_or_disjoint(out, b, op, "out", "b");
  on_device(
      a, op,
      [&] {
        with_floating(a.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::add<T>(a.data<T>(), b.data<T>(), out.data<T>(), a.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::add<T>(device_data<T>(a), device_data<T>(b), device_data<T>(out), a.numel());
      });
}

void multiply(const Tensor& a, const Tensor& b, Tensor& out) {
  constexpr std::string_view op = "multiply";
  check_floating(a, op, "a");
  check_like(b, a, a.shape(), op, "b");
  check_like(out, a, a.shape(), op, "out");
  check_same_or_disjoint(out, a, op, "out", "a");
  check_same_or_disjoint(out, b, op, "out", "b");
  on_device(
      a, op,
      [&] {
        with_floating(a.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::multiply<T>(a.data<T>(), b.data<T>(), out.data<T>(), a.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::multiply<T>(device_data<T>(a), device_data<T>(b), device_data<T>(out), a.numel());
      });
}

void accumulate(Tensor& acc, const Tensor& x) {
  constexpr std::string_view op = "accumulate";
  check_floating(acc, op, "acc");
  check_like(x, acc, acc.shape(), op, "x");
  check_same_or_disjoint(acc, x, op, "acc", "x");
  on_device(
      acc, op,
      [&] {
        with_floating(acc.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::accumulate<T>(acc.data<T>(), x.data<T>(), acc.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::accumulate<T>(device_data<T>(acc), device_data<T>(x), acc.numel());
      });
}

void scale(Tensor& x, double s) {
  constexpr std::string_view op = "scale";
  check_floating(x, op, "x");
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::scale<T>(x.data<T>(), s, x.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::scale<T>(device_data<T>(x), s, x.numel());
      });
}

double sum_of_squares(const Tensor& x) {
  constexpr std::string_view op = "sum_of_squares";
  check_floating(x, op, "x");
  return on_device(
      x, op,
      [&] {
        return with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          return cpu::sum_of_squares<T>(x.data<T>(), x.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        return cuda::sum_of_squares<T>(device_data<T>(x), x.numel());
      });
}

void convert(const Tensor& from, Tensor& to) {
  constexpr std::string_view op = "convert";
  check_floating(from, op, "from");
  check_floating(to, op, "to");
  check_shape(to, from.shape(), op, "to");
  check_same_device(to, from, op);
  check_disjoint(to, from, op, "to", "from");
  if (from.dtype() == to.dtype()) {
    to.copy_from(from);
    return;
  }
  const bool widen = to.dtype() == DType::F32;
  const Tensor& half = widen ? from : to;
  if ((widen ? to : from).dtype() != DType::F32 || (half.dtype() != DType::BF16 && half.dtype() != DType::F16))
    throw Error(std::string(op) + ": converts between F32 and BF16 or F16, not " +
                std::string(dtype_name(from.dtype())) + " to " + std::string(dtype_name(to.dtype())));
  const auto n = static_cast<size_t>(from.numel());
  if (from.device() == Device::Cpu) {
    if (widen) {
      widen_to_f32(from.dtype(), static_cast<const std::byte*>(from.raw()), to.data<float>(), n);
    } else {
      narrow_from_f32(from.data<float>(), to.dtype(), static_cast<std::byte*>(to.raw()), n);
    }
    return;
  }
#ifdef KGLM_WITH_CUDA
  auto run = [&](auto tag) {
    using T = decltype(tag);
    if (widen) {
      cuda::convert<T, float>(device_data<T>(from), device_data<float>(to), from.numel());
    } else {
      cuda::convert<float, T>(device_data<float>(from), device_data<T>(to), from.numel());
    }
  };
  half.dtype() == DType::BF16 ? run(cuda::Bf16{}) : run(cuda::Half{});
#else
  no_backend(op);
#endif
}

namespace detail {

void gather_rows_checked(std::string_view op, std::string_view index_arg, const Tensor& index, const Tensor& src,
                         Tensor& out, bool accumulate) {
  check_floating(src, op, "src");
  check_rank(src, 2, op, "src");
  check_rank(index, 1, op, index_arg);
  const int64_t n = src.dim(0), h = src.dim(1), m = index.dim(0);
  check_index(index, DType::I32, src, {m}, op, index_arg);
  check_like(out, src, {m, h}, op, "out");
  check_disjoint(op, {{out, "out"}}, {{src, "src"}, {index, index_arg}});
  on_device(
      src, op,
      [&] {
        with_floating(src.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::gather_rows<T>(op, index_arg, index.data<int32_t>(), m, src.data<T>(), n, h, out.data<T>(), accumulate);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        const int32_t* ids = device_data<int32_t>(index);
        cuda::check_indices(op, index_arg, ids, m, IndexRange::rows(n));
        cuda::gather_rows<T>(ids, m, device_data<T>(src), h, device_data<T>(out), accumulate);
      });
}

// dsrc is of dout's dtype or, for a half-precision dout, F32 (a parameter gradient).
void scatter_add_rows_checked(std::string_view op, std::string_view index_arg, const Tensor& index, const Tensor& dout,
                              Tensor& dsrc) {
  check_floating(dout, op, "dout");
  check_rank(dout, 2, op, "dout");
  check_rank(dsrc, 2, op, "dsrc");
  check_rank(index, 1, op, index_arg);
  const int64_t n = dsrc.dim(0), h = dsrc.dim(1), m = index.dim(0);
  check_index(index, DType::I32, dout, {m}, op, index_arg);
  check_shape(dout, {m, h}, op, "dout");
  if (dsrc.dtype() != wide_dtype(dout.dtype())) check_dtype(dsrc, dout.dtype(), op, "dsrc");
  check_same_device(dsrc, dout, op);
  check_disjoint(op, {{dsrc, "dsrc"}}, {{dout, "dout"}, {index, index_arg}});
  on_device(
      dout, op,
      [&] {
        with_floating(dsrc.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::scatter_add_rows<T>(op, index_arg, index.data<int32_t>(), m, dout.data<T>(), n, h, dsrc.data<T>());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        const int32_t* ids = device_data<int32_t>(index);
        cuda::check_indices(op, index_arg, ids, m, IndexRange::rows(n));
        if (dsrc.dtype() == DType::F32) {
          cuda::scatter_add_rows<T, float>(ids, m, device_data<T>(dout), n, h, device_data<float>(dsrc));
        } else if constexpr (!std::is_same_v<T, float>) {
          cuda::scatter_add_rows<T, T>(ids, m, device_data<T>(dout), n, h, device_data<T>(dsrc));
        }
      });
}

}  // namespace detail

void gather_rows(const Tensor& src, const Tensor& index, Tensor& out) {
  gather_rows_checked("gather_rows", "index", index, src, out, false);
}

void scatter_add_rows(const Tensor& dout, const Tensor& index, Tensor& dsrc) {
  scatter_add_rows_checked("scatter_add_rows", "index", index, dout, dsrc);
}

void copy_rows_strided(const Tensor& src, Tensor& dst, int64_t first, int64_t stride) {
  constexpr std::string_view op = "copy_rows_strided";
  check_floating(src, op, "src");
  check_rank(src, 2, op, "src");
  check_rank(dst, 2, op, "dst");
  const int64_t m = src.dim(0), h = src.dim(1), n = dst.dim(0);
  check_like(dst, src, {n, h}, op, "dst");
  if (stride < 1 || first < 0 || (m > 0 && first + (m - 1) * stride >= n))
    throw Error(std::string(op) + ": rows " + std::to_string(first) + " + i·" + std::to_string(stride) + ", i < " +
                std::to_string(m) + ", do not fit the " + std::to_string(n) + " rows of dst");
  check_disjoint(dst, src, op, "dst", "src");
  on_device(
      src, op,
      [&] {
        with_floating(src.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::copy_rows_strided<T>(src.data<T>(), m, h, dst.data<T>(), first, stride);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::copy_rows_strided<T>(device_data<T>(src), m, h, device_data<T>(dst), first, stride);
      });
}

}  // namespace kglm::nn
