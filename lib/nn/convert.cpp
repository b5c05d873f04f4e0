// Written out bit by bit rather than with F16C intrinsics or compiler _Float16 support: the build
// may target CPUs without F16C (-DKGLM_ARCH=), GCC 12 has no std::bfloat16_t, and the rules are
// short enough to check exhaustively in the tests. None of this is on a hot path (checkpoint I/O).
#include "nn/convert.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace kglm::nn {

float bf16_to_f32(uint16_t bits) {
  // BF16 is the upper half of an fp32.
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

float f16_to_f32(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f)  // inf or NaN: the payload moves up, so the quiet bit stays the quiet bit
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in fp32 (a small integer times a power of two).
    float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

uint16_t f32_to_bf16(float value) {
  uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u)  // NaN: truncating could clear every payload bit (-> inf)
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even; a carry into the
  // exponent is the right result, up to inf.
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

uint16_t f32_to_f16(float value) {
  uint32_t x = std::bit_cast<uint32_t>(value);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((x >> 13) & 0x3ffu));  // quiet NaN
  // 65520 is halfway between 65504 (the largest F16) and 65536; the tie goes to the even side, inf.
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (x < 0x38800000u) {
    // Below 2^-14: an F16 subnormal, mantissa = round(value * 2^24). The product is exact and
    // nearbyint rounds ties to even (the default rounding mode); 1024 is the smallest normal.
    float scaled = std::bit_cast<float>(x) * 0x1p24f;
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
  }
  x -= (127u - 15u) << 23;  // rebias the exponent
  x += 0xfffu + ((x >> 13) & 1u);
  return static_cast<uint16_t>(sign | (x >> 13));
}

float f64_to_f32(double value) {
  // Halfway between FLT_MAX and 2^128: from there on (ties to even) the result is inf.
  constexpr double kOverflow = 0x1.ffffffp127;
  if (std::fabs(value) >= kOverflow) return std::signbit(value) ? -HUGE_VALF : HUGE_VALF;
  return static_cast<float>(value);  // NaN converts to NaN
}

namespace {

template <class From, class Convert>
void widen(const std::byte* in, float* out, size_t n, Convert convert) {
  for (size_t i = 0; i < n; ++i) {
    From v;
    std::memcpy(&v, in + i * sizeof(From), sizeof(From));
    out[i] = convert(v);
  }
}

}  // namespace

void widen_to_f32(DType from, const std::byte* in, float* out, size_t n) {
  switch (from) {
    case DType::F32:
      if (n > 0) std::memcpy(out, in, n * sizeof(float));
      return;
    case DType::F64:
      return widen<double>(in, out, n, f64_to_f32);
    case DType::BF16:
      return widen<uint16_t>(in, out, n, bf16_to_f32);
    case DType::F16:
      return widen<uint16_t>(in, out, n, f16_to_f32);
    default:
      throw Error("to_f32: cannot convert " + std::string(dtype_name(from)) + " to F32");
  }
}

Tensor to_f32(const Tensor& t) {
  check_defined(t, "to_f32", "t");
  if (t.device() != Device::Cpu) throw Error("to_f32: the tensor is not on the CPU");
  if (t.dtype() == DType::F32) return t.clone();
  if (t.dtype() != DType::F64 && t.dtype() != DType::BF16 && t.dtype() != DType::F16)
    throw Error("to_f32: cannot convert " + std::string(dtype_name(t.dtype())) + " to F32");
  Tensor out = Tensor::empty(t.shape(), DType::F32);
  widen_to_f32(t.dtype(), static_cast<const std::byte*>(t.raw()), out.data<float>(), static_cast<size_t>(t.numel()));
  return out;
}

void narrow_from_f32(const float* in, DType to, std::byte* bytes, size_t n) {
  if (to != DType::F32 && to != DType::F64 && to != DType::BF16 && to != DType::F16)
    throw Error("cannot convert F32 to " + std::string(dtype_name(to)));
  for (size_t i = 0; i < n; ++i) {
    switch (to) {
      case DType::F64: {
        double v = in[i];
        std::memcpy(bytes + i * sizeof v, &v, sizeof v);
        break;
      }
      case DType::BF16:
      case DType::F16: {
        uint16_t v = to == DType::BF16 ? f32_to_bf16(in[i]) : f32_to_f16(in[i]);
        std::memcpy(bytes + i * sizeof v, &v, sizeof v);
        break;
      }
      default:
        std::memcpy(bytes + i * sizeof(float), &in[i], sizeof(float));
    }
  }
}

Tensor from_f32(const Tensor& t, DType to) {
  check_dtype(t, DType::F32, "from_f32", "t");
  if (t.device() != Device::Cpu) throw Error("from_f32: the tensor is not on the CPU");
  if (to != DType::F32 && to != DType::F64 && to != DType::BF16 && to != DType::F16)
    throw Error("from_f32: cannot convert F32 to " + std::string(dtype_name(to)));
  Tensor out = Tensor::empty(t.shape(), to);
  narrow_from_f32(t.data<float>(), to, static_cast<std::byte*>(out.raw()), static_cast<size_t>(t.numel()));
  return out;
}

}  // namespace kglm::nn
