// libFuzzer target: bytes as a torch.save checkpoint (pytorch_model.bin). The reader either throws
// kglm::Error naming the source or returns tensors whose bytes match their shape and dtype; it never
// runs anything the pickle names. Any abort() or sanitizer report is a bug. Seeds in
// tests/fuzz/torch-corpus (the state dicts of tests/reference/data/torch).
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

#include "core/error.hpp"
#include "nn/torch_checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto tensors =
        kglm::nn::read_torch_state_dict(std::span(reinterpret_cast<const std::byte*>(data), size), "fuzz");
    for (const auto& [name, t] : tensors) {
      int64_t n = 1;
      for (int64_t d : t.shape()) n *= d;
      if (n != t.numel() || t.nbytes() != static_cast<size_t>(n) * kglm::nn::dtype_size(t.dtype())) std::abort();
    }
  } catch (const kglm::Error& e) {
    if (!std::string_view(e.what()).starts_with("fuzz")) std::abort();  // every error names the source
  }
  return 0;
}
