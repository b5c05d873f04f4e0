#include "nn/safetensors.hpp"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "nn/convert.hpp"

namespace kglm::nn {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; add byte swapping");

namespace {

// The reference implementation's limit; it keeps a hostile length from driving a huge allocation.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeInfo {
  std::string_view name;
  size_t size;
  bool tensor;  // Tensor can hold it as `dtype`
  DType dtype;
};

// Every fixed-width dtype of the format. The sub-byte ones (F4, F6_*) have no byte size per
// element and are reported as unknown.
constexpr DTypeInfo kDTypes[] = {
    {"F32", 4, true, DType::F32},     {"F64", 8, true, DType::F64},     {"BF16", 2, true, DType::BF16},
    {"F16", 2, true, DType::F16},     {"I32", 4, true, DType::I32},     {"I64", 8, true, DType::I64},
    {"U8", 1, true, DType::U8},       {"BOOL", 1, false, DType::U8},    {"I8", 1, false, DType::U8},
    {"I16", 2, false, DType::U8},     {"U16", 2, false, DType::U8},     {"U32", 4, false, DType::U8},
    {"U64", 8, false, DType::U8},     {"F8_E4M3", 1, false, DType::U8}, {"F8_E5M2", 1, false, DType::U8},
    {"F8_E8M0", 1, false, DType::U8}, {"C64", 8, false, DType::U8},
};

const DTypeInfo* find_dtype(std::string_view name) {
  for (const DTypeInfo& d : kDTypes)
    if (d.name == name) return &d;
  return nullptr;
}

// s cut to at most max bytes, on a UTF-8 boundary; true when it was cut.
bool cut(std::string_view& s, size_t max) {
  if (s.size() <= max) return false;
  while (max > 0 && (static_cast<unsigned char>(s[max]) & 0xc0) == 0x80) --max;
  s = s.substr(0, max);
  return true;
}

// A name for messages: JSON-quoted (names may hold any character) and cut short, since a hostile
// header can have megabyte-long names.
std::string shown_name(std::string_view name) {
  bool was_cut = cut(name, 120);
  std::string out;
  append_json_string(out, name);
  if (was_cut) out.insert(out.size() - 1, "...");
  return out;
}

// A JSON value for messages, cut short.
std::string snippet(simdjson::dom::element value) {
  std::string text = simdjson::minify(value);
  std::string_view shown = text;
  return cut(shown, 40) ? std::string(shown) + "..." : text;
}

std::string range(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

class Validator {
 public:
  explicit Validator(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(const std::string& what) const { throw Error(location(source_) + "safetensors: " + what); }
  [[noreturn]] void fail(std::string_view tensor, const std::string& what) const {
    fail("tensor " + shown_name(tensor) + ": " + what);
  }

  SafetensorsEntry entry(std::string_view name, simdjson::dom::element value, uint64_t data_size) const {
    simdjson::dom::object fields;
    if (value.get(fields) != simdjson::SUCCESS) fail(name, "the entry is not an object");
    simdjson::dom::element dtype_value, shape_value, offsets_value;
    bool have_dtype = false, have_shape = false, have_offsets = false;
    for (simdjson::dom::key_value_pair field : fields) {
      bool* seen = nullptr;
      if (field.key == "dtype") {
        seen = &have_dtype;
        dtype_value = field.value;
      } else if (field.key == "shape") {
        seen = &have_shape;
        shape_value = field.value;
      } else if (field.key == "data_offsets") {
        seen = &have_offsets;
        offsets_value = field.value;
      } else {
        continue;  // unknown fields are ignored, as the reference reader does
      }
      if (*seen) fail(name, "duplicate field \"" + std::string(field.key) + "\"");
      *seen = true;
    }
    if (!have_dtype) fail(name, "no dtype");
    if (!have_shape) fail(name, "no shape");
    if (!have_offsets) fail(name, "no data_offsets");

    SafetensorsEntry e;
    e.name = std::string(name);
    std::string_view dtype_text;
    if (dtype_value.get(dtype_text) != simdjson::SUCCESS) fail(name, "dtype is not a string");
    const DTypeInfo* info = find_dtype(dtype_text);
    if (info == nullptr) fail(name, "unknown dtype " + shown_name(dtype_text));
    e.dtype = info->dtype;
    e.dtype_name = std::string(info->name);
    e.tensor_dtype = info->tensor;

    simdjson::dom::array dims;
    if (shape_value.get(dims) != simdjson::SUCCESS) fail(name, "shape is not an array of non-negative integers");
    for (simdjson::dom::element d : dims) {
      uint64_t dim = 0;
      if (d.get(dim) != simdjson::SUCCESS)
        fail(name, "shape is not an array of non-negative integers (dimension " + std::to_string(e.shape.size()) +
                       " is " + snippet(d) + ")");
      if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        fail(name, "dimension " + std::to_string(e.shape.size()) + " = " + std::to_string(dim) + " is too large");
      e.shape.push_back(static_cast<int64_t>(dim));
    }
    // Multiplied out in order, as Tensor counts elements, so no prefix product may overflow either.
    int64_t numel = 1;
    for (int64_t dim : e.shape)
      if (__builtin_mul_overflow(numel, dim, &numel))
        fail(name, "the element count of shape " + shape_string(e.shape) + " overflows");
    uint64_t nbytes = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(numel), static_cast<uint64_t>(info->size), &nbytes))
      fail(name, "the byte size of shape " + shape_string(e.shape) + " " + e.dtype_name + " overflows");

    simdjson::dom::array offsets;
    uint64_t bounds[2] = {0, 0};
    size_t count = 0;
    bool ok = offsets_value.get(offsets) == simdjson::SUCCESS;
    if (ok) {
      for (simdjson::dom::element o : offsets) {
        if (count == 2 || o.get(bounds[count]) != simdjson::SUCCESS) {
          ok = false;
          break;
        }
        ++count;
      }
    }
    if (!ok || count != 2) fail(name, "data_offsets is not a pair of non-negative integers");
    e.begin = bounds[0];
    e.end = bounds[1];
    if (e.begin > e.end) fail(name, "data_offsets " + range(e.begin, e.end) + " begin after they end");
    if (e.end > data_size)
      fail(name, "data_offsets " + range(e.begin, e.end) + " end past the data section (" + std::to_string(data_size) +
                     " bytes)");
    if (e.end - e.begin != nbytes)
      fail(name, "data_offsets " + range(e.begin, e.end) + " hold " + std::to_string(e.end - e.begin) +
                     " bytes, but shape " + shape_string(e.shape) + " " + e.dtype_name + " needs " +
                     std::to_string(nbytes));
    return e;
  }

  std::vector<std::pair<std::string, std::string>> metadata(simdjson::dom::element value) const {
    simdjson::dom::object fields;
    if (value.get(fields) != simdjson::SUCCESS) fail("__metadata__ is not an object of strings");
    std::vector<std::pair<std::string, std::string>> out;
    std::set<std::string_view> keys;
    for (simdjson::dom::key_value_pair field : fields) {
      std::string_view text;
      if (field.value.get(text) != simdjson::SUCCESS)
        fail("__metadata__ value of " + shown_name(field.key) + " is not a string");
      if (!keys.insert(field.key).second) fail("duplicate __metadata__ key " + shown_name(field.key));
      out.emplace_back(std::string(field.key), std::string(text));
    }
    return out;
  }

  // The reference format requires the tensors to tile the data section exactly.
  void coverage(const std::vector<SafetensorsEntry>& entries, uint64_t data_size) const {
    std::vector<const SafetensorsEntry*> order;
    order.reserve(entries.size());
    for (const SafetensorsEntry& e : entries) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
      return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
    });
    uint64_t covered = 0;
    const SafetensorsEntry* previous = nullptr;
    for (const SafetensorsEntry* e : order) {
      if (e->begin < covered)
        fail(e->name, "data_offsets " + range(e->begin, e->end) + " overlap tensor " + shown_name(previous->name) +
                          " " + range(previous->begin, previous->end));
      if (e->begin > covered)
        fail("gap in the data section: bytes " + range(covered, e->begin) + " before tensor " + shown_name(e->name) +
             " belong to no tensor");
      covered = e->end;
      previous = e;
    }
    if (covered != data_size)
      fail("bytes " + range(covered, data_size) + " at the end of the data section belong to no tensor");
  }

 private:
  const std::string& source_;
};

struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

}  // namespace

SafetensorsFile SafetensorsFile::parse(std::span<const std::byte> bytes, std::string source_name) {
  SafetensorsFile f;
  f.source_ = std::move(source_name);
  Validator check(f.source_);
  if (bytes.size() < 8)
    check.fail("the file has " + std::to_string(bytes.size()) + " bytes, too short for the 8-byte header length");
  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i) header_size |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  if (header_size == 0) check.fail("header length is 0");
  if (header_size > kMaxHeaderBytes)
    check.fail("header length " + std::to_string(header_size) + " is over the limit of " +
               std::to_string(kMaxHeaderBytes) + " bytes");
  if (header_size > bytes.size() - 8)
    check.fail("header length " + std::to_string(header_size) + " runs past the end of the file (" +
               std::to_string(bytes.size()) + " bytes)");
  f.data_ = bytes.subspan(8 + header_size);

  simdjson::dom::parser parser;
  simdjson::dom::element root;
  // realloc_if_needed: simdjson reads past the end of its input, so it parses a padded copy.
  auto error = parser.parse(reinterpret_cast<const char*>(bytes.data() + 8), header_size, true).get(root);
  if (error == simdjson::UTF8_ERROR) check.fail("the header is not valid UTF-8");
  if (error) check.fail(std::string("the header is not valid JSON: ") + simdjson::error_message(error));
  simdjson::dom::object header;
  if (root.get(header) != simdjson::SUCCESS) check.fail("the header is not a JSON object");

  bool have_metadata = false;
  for (simdjson::dom::key_value_pair field : header) {
    if (field.key == "__metadata__") {
      if (have_metadata) check.fail("duplicate __metadata__");
      have_metadata = true;
      f.metadata_ = check.metadata(field.value);
      continue;
    }
    if (f.index_.count(field.key)) check.fail("duplicate tensor name " + shown_name(field.key));
    f.entries_.push_back(check.entry(field.key, field.value, f.data_.size()));
    f.index_.emplace(f.entries_.back().name, f.entries_.size() - 1);
  }
  check.coverage(f.entries_, f.data_.size());
  return f;
}

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  std::string where = path.string();
  auto fail = [&](const std::string& what) { throw Error(location(where) + "safetensors: " + what); };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(std::string("cannot open: ") + std::strerror(errno));
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(std::string("cannot stat: ") + std::strerror(errno));

  std::shared_ptr<const void> owner;
  std::span<const std::byte> bytes;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    // A mapping, so a model file is copied once, straight into its tensors. (A file truncated by
    // someone else while mapped would fault; files are replaced by rename, which is safe.)
    size_t size = static_cast<size_t>(st.st_size);
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) fail(std::string("cannot map: ") + std::strerror(errno));
    owner = std::shared_ptr<const void>(p, [size](const void* q) { ::munmap(const_cast<void*>(q), size); });
    bytes = {static_cast<const std::byte*>(p), size};
  } else {
    // A pipe or an empty file: read it all.
    auto buffer = std::make_shared<std::vector<std::byte>>();
    std::vector<std::byte> chunk(1 << 16);
    for (;;) {
      ssize_t n = ::read(fd, chunk.data(), chunk.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(std::string("read error: ") + std::strerror(errno));
      if (n == 0) break;
      buffer->insert(buffer->end(), chunk.begin(), chunk.begin() + n);
    }
    bytes = {buffer->data(), buffer->size()};
    owner = buffer;
  }
  SafetensorsFile f = parse(bytes, where);
  f.owner_ = std::move(owner);
  return f;
}

const SafetensorsEntry* SafetensorsFile::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

std::span<const std::byte> SafetensorsFile::bytes(const SafetensorsEntry& e) const {
  if (e.begin > e.end || e.end > data_.size())
    throw Error(location(source_) + "safetensors: tensor " + shown_name(e.name) + " " + range(e.begin, e.end) +
                " is not an entry of this file");
  return data_.subspan(e.begin, e.end - e.begin);
}

const SafetensorsEntry& SafetensorsFile::require(std::string_view name) const {
  const SafetensorsEntry* e = find(name);
  if (e == nullptr) throw Error(location(source_) + "safetensors: no tensor " + shown_name(name));
  return *e;
}

Tensor SafetensorsFile::read(std::string_view name) const {
  const SafetensorsEntry& e = require(name);
  if (!e.tensor_dtype)
    throw Error(location(source_) + "safetensors: tensor " + shown_name(name) + " has dtype " + e.dtype_name +
                ", which Tensor does not support");
  std::span<const std::byte> data = bytes(e);
  Tensor t = Tensor::empty(e.shape, e.dtype);
  if (!data.empty()) std::memcpy(t.raw(), data.data(), data.size());
  return t;
}

Tensor SafetensorsFile::read_f32(std::string_view name) const {
  const SafetensorsEntry& e = require(name);
  bool is_float = e.tensor_dtype &&
                  (e.dtype == DType::F32 || e.dtype == DType::F64 || e.dtype == DType::BF16 || e.dtype == DType::F16);
  if (!is_float)
    throw Error(location(source_) + "safetensors: tensor " + shown_name(name) + " has dtype " + e.dtype_name +
                "; read_f32 converts F32, F64, BF16 and F16");
  Tensor t = Tensor::empty(e.shape, DType::F32);
  widen_to_f32(e.dtype, bytes(e).data(), t.data<float>(), static_cast<size_t>(t.numel()));
  return t;
}

Tensor SafetensorsFile::read_i32(std::string_view name) const {
  const SafetensorsEntry& e = require(name);
  if (!e.tensor_dtype || (e.dtype != DType::I32 && e.dtype != DType::I64))
    throw Error(location(source_) + "safetensors: tensor " + shown_name(name) + " has dtype " + e.dtype_name +
                "; read_i32 converts I32 and I64");
  if (e.dtype == DType::I32) return read(name);
  Tensor t = Tensor::empty(e.shape, DType::I32);
  const std::byte* in = bytes(e).data();
  int32_t* out = t.data<int32_t>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t v;
    std::memcpy(&v, in + i * sizeof v, sizeof v);
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      throw Error(location(source_) + "safetensors: tensor " + shown_name(name) + ": element " + std::to_string(i) +
                  " = " + std::to_string(v) + " does not fit in I32");
    out[i] = static_cast<int32_t>(v);
  }
  return t;
}

namespace {

// The header of a safetensors file of these tensors, padded so that 8 + its size is a multiple of 8.
std::string safetensors_header(const std::vector<std::pair<std::string, Tensor>>& tensors,
                               const std::vector<std::pair<std::string, std::string>>& metadata,
                               const std::string& where) {
  auto fail = [&](const std::string& what) { throw Error(location(where) + "safetensors: " + what); };
  auto check_utf8 = [&](std::string_view s, const char* what) {
    // The header must be valid UTF-8 or readers (this one included) reject the file.
    if (!simdjson::validate_utf8(s.data(), s.size())) fail(std::string(what) + " " + shown_name(s) + " is not UTF-8");
  };

  std::string header = "{";
  if (!metadata.empty()) {
    std::set<std::string_view> keys;
    header += "\"__metadata__\":{";
    for (const auto& [key, value] : metadata) {
      check_utf8(key, "metadata key");
      check_utf8(value, "metadata value");
      if (!keys.insert(key).second) fail("duplicate metadata key " + shown_name(key));
      if (header.back() != '{') header += ',';
      append_json_string(header, key);
      header += ':';
      append_json_string(header, value);
    }
    header += '}';
  }
  std::set<std::string_view> names;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    check_utf8(name, "tensor name");
    if (name == "__metadata__") fail("a tensor cannot be named \"__metadata__\"");
    if (!names.insert(name).second) fail("duplicate tensor name " + shown_name(name));
    if (!t.defined()) fail("tensor " + shown_name(name) + " is undefined");
    if (t.device() != Device::Cpu) fail("tensor " + shown_name(name) + " is not on the CPU");
    if (header.size() > 1) header += ',';
    append_json_string(header, name);
    header += ":{\"dtype\":\"";
    header += dtype_name(t.dtype());
    header += "\",\"shape\":[";
    for (size_t i = 0; i < t.shape().size(); ++i) {
      if (i) header += ',';
      append_json_uint(header, static_cast<uint64_t>(t.shape()[i]));
    }
    header += "],\"data_offsets\":[";
    append_json_uint(header, offset);
    header += ',';
    offset += t.nbytes();
    append_json_uint(header, offset);
    header += "]}";
  }
  header += '}';
  // Spaces (JSON whitespace) so the data section starts 8-byte aligned: 8 + header size.
  header.append((8 - header.size() % 8) % 8, ' ');
  if (header.size() > kMaxHeaderBytes) fail("the header would exceed " + std::to_string(kMaxHeaderBytes) + " bytes");

  return header;
}

}  // namespace

SafetensorsFile SafetensorsFile::from_tensors(const std::vector<std::pair<std::string, Tensor>>& tensors,
                                              std::string source_name) {
  const std::string header = safetensors_header(tensors, {}, source_name);
  auto buffer = std::make_shared<std::vector<std::byte>>(8 + header.size());
  for (int i = 0; i < 8; ++i) (*buffer)[static_cast<size_t>(i)] = static_cast<std::byte>(header.size() >> (8 * i));
  std::memcpy(buffer->data() + 8, header.data(), header.size());
  for (const auto& [name, t] : tensors) {
    const auto* raw = static_cast<const std::byte*>(t.raw());
    buffer->insert(buffer->end(), raw, raw + t.nbytes());
  }
  SafetensorsFile f = parse({buffer->data(), buffer->size()}, std::move(source_name));
  f.owner_ = std::move(buffer);
  return f;
}

void write_safetensors(const std::filesystem::path& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata) {
  std::string where = path.string();
  auto fail = [&](const std::string& what) { throw Error(location(where) + "safetensors: " + what); };
  const std::string header = safetensors_header(tensors, metadata, where);
  AtomicPath atomic(where);
  std::FILE* file = std::fopen(atomic.temp().c_str(), "wb");
  if (file == nullptr) fail("cannot create " + atomic.temp() + ": " + std::strerror(errno));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> guard(file, std::fclose);
  auto put = [&](const void* data, size_t n) {
    if (n > 0 && std::fwrite(data, 1, n, file) != n) fail(std::string("write error: ") + std::strerror(errno));
  };
  unsigned char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(header.size() >> (8 * i));
  put(length, sizeof length);
  put(header.data(), header.size());
  for (const auto& [name, t] : tensors) put(t.raw(), t.nbytes());
  // Flushed to disk before the rename, so a crash leaves the old file or the whole new one.
  if (std::fflush(file) != 0 || ::fsync(::fileno(file)) != 0) fail(std::string("write error: ") + std::strerror(errno));
  if (std::fclose(guard.release()) != 0) fail(std::string("write error: ") + std::strerror(errno));
  atomic.commit();
}

}  // namespace kglm::nn
