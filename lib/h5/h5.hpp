// A thin RAII layer over the HDF5 C API: files, groups, attributes, and 1-D column datasets
// (chunked, shuffled, deflate-compressed), written whole or appended in a streaming way, plus
// string tables (offsets + UTF-8 blob). Every HDF5 failure becomes a kglm::Error naming the
// file and object.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/provenance.hpp"
#include "core/shard.hpp"

namespace kglm::h5 {

// Owns one hid_t and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  void reset();

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

template <class T>
hid_t native_type();
template <>
inline hid_t native_type<uint8_t>() {
  return H5T_NATIVE_UINT8;
}
template <>
inline hid_t native_type<int8_t>() {
  return H5T_NATIVE_INT8;
}
template <>
inline hid_t native_type<uint16_t>() {
  return H5T_NATIVE_UINT16;
}
template <>
inline hid_t native_type<int16_t>() {
  return H5T_NATIVE_INT16;
}
template <>
inline hid_t native_type<uint32_t>() {
  return H5T_NATIVE_UINT32;
}
template <>
inline hid_t native_type<int32_t>() {
  return H5T_NATIVE_INT32;
}
template <>
inline hid_t native_type<uint64_t>() {
  return H5T_NATIVE_UINT64;
}
template <>
inline hid_t native_type<int64_t>() {
  return H5T_NATIVE_INT64;
}
template <>
inline hid_t native_type<float>() {
  return H5T_NATIVE_FLOAT;
}
template <>
inline hid_t native_type<double>() {
  return H5T_NATIVE_DOUBLE;
}
template <>
inline hid_t native_type<char>() {
  return H5T_NATIVE_UINT8;  // text bytes (UTF-8) are stored as uint8: no sign, same bits
}

class Group {
 public:
  Group() = default;
  Group(Handle h, std::string file, std::string path)
      : handle_(std::move(h)), file_(std::move(file)), path_(std::move(path)) {}

  hid_t id() const { return handle_.get(); }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  std::string child_path(std::string_view name) const;
  // "file:/path: " for messages.
  std::string where(std::string_view name = {}) const;

  bool has(std::string_view name) const;
  Group open_group(std::string_view name) const;
  Group create_group(std::string_view name) const;
  std::vector<std::string> children() const;  // sorted by name

  void set_attribute(std::string_view name, std::string_view value) const;
  void set_attribute(std::string_view name, int64_t value) const;
  void set_attribute(std::string_view name, const std::vector<int64_t>& values) const;
  bool has_attribute(std::string_view name) const;
  std::string string_attribute(std::string_view name) const;
  int64_t int_attribute(std::string_view name) const;
  std::vector<int64_t> int_array_attribute(std::string_view name) const;

 private:
  Handle handle_;
  std::string file_;
  std::string path_;
};

class File {
 public:
  static File create(const std::string& path);  // truncates
  static File open(const std::string& path);    // read-only
  const Group& root() const { return root_; }
  const std::string& path() const { return path_; }
  void close();  // flushes; errors surface here rather than in a destructor

 private:
  Handle handle_;
  Group root_;
  std::string path_;
};

// Number of elements of a 1-D dataset.
uint64_t column_size(const Group& g, std::string_view name);

// Reads elements [start, start + count) of a 1-D dataset into out.
void read_column_range(const Group& g, std::string_view name, hid_t mem_type, uint64_t start, uint64_t count,
                       void* out);

template <class T>
std::vector<T> read_column(const Group& g, std::string_view name) {
  std::vector<T> out(column_size(g, name));
  if (!out.empty()) read_column_range(g, name, native_type<T>(), 0, out.size(), out.data());
  return out;
}

// Threads that compress column chunks in the background (default 1; HDF5 itself is only ever
// called from the writing thread) and the deflate level (1 fast, default; up to 12; 0 stores
// chunks without filters). Set before the first column writer is created.
void set_compression(unsigned threads, int level);

// A growable 1-D dataset written through a buffer that is flushed in whole chunks: memory stays
// at a few chunks per column however large the column grows. Each chunk is shuffled and
// compressed with libdeflate (several times faster than the zlib inside HDF5's deflate filter) on
// a background thread and stored with H5Dwrite_chunk, in order. The file is an ordinary
// shuffle+deflate chunked dataset for any HDF5 reader.
class ColumnWriterBase {
 public:
  ColumnWriterBase(const Group& g, std::string name, hid_t type, size_t elem_size, size_t chunk);
  ~ColumnWriterBase();
  ColumnWriterBase(ColumnWriterBase&&) noexcept;
  ColumnWriterBase& operator=(ColumnWriterBase&&) noexcept;

  uint64_t size() const { return written_ + buffered_ / elem_size_; }
  void finish();  // writes the partial last chunk

 protected:
  void append_bytes(const void* data, size_t n_elems);

 private:
  void write_elems(const char* data, size_t n_elems);

  struct PackedChunk;
  static PackedChunk pack(std::vector<char> raw, hsize_t offset, size_t elem);
  void write_packed(PackedChunk& chunk);
  void drain(size_t keep);

  std::deque<std::future<PackedChunk>> pending_;
  Handle dataset_;
  std::string where_;
  size_t elem_size_;
  size_t chunk_;
  uint64_t written_ = 0;
  std::vector<char> buffer_;
  size_t buffered_ = 0;  // bytes
};

template <class T>
class ColumnWriter : public ColumnWriterBase {
 public:
  ColumnWriter(const Group& g, std::string name, size_t chunk = kDefaultChunk)
      : ColumnWriterBase(g, std::move(name), native_type<T>(), sizeof(T), chunk) {}
  void append(const T& v) { append_bytes(&v, 1); }
  void append(const T* v, size_t n) { append_bytes(v, n); }
  static constexpr size_t kDefaultChunk = 16384;
};

// Writes a whole vector as a chunked, compressed column.
template <class T>
void write_column(const Group& g, std::string name, const std::vector<T>& values) {
  ColumnWriter<T> w(g, std::move(name));
  w.append(values.data(), values.size());
  w.finish();
}

// A float32 matrix [rows, cols] as one 2-D dataset (rows in chunks of up to 1024, deflated), as
// h5py and numpy read a matrix.
void write_matrix(const Group& g, std::string_view name, const float* data, uint64_t rows, uint64_t cols);

// A float32 array of any rank as one contiguous dataset, as h5py's create_dataset writes one
// (bilm-tf's weights.hdf5). `name` may be a path ("CNN/W_cnn_0"): missing groups are created.
void write_float_array(const Group& g, std::string_view name, const float* data, const std::vector<uint64_t>& dims);

// A floating dataset's shape and values, converted to float32 by HDF5; kglm::Error naming the file
// and the path when it is missing or not floating point.
struct FloatArray {
  std::vector<uint64_t> dims;
  std::vector<float> values;
};
FloatArray read_float_array(const Group& g, std::string_view name);

// A one-dimensional dataset of variable-length UTF-8 strings (what h5py writes for
// special_dtype(vlen=str), and reads back as str).
void write_string_array(const Group& g, std::string_view name, const std::vector<std::string>& values);

// A string column: group NAME with `offsets` (uint64, n + 1 entries, first 0) and `blob`
// (UTF-8 bytes); string i is blob[offsets[i], offsets[i+1]).
class StringColumnWriter {
 public:
  StringColumnWriter(const Group& parent, std::string_view name);
  void append(std::string_view s);
  uint64_t size() const { return offsets_.size() - 1; }
  void finish();

 private:
  Group group_;
  ColumnWriter<uint64_t> offsets_;
  ColumnWriter<char> blob_;
  uint64_t end_ = 0;
};

struct StringTable {
  std::vector<uint64_t> offsets{0};
  std::string blob;
  size_t size() const { return offsets.size() - 1; }
  std::string_view operator[](size_t i) const {
    return std::string_view(blob).substr(offsets[i], offsets[i + 1] - offsets[i]);
  }
  void push_back(std::string_view s) {
    blob.append(s);
    offsets.push_back(blob.size());
  }
};

// Reads and validates a string column (offsets monotone and within the blob).
StringTable read_string_table(const Group& parent, std::string_view name);

// Provenance as attributes of g: tool, version, command_line, input_names (newline-separated),
// input_sizes (int64[], -1 = unknown), seed, created.
void write_provenance(const Group& g, const Provenance& p);

// What a kglm HDF5 file is, from its root's format attribute, for "is X; expected Y" messages:
// "a KG store (kglm-kg)", "a token dataset (kglm-tokens)", "an HDF5 file of another program".
std::string describe_format(const Group& root);
Provenance read_provenance(const Group& g);

// A job array's part (core/shard.hpp) as attributes of g: shard_index, shard_count, shard_run.
void write_shard(const Group& g, const Shard& shard, const std::string& run);
// The part's shard, or count 1 when g has none (a file of an unsharded run, or of a kglm before 0.2).
ShardPart read_shard_part(const Group& g, const std::string& path);

}  // namespace kglm::h5
