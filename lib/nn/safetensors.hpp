// Safetensors files (https://github.com/huggingface/safetensors): an 8-byte little-endian header
// length N, N bytes of JSON header {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
// "__metadata__": {string: string}}, then the data section, offsets relative to its start.
//
// Reading validates the whole header up front, as strictly as the reference implementation: the
// tensors must cover the data section exactly (no overlaps, gaps or trailing bytes). Any problem is
// a kglm::Error "SOURCE: safetensors: ..." naming the tensor; no input makes the reader crash or
// read outside the file. Tensor data is little-endian, as on every host this builds for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nn/tensor.hpp"

namespace kglm::nn {

struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::U8;  // meaningful only when `tensor_dtype`
  Shape shape;
  uint64_t begin = 0, end = 0;  // byte range in the data section
  // The dtype as spelled in the file. The validator accepts every fixed-width safetensors dtype; those
  // Tensor has no counterpart for (BOOL, I8, I16, U16, U32, U64, F8_*, C64) have
  // tensor_dtype == false and read() refuses them, though bytes() still gives their data.
  std::string dtype_name;
  bool tensor_dtype = true;
};

class SafetensorsFile {
 public:
  // Maps the file read-only (falls back to reading it, e.g. for a pipe) and validates it.
  static SafetensorsFile open(const std::filesystem::path& path);
  // Validates bytes already in memory, which the caller keeps alive as long as this object and the
  // spans it returns; source_name is used in messages.
  static SafetensorsFile parse(std::span<const std::byte> bytes, std::string source_name);

  // The tensors (defined, on the CPU) laid out as a safetensors file in memory that this object owns:
  // weights read from another format (a PyTorch pickle) go through the same loaders.
  static SafetensorsFile from_tensors(const std::vector<std::pair<std::string, Tensor>>& tensors,
                                      std::string source_name);

  const std::vector<SafetensorsEntry>& entries() const { return entries_; }  // header order
  const SafetensorsEntry* find(std::string_view name) const;                 // nullptr when absent
  // The entry's bytes in the file (no copy; possibly unaligned).
  std::span<const std::byte> bytes(const SafetensorsEntry& e) const;

  // A copy with the file's dtype (F32 F64 BF16 F16 I32 I64 U8); Error when absent or unsupported.
  Tensor read(std::string_view name) const;
  // F32 copied, F64/BF16/F16 converted to F32; Error for other dtypes.
  Tensor read_f32(std::string_view name) const;
  // I32 copied, I64 converted (Error naming the element when one does not fit); Error otherwise.
  Tensor read_i32(std::string_view name) const;

  const std::vector<std::pair<std::string, std::string>>& metadata() const { return metadata_; }  // header order
  const std::string& source() const { return source_; }

 private:
  SafetensorsFile() = default;
  const SafetensorsEntry& require(std::string_view name) const;

  std::shared_ptr<const void> owner_;  // the mapping or buffer behind file_ when open() made it
  std::span<const std::byte> data_;    // the data section
  std::string source_;
  std::vector<SafetensorsEntry> entries_;
  std::map<std::string, size_t, std::less<>> index_;  // name -> position in entries_
  std::vector<std::pair<std::string, std::string>> metadata_;
};

// Writes a safetensors file atomically (NAME.tmp.<pid>, renamed on success): the tensors in the
// given order with contiguous data, "__metadata__" first in the header when not empty, and the
// header padded with spaces so the data section starts at a multiple of 8, as the reference writer
// does. Tensors must be defined CPU tensors; names and metadata valid UTF-8, names unique and not
// "__metadata__".
void write_safetensors(const std::filesystem::path& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata = {});

}  // namespace kglm::nn
