// PyTorch checkpoints (torch.save's zip archive) read without libtorch: a state dict written by torch
// 1.13 (tests/reference/data/torch: F32, F64, F16, BF16, I64, a transposed view, a slice with an
// offset, a scalar, an empty tensor) equals its safetensors twin written by the safetensors package;
// a pickle that calls os.system, torch's pre-1.6 format, non-zip bytes and truncated archives are
// refused with the file named. reference_transformers loads transformers' pytorch_model.bin files.
#include "nn/torch_checkpoint.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../unit/test_paths.hpp"
#include "core/error.hpp"
#include "nn/safetensors.hpp"

namespace kglm::nn {
namespace {

namespace fs = std::filesystem;

fs::path data_dir() { return fs::path(kglm::test::source_dir()) / "tests/reference/data/torch"; }

std::vector<std::byte> file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

void expect_refused(const std::function<void()>& read, const std::string& needle) {
  try {
    read();
    ADD_FAILURE() << "accepted; expected an error with " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(TorchCheckpoint, StateDictEqualsItsSafetensorsTwin) {
  const auto tensors = read_torch_state_dict(data_dir() / "state_dict.bin");
  const SafetensorsFile twin = SafetensorsFile::open(data_dir() / "state_dict.safetensors");
  ASSERT_EQ(tensors.size(), twin.entries().size());
  const std::vector<std::string> order = {"encoder.weight", "encoder.weight_t", "encoder.bias", "half", "bf16", "ids",
                                          "slice",          "scalar",           "empty"};
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, t] = tensors[i];
    EXPECT_EQ(name, order[i]);  // the dict's order
    const Tensor expected = twin.read(name);
    EXPECT_EQ(t.dtype(), expected.dtype()) << name;
    EXPECT_EQ(t.shape(), expected.shape()) << name;
    ASSERT_EQ(t.nbytes(), expected.nbytes()) << name;
    EXPECT_EQ(std::memcmp(t.raw(), expected.raw(), t.nbytes()), 0) << name;
  }
  // From memory too, and as a safetensors file for the loaders.
  const std::vector<std::byte> bytes = file_bytes(data_dir() / "state_dict.bin");
  EXPECT_EQ(read_torch_state_dict(bytes, "mem").size(), tensors.size());
  const SafetensorsFile held = SafetensorsFile::from_tensors(tensors, "held");
  EXPECT_EQ(held.read_f32("encoder.bias").shape(), (Shape{4}));
}

TEST(TorchCheckpoint, RefusesCodeOldFormatsAndGarbage) {
  expect_refused([] { read_torch_state_dict(data_dir() / "evil.bin"); }, "calls posix.system");
  expect_refused([] { read_torch_state_dict(data_dir() / "legacy.bin"); }, "PyTorch < 1.6");
  expect_refused([] { read_torch_state_dict(data_dir() / "state_dict.safetensors"); }, "not a torch.save checkpoint");
  expect_refused([] { read_torch_state_dict(data_dir() / "absent.bin"); }, "absent.bin: no such file");
  std::vector<std::byte> bytes = file_bytes(data_dir() / "state_dict.bin");
  for (size_t keep : {bytes.size() / 2, bytes.size() - 30, size_t{100}}) {
    const std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(keep));
    expect_refused([&] { read_torch_state_dict(cut, "cut.bin"); }, "cut.bin");
  }
}

TEST(TorchCheckpoint, ModelDirectoryPrefersSafetensors) {
  const fs::path dir = fs::temp_directory_path() / ("kglm-torch-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  expect_refused([&] { open_model_weights(dir); }, "no model.safetensors or pytorch_model.bin");
  fs::copy_file(data_dir() / "state_dict.bin", dir / "pytorch_model.bin");
  EXPECT_EQ(open_model_weights(dir).entries().size(), 9u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kglm::nn
