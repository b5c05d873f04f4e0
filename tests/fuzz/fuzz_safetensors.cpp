// libFuzzer target: bytes as a safetensors file. parse() either throws Error or accepts a file whose
// entries lie inside the data section and tile it; then every entry reads with the size its shape
// and dtype say, through read(), read_f32() and read_i32() where the dtype allows. Any abort() or
// sanitizer report is a bug. Seeds in tests/fuzz/safetensors-corpus.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "nn/safetensors.hpp"

namespace {

using namespace kglm::nn;

int64_t element_count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // the validator guarantees no overflow
  return n;
}

void check_tensor(const Tensor& t, const SafetensorsEntry& e, DType dtype) {
  if (t.dtype() != dtype || t.shape() != e.shape || t.numel() != element_count(e.shape)) std::abort();
}

void check_file(const uint8_t* data, size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    SafetensorsFile f = SafetensorsFile::parse(bytes, "fuzz");
    uint64_t covered = 0;
    for (const SafetensorsEntry& e : f.entries()) {
      std::span<const std::byte> b = f.bytes(e);
      if (b.size() != e.end - e.begin || b.data() < bytes.data() || b.data() + b.size() > bytes.data() + size)
        std::abort();
      covered += b.size();
      if (f.find(e.name) != &e) std::abort();
      if (!e.tensor_dtype) continue;
      Tensor t = f.read(e.name);
      check_tensor(t, e, e.dtype);
      if (t.nbytes() != b.size()) std::abort();
      if (e.dtype == DType::F32 || e.dtype == DType::F64 || e.dtype == DType::BF16 || e.dtype == DType::F16)
        check_tensor(f.read_f32(e.name), e, DType::F32);
      if (e.dtype == DType::I32 || e.dtype == DType::I64) {
        try {
          check_tensor(f.read_i32(e.name), e, DType::I32);
        } catch (const kglm::Error&) {
          if (e.dtype == DType::I32) std::abort();  // only I64 values can be out of range
        }
      }
    }
    // The tensors tile the data section, which follows the header.
    uint64_t header = 0;
    for (int i = 0; i < 8; ++i) header |= static_cast<uint64_t>(data[i]) << (8 * i);
    if (covered != size - 8 - header) std::abort();
  } catch (const kglm::Error& e) {
    if (!std::string_view(e.what()).starts_with("fuzz: safetensors: ")) std::abort();  // every error is located
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_file(data, size);
  // Again with the length prefix rewritten to end the header at the first NUL byte past it, so that
  // mutations which change the JSON's length still get past the length check to the validator.
  if (size >= 8) {
    const uint8_t* nul = static_cast<const uint8_t*>(std::memchr(data + 8, 0, size - 8));
    uint64_t header = static_cast<uint64_t>((nul ? nul : data + size) - (data + 8));
    std::vector<uint8_t> fixed(data, data + size);
    for (int i = 0; i < 8; ++i) fixed[i] = static_cast<uint8_t>(header >> (8 * i));
    if (!std::equal(fixed.begin(), fixed.begin() + 8, data)) check_file(fixed.data(), fixed.size());
  }
  return 0;
}
