// PyTorch's own checkpoint format, as transformers' save_pretrained(safe_serialization=False) writes
// it (pytorch_model.bin) and as most models on the hub still ship: torch.save's zip archive
// (PyTorch ≥ 1.6) holding ARCHIVE/data.pkl, a pickle of the state dict, and ARCHIVE/data/KEY, the raw
// little-endian bytes of each storage. No C++ library reads these without libtorch, so the pickle
// subset torch.save emits for a state dict is interpreted here (protocols 2 to 5: dicts, lists,
// tuples, numbers, strings, OrderedDict, _rebuild_tensor_v2 / _rebuild_parameter and storage
// persistent ids); anything else — arbitrary objects, code — is refused, never executed. The zip
// archive is read with libzip. The pre-1.6 format (a bare pickle stream) is refused with a message.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nn/safetensors.hpp"
#include "nn/tensor.hpp"

namespace kglm::nn {

// The tensors of a torch.save'd state dict, by name in the dict's order (each copied contiguous,
// with its dtype: F32, F64, F16, BF16, I64, I32, U8); Error naming the file and what is wrong.
std::vector<std::pair<std::string, Tensor>> read_torch_state_dict(const std::filesystem::path& path);
// The same from the archive's bytes in memory (for the fuzz target); source names them in messages.
std::vector<std::pair<std::string, Tensor>> read_torch_state_dict(std::span<const std::byte> bytes,
                                                                  const std::string& source);

// A model directory's weights: model.safetensors, else pytorch_model.bin (read as above and held in
// memory as a safetensors file); Error naming the directory when it has neither.
SafetensorsFile open_model_weights(const std::filesystem::path& dir);

}  // namespace kglm::nn
