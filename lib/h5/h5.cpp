#include "h5/h5.hpp"

#include <unistd.h>

#include <cerrno>

#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/thread_pool.hpp"

#include <libdeflate.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string_view>

namespace kglm::h5 {
namespace {

// HDF5 prints its error stack to stderr by default; kglm reports errors itself. Nor does HDF5 close
// its files at exit: after a failed write (a full disk) a file's close fails and its id stays open,
// and HDF5's own shutdown then crashed on it (exit 139) after kglm had reported the error and
// removed the temporary. Every file kglm writes is closed, flushed and checked before it is
// committed, so the shutdown has nothing left to save. (H5dont_atexit must come first.)
struct SilenceHdf5 {
  SilenceHdf5() {
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
};
const SilenceHdf5 silence_hdf5;

// The system's reason behind the failed call, from HDF5's error stack: its file drivers record
// errno's message ("error message = 'No space left on device'"). Empty when there is none.
std::string system_reason() {
  std::string reason;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned, const H5E_error2_t* e, void* out) -> herr_t {
        auto& found = *static_cast<std::string*>(out);
        constexpr std::string_view kKey = "error message = '";
        const std::string_view desc = e->desc ? e->desc : "";
        if (const size_t at = desc.find(kKey); found.empty() && at != std::string_view::npos) {
          const std::string_view rest = desc.substr(at + kKey.size());
          found = std::string(rest.substr(0, rest.find('\'')));
        }
        return 0;
      },
      &reason);
  return reason.empty() ? reason : ": " + reason;
}

hid_t check(hid_t id, const std::string& what) {
  if (id < 0) throw Error("HDF5: " + what + system_reason());
  return id;
}
void check(herr_t rc, const char* op, const std::string& where) {
  if (rc < 0) throw Error(where + "HDF5 " + op + " failed" + system_reason());
}

Handle dataset(const Group& g, std::string_view name) {
  std::string n(name);
  return Handle(check(H5Dopen2(g.id(), n.c_str(), H5P_DEFAULT), g.where(name) + "cannot open dataset"), H5Dclose);
}

Handle attribute(const Group& g, std::string_view name) {
  std::string n(name);
  return Handle(check(H5Aopen(g.id(), n.c_str(), H5P_DEFAULT), g.where() + "no attribute " + n), H5Aclose);
}

void write_attribute(const Group& g, std::string_view name, hid_t type, hid_t space, const void* data) {
  std::string n(name);
  if (H5Aexists(g.id(), n.c_str()) > 0) H5Adelete(g.id(), n.c_str());
  Handle attr(check(H5Acreate2(g.id(), n.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                    g.where() + "cannot create attribute " + n),
              H5Aclose);
  check(H5Awrite(attr.get(), type, data), "H5Awrite", g.where() + n + ": ");
}

}  // namespace

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    closer_ = o.closer_;
    o.id_ = H5I_INVALID_HID;
  }
  return *this;
}

void Handle::reset() {
  if (id_ >= 0 && closer_ != nullptr) closer_(id_);
  id_ = H5I_INVALID_HID;
}

std::string Group::child_path(std::string_view name) const {
  return (path_ == "/" ? "/" : path_ + "/") + std::string(name);
}

std::string Group::where(std::string_view name) const {
  return file_ + ":" + (name.empty() ? path_ : child_path(name)) + ": ";
}

bool Group::has(std::string_view name) const {
  std::string n(name);
  return H5Lexists(id(), n.c_str(), H5P_DEFAULT) > 0;
}

Group Group::open_group(std::string_view name) const {
  std::string n(name);
  return Group(Handle(check(H5Gopen2(id(), n.c_str(), H5P_DEFAULT), where(name) + "no such group"), H5Gclose), file_,
               child_path(name));
}

Group Group::create_group(std::string_view name) const {
  std::string n(name);
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_char_encoding(lcpl.get(), H5T_CSET_UTF8);
  return Group(Handle(check(H5Gcreate2(id(), n.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                            where(name) + "cannot create group"),
                      H5Gclose),
               file_, child_path(name));
}

std::vector<std::string> Group::children() const {
  std::vector<std::string> names;
  auto visit = [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  };
  check(H5Literate(id(), H5_INDEX_NAME, H5_ITER_INC, nullptr, visit, &names), "H5Literate", where());
  std::sort(names.begin(), names.end());
  return names;
}

void Group::set_attribute(std::string_view name, std::string_view value) const {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<size_t>(1, value.size()));
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  std::string padded(value);
  padded.resize(std::max<size_t>(1, value.size()), '\0');
  write_attribute(*this, name, type.get(), space.get(), padded.data());
}

void Group::set_attribute(std::string_view name, int64_t value) const {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  write_attribute(*this, name, H5T_NATIVE_INT64, space.get(), &value);
}

void Group::set_attribute(std::string_view name, const std::vector<int64_t>& values) const {
  hsize_t n = values.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  write_attribute(*this, name, H5T_NATIVE_INT64, space.get(), values.data());
}

void write_matrix(const Group& g, std::string_view name, const float* data, uint64_t rows, uint64_t cols) {
  const std::string n(name);
  const hsize_t dims[2] = {rows, cols};
  Handle space(H5Screate_simple(2, dims, nullptr), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (rows > 0 && cols > 0) {
    const hsize_t chunk[2] = {std::min<hsize_t>(rows, 1024), cols};
    check(H5Pset_chunk(dcpl.get(), 2, chunk), "H5Pset_chunk", g.where(name));
    check(H5Pset_deflate(dcpl.get(), 1), "H5Pset_deflate", g.where(name));
  }
  Handle matrix(check(H5Dcreate2(g.id(), n.c_str(), H5T_IEEE_F32LE, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                      g.where(name) + "cannot create dataset"),
                H5Dclose);
  if (rows > 0 && cols > 0)
    check(H5Dwrite(matrix.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "H5Dwrite", g.where(name));
}

void write_float_array(const Group& g, std::string_view name, const float* data, const std::vector<uint64_t>& dims) {
  const std::string n(name);
  const std::vector<hsize_t> extent(dims.begin(), dims.end());
  Handle space(H5Screate_simple(static_cast<int>(extent.size()), extent.data(), nullptr), H5Sclose);
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  check(H5Pset_create_intermediate_group(lcpl.get(), 1), "H5Pset_create_intermediate_group", g.where(name));
  Handle array(check(H5Dcreate2(g.id(), n.c_str(), H5T_IEEE_F32LE, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                     g.where(name) + "cannot create dataset"),
               H5Dclose);
  uint64_t count = 1;
  for (uint64_t d : dims) count *= d;
  if (count > 0)
    check(H5Dwrite(array.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "H5Dwrite", g.where(name));
}

void write_string_array(const Group& g, std::string_view name, const std::vector<std::string>& values) {
  const std::string n(name);
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  const hsize_t count = values.size();
  Handle space(H5Screate_simple(1, &count, nullptr), H5Sclose);
  Handle array(check(H5Dcreate2(g.id(), n.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     g.where(name) + "cannot create dataset"),
               H5Dclose);
  std::vector<const char*> pointers;
  for (const std::string& v : values) pointers.push_back(v.c_str());
  if (count > 0)
    check(H5Dwrite(array.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()), "H5Dwrite", g.where(name));
}

FloatArray read_float_array(const Group& g, std::string_view name) {
  Handle array = dataset(g, name);
  Handle type(H5Dget_type(array.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_FLOAT) throw Error(g.where(name) + "is not a floating-point dataset");
  Handle space(H5Dget_space(array.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) throw Error(g.where(name) + "cannot read its shape");
  std::vector<hsize_t> extent(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), extent.data(), nullptr);
  FloatArray out;
  uint64_t count = 1;
  for (hsize_t d : extent) {
    out.dims.push_back(d);
    count *= d;
  }
  out.values.resize(count);
  if (count > 0)
    check(H5Dread(array.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.values.data()), "H5Dread",
          g.where(name));
  return out;
}

bool Group::has_attribute(std::string_view name) const {
  std::string n(name);
  return H5Aexists(id(), n.c_str()) > 0;
}

std::string Group::string_attribute(std::string_view name) const {
  Handle attr = attribute(*this, name);
  Handle type(H5Aget_type(attr.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0) {
    throw Error(where() + "attribute " + std::string(name) + " is not a fixed-length string");
  }
  std::string value(H5Tget_size(type.get()), '\0');
  check(H5Aread(attr.get(), type.get(), value.data()), "H5Aread", where());
  value.resize(strnlen(value.data(), value.size()));
  return value;
}

int64_t Group::int_attribute(std::string_view name) const {
  Handle attr = attribute(*this, name);
  int64_t v = 0;
  check(H5Aread(attr.get(), H5T_NATIVE_INT64, &v), "H5Aread", where());
  return v;
}

std::vector<int64_t> Group::int_array_attribute(std::string_view name) const {
  Handle attr = attribute(*this, name);
  Handle space(H5Aget_space(attr.get()), H5Sclose);
  std::vector<int64_t> v(static_cast<size_t>(H5Sget_simple_extent_npoints(space.get())));
  if (!v.empty()) check(H5Aread(attr.get(), H5T_NATIVE_INT64, v.data()), "H5Aread", where());
  return v;
}

File File::create(const std::string& path) {
  File f;
  f.path_ = path;
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // The 1.8 file format keeps the store readable by older HDF5 (1.8+) and h5py builds.
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  f.handle_ =
      Handle(check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), path + ": cannot create HDF5 file"),
             H5Fclose);
  f.root_ = Group(Handle(check(H5Gopen2(f.handle_.get(), "/", H5P_DEFAULT), path), H5Gclose), path, "/");
  return f;
}

File File::open(const std::string& path) {
  File f;
  f.path_ = path;
  if (::access(path.c_str(), R_OK) != 0) throw Error(location(path) + "cannot open: " + std::strerror(errno));
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    const std::string what = describe_file(path);
    if (what == "an HDF5 file") throw Error(location(path) + "a damaged or truncated HDF5 file");
    throw Error(location(path) + "is " + what + "; expected an HDF5 file");
  }
  f.handle_ =
      Handle(check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path + ": cannot open HDF5 file"), H5Fclose);
  f.root_ = Group(Handle(check(H5Gopen2(f.handle_.get(), "/", H5P_DEFAULT), path), H5Gclose), path, "/");
  return f;
}

void File::close() {
  if (handle_.get() < 0) return;
  root_ = Group();
  check(H5Fflush(handle_.get(), H5F_SCOPE_GLOBAL), "H5Fflush", path_ + ": ");
  handle_.reset();
}

uint64_t column_size(const Group& g, std::string_view name) {
  Handle ds = dataset(g, name);
  Handle space(H5Dget_space(ds.get()), H5Sclose);
  if (H5Sget_simple_extent_ndims(space.get()) != 1) throw Error(g.where(name) + "not a 1-D dataset");
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  return n;
}

void read_column_range(const Group& g, std::string_view name, hid_t mem_type, uint64_t start, uint64_t count,
                       void* out) {
  Handle ds = dataset(g, name);
  Handle space(H5Dget_space(ds.get()), H5Sclose);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  if (start + count > n) throw Error(g.where(name) + "read past the end of the dataset");
  if (count == 0) return;
  hsize_t off = start;
  hsize_t cnt = count;
  check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &off, nullptr, &cnt, nullptr), "select", g.where(name));
  Handle mem(H5Screate_simple(1, &cnt, nullptr), H5Sclose);
  check(H5Dread(ds.get(), mem_type, mem.get(), space.get(), H5P_DEFAULT, out), "H5Dread", g.where(name));
}

struct ColumnWriterBase::PackedChunk {
  hsize_t offset = 0;
  uint32_t filter_mask = 0;
  std::vector<char> bytes;
};

namespace {

unsigned g_compression_threads = 1;
int g_compression_level = 1;

ThreadPool& compression_pool() {
  static ThreadPool pool(g_compression_threads);
  return pool;
}

// One libdeflate compressor per thread (they are not thread-safe, and cheap to keep).
libdeflate_compressor* thread_compressor() {
  struct Owner {
    libdeflate_compressor* c = libdeflate_alloc_compressor(g_compression_level);
    ~Owner() { libdeflate_free_compressor(c); }
  };
  thread_local Owner owner;
  if (owner.c == nullptr) throw Error("cannot allocate a libdeflate compressor");
  return owner.c;
}

// HDF5's shuffle filter: byte k of every element, for k = 0..E-1, stored together.
template <size_t E>
void shuffle(const char* in, char* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < E; ++k) out[k * n + i] = in[i * E + k];
  }
}

}  // namespace

void set_compression(unsigned threads, int level) {
  g_compression_threads = std::max(1u, threads);
  g_compression_level = std::clamp(level, 0, 12);
}

// Shuffles and deflates one chunk as HDF5's shuffle + deflate filters would.
ColumnWriterBase::PackedChunk ColumnWriterBase::pack(std::vector<char> raw, hsize_t offset, size_t elem) {
  PackedChunk out;
  out.offset = offset;
  if (g_compression_level == 0) {  // datasets without filters
    out.bytes = std::move(raw);
    return out;
  }
  std::vector<char> shuffled(raw.size());
  const size_t n = raw.size() / elem;
  switch (elem) {
    case 1:
      shuffled.swap(raw);
      break;
    case 2:
      shuffle<2>(raw.data(), shuffled.data(), n);
      break;
    case 4:
      shuffle<4>(raw.data(), shuffled.data(), n);
      break;
    case 8:
      shuffle<8>(raw.data(), shuffled.data(), n);
      break;
    default:
      for (size_t k = 0; k < elem; ++k) {
        for (size_t i = 0; i < n; ++i) shuffled[k * n + i] = raw[i * elem + k];
      }
  }
  libdeflate_compressor* c = thread_compressor();
  out.bytes.resize(libdeflate_zlib_compress_bound(c, shuffled.size()));
  size_t packed = libdeflate_zlib_compress(c, shuffled.data(), shuffled.size(), out.bytes.data(), out.bytes.size());
  if (packed == 0 || packed >= shuffled.size()) {
    // Incompressible: stored shuffled only; mask bit i = filter i skipped (deflate is last).
    out.filter_mask = 1u << (elem > 1 ? 1 : 0);
    out.bytes = std::move(shuffled);
  } else {
    out.bytes.resize(packed);
  }
  return out;
}

ColumnWriterBase::~ColumnWriterBase() = default;
ColumnWriterBase::ColumnWriterBase(ColumnWriterBase&&) noexcept = default;
ColumnWriterBase& ColumnWriterBase::operator=(ColumnWriterBase&&) noexcept = default;

ColumnWriterBase::ColumnWriterBase(const Group& g, std::string name, hid_t type, size_t elem_size, size_t chunk)
    : where_(g.where(name)), elem_size_(elem_size), chunk_(chunk) {
  hsize_t zero = 0;
  hsize_t unlimited = H5S_UNLIMITED;
  hsize_t chunk_dims = chunk;
  Handle space(H5Screate_simple(1, &zero, &unlimited), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  check(H5Pset_chunk(dcpl.get(), 1, &chunk_dims), "H5Pset_chunk", where_);
  if (g_compression_level > 0) {
    if (elem_size_ > 1) H5Pset_shuffle(dcpl.get());
    check(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(std::min(g_compression_level, 9))), "H5Pset_deflate",
          where_);
  }
  Handle dapl(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose);
  // Writes always cover whole chunks, so a chunk cache would only cost memory.
  H5Pset_chunk_cache(dapl.get(), 0, 0, H5D_CHUNK_CACHE_W0_DEFAULT);
  dataset_ = Handle(check(H5Dcreate2(g.id(), name.c_str(), type, space.get(), H5P_DEFAULT, dcpl.get(), dapl.get()),
                          where_ + "cannot create dataset"),
                    H5Dclose);
  buffer_.resize(chunk_ * elem_size_);
}

void ColumnWriterBase::append_bytes(const void* data, size_t n_elems) {
  if (n_elems == 0) return;  // data may be null then (an empty vector's data())
  const char* p = static_cast<const char*>(data);
  size_t bytes = n_elems * elem_size_;
  const size_t chunk_bytes = buffer_.size();
  // Fill the pending chunk first; then write whole chunks straight from the caller's memory.
  if (buffered_ > 0) {
    size_t take = std::min(bytes, chunk_bytes - buffered_);
    std::memcpy(buffer_.data() + buffered_, p, take);
    buffered_ += take;
    p += take;
    bytes -= take;
    if (buffered_ < chunk_bytes) return;
    write_elems(buffer_.data(), chunk_);
    buffered_ = 0;
  }
  size_t whole = bytes / chunk_bytes * chunk_bytes;
  if (whole > 0) write_elems(p, whole / elem_size_);
  std::memcpy(buffer_.data(), p + whole, bytes - whole);
  buffered_ = bytes - whole;
}

// Queues n_elems starting at a chunk boundary for compression, one whole chunk at a time (the
// last one zero-padded), and writes the chunks compressed so far.
void ColumnWriterBase::write_elems(const char* data, size_t n_elems) {
  const size_t chunk_bytes = chunk_ * elem_size_;
  for (size_t done = 0; done < n_elems; done += chunk_) {
    size_t n = std::min(chunk_, n_elems - done);
    std::vector<char> raw(chunk_bytes, 0);
    std::memcpy(raw.data(), data + done * elem_size_, n * elem_size_);
    hsize_t offset = written_ + done;
    const size_t elem = elem_size_;
    pending_.push_back(compression_pool().submit(
        [raw = std::move(raw), offset, elem]() mutable { return pack(std::move(raw), offset, elem); }));
  }
  written_ += n_elems;
  hsize_t extent = written_;
  check(H5Dset_extent(dataset_.get(), &extent), "H5Dset_extent", where_);
  drain(2);  // a few chunks in flight per column keep the compressor busy and memory bounded
}

void ColumnWriterBase::write_packed(PackedChunk& chunk) {
  check(H5Dwrite_chunk(dataset_.get(), H5P_DEFAULT, chunk.filter_mask, &chunk.offset, chunk.bytes.size(),
                       chunk.bytes.data()),
        "H5Dwrite_chunk", where_);
}

void ColumnWriterBase::drain(size_t keep) {
  while (pending_.size() > keep) {
    PackedChunk chunk = pending_.front().get();
    pending_.pop_front();
    write_packed(chunk);
  }
}

void ColumnWriterBase::finish() {
  if (buffered_ > 0) write_elems(buffer_.data(), buffered_ / elem_size_);
  drain(0);
  buffered_ = 0;
  buffer_ = {};
  dataset_.reset();
}

StringColumnWriter::StringColumnWriter(const Group& parent, std::string_view name)
    : group_(parent.create_group(name)), offsets_(group_, "offsets"), blob_(group_, "blob", 65536) {
  offsets_.append(0);
}

void StringColumnWriter::append(std::string_view s) {
  blob_.append(s.data(), s.size());
  end_ += s.size();
  offsets_.append(end_);
}

void StringColumnWriter::finish() {
  offsets_.finish();
  blob_.finish();
}

StringTable read_string_table(const Group& parent, std::string_view name) {
  Group g = parent.open_group(name);
  StringTable t;
  t.offsets = read_column<uint64_t>(g, "offsets");
  uint64_t blob_size = column_size(g, "blob");
  if (t.offsets.empty() || t.offsets.front() != 0) throw Error(g.where() + "bad string table offsets");
  for (size_t i = 1; i < t.offsets.size(); ++i) {
    if (t.offsets[i] < t.offsets[i - 1] || t.offsets[i] > blob_size) {
      throw Error(g.where() + "bad string table offset at " + std::to_string(i));
    }
  }
  t.blob.resize(blob_size);
  read_column_range(g, "blob", native_type<char>(), 0, blob_size, t.blob.data());
  return t;
}

std::string describe_format(const Group& root) {
  if (!root.has_attribute("format")) return "an HDF5 file of another program (no kglm format attribute)";
  const std::string format = root.string_attribute("format");
  static constexpr std::pair<std::string_view, std::string_view> kKnown[] = {
      {"kglm-kg", "a KG store"}, {"kglm-tokens", "a token dataset"}, {"kglm-cycles", "a cycles table"}};
  for (const auto& [name, what] : kKnown)
    if (format == name) return std::string(what) + " (" + format + ")";
  return "an HDF5 file of format '" + format + "'";
}

void write_provenance(const Group& g, const Provenance& p) {
  g.set_attribute("tool", p.tool);
  g.set_attribute("version", p.version);
  g.set_attribute("command_line", p.command_line);
  std::string names;
  std::vector<int64_t> sizes;
  for (const auto& in : p.inputs) {
    if (!names.empty()) names += '\n';
    names += in.name;
    sizes.push_back(in.size);
  }
  g.set_attribute("input_names", names);
  g.set_attribute("input_sizes", sizes);
  g.set_attribute("seed", static_cast<int64_t>(p.seed));
  g.set_attribute("created", p.created);
  // Written at the end of a run, so it knows which inputs --allow-truncated cut short.
  std::string truncated;
  for (const std::string& t : truncated_inputs()) truncated += (truncated.empty() ? "" : "\n") + t;
  if (!truncated.empty()) g.set_attribute("truncated_inputs", truncated);
}

void write_shard(const Group& g, const Shard& shard, const std::string& run) {
  g.set_attribute("shard_index", static_cast<int64_t>(shard.index));
  g.set_attribute("shard_count", static_cast<int64_t>(shard.count));
  g.set_attribute("shard_run", run);
}

ShardPart read_shard_part(const Group& g, const std::string& path) {
  ShardPart part{path, {}, {}};
  if (!g.has_attribute("shard_count")) return part;
  const int64_t index = g.int_attribute("shard_index"), count = g.int_attribute("shard_count");
  if (count < 1 || count > UINT32_MAX || index < 0 || index >= count)
    throw Error(location(path) + "bad shard attributes " + std::to_string(index) + "/" + std::to_string(count));
  part.shard = {static_cast<uint32_t>(index), static_cast<uint32_t>(count)};
  part.run = g.string_attribute("shard_run");
  return part;
}

Provenance read_provenance(const Group& g) {
  Provenance p;
  p.tool = g.string_attribute("tool");
  p.version = g.string_attribute("version");
  p.command_line = g.string_attribute("command_line");
  std::vector<int64_t> sizes = g.int_array_attribute("input_sizes");
  std::istringstream names(g.string_attribute("input_names"));
  std::string name;
  for (size_t i = 0; std::getline(names, name); ++i) p.inputs.push_back({name, i < sizes.size() ? sizes[i] : -1});
  p.seed = static_cast<uint64_t>(g.int_attribute("seed"));
  p.created = g.string_attribute("created");
  return p;
}

}  // namespace kglm::h5
