#include "nn/torch_checkpoint.hpp"

#include <zip.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "core/error.hpp"

namespace kglm::nn {

namespace fs = std::filesystem;

namespace {

// --- the zip archive (libzip) ---------------------------------------------------------------------

class Archive {
 public:
  Archive(zip_t* zip, std::string source, uint64_t archive_bytes)
      : zip_(zip, zip_discard), source_(std::move(source)), archive_bytes_(archive_bytes) {}

  // The entry's bytes; nullopt when absent.
  std::optional<std::vector<std::byte>> read(const std::string& name) const {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat(zip_.get(), name.c_str(), 0, &st) != 0) return std::nullopt;
    // Sizes come from the archive's directory: a damaged one must not make us allocate gigabytes.
    // Deflate expands at most 1032-fold; torch.save stores its entries uncompressed.
    const bool sized = (st.valid & ZIP_STAT_SIZE) && (st.valid & ZIP_STAT_COMP_SIZE);
    if (!sized || st.comp_size > archive_bytes_ || st.size / 1032 > st.comp_size)
      fail("the entry " + name + " claims a size its archive cannot hold: a damaged zip archive");
    std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file(zip_fopen(zip_.get(), name.c_str(), 0), zip_fclose);
    if (!file) fail("cannot open the entry " + name + ": " + zip_strerror(zip_.get()));
    std::vector<std::byte> bytes(static_cast<size_t>(st.size));
    const zip_int64_t n = zip_fread(file.get(), bytes.data(), bytes.size());
    if (n < 0 || static_cast<zip_uint64_t>(n) != st.size) fail("cannot read the entry " + name);
    return bytes;
  }

  // The folder torch.save put everything in ("archive/", the file's stem, …): where data.pkl is.
  std::string prefix() const {
    const zip_int64_t n = zip_get_num_entries(zip_.get(), 0);
    for (zip_int64_t i = 0; i < n; ++i) {
      const char* name = zip_get_name(zip_.get(), static_cast<zip_uint64_t>(i), 0);
      if (name == nullptr) continue;
      const std::string_view s(name);
      if (s == "data.pkl") return "";
      if (s.ends_with("/data.pkl") && s.find('/') == s.size() - 9) return std::string(s.substr(0, s.size() - 8));
    }
    fail("a zip archive without data.pkl: not a torch.save checkpoint");
  }

  [[noreturn]] void fail(const std::string& what) const { throw Error(source_ + ": " + what); }

 private:
  std::unique_ptr<zip_t, void (*)(zip_t*)> zip_;
  std::string source_;
  uint64_t archive_bytes_;
};

// --- the pickle ------------------------------------------------------------------------------------

struct Value;
using ValuePtr = std::shared_ptr<Value>;

struct StorageRef {
  std::string key;
  DType dtype = DType::F32;
};

struct TensorRef {
  StorageRef storage;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
};

struct Value {
  enum class Kind { none, boolean, integer, real, string, list, tuple, dict, global, storage, tensor };
  Kind kind = Kind::none;
  int64_t integer = 0;
  double real = 0;
  std::string text;             // string; global: "module.name"
  std::vector<ValuePtr> items;  // list, tuple; dict: key, value, key, value, …
  StorageRef storage;
  TensorRef tensor;
};

ValuePtr make(Value::Kind kind) {
  auto v = std::make_shared<Value>();
  v->kind = kind;
  return v;
}

std::optional<DType> storage_dtype(const std::string& type) {
  static const std::map<std::string, DType, std::less<>> types = {
      {"torch.FloatStorage", DType::F32},     {"torch.DoubleStorage", DType::F64}, {"torch.HalfStorage", DType::F16},
      {"torch.BFloat16Storage", DType::BF16}, {"torch.LongStorage", DType::I64},   {"torch.IntStorage", DType::I32},
      {"torch.ByteStorage", DType::U8},       {"torch.BoolStorage", DType::U8}};
  auto it = types.find(type);
  if (it == types.end()) return std::nullopt;
  return it->second;
}

// The interpreter of the pickle subset torch.save writes for a state dict. Written by hand after
// Python's pickletools documentation of the opcodes; nothing but the callables named in call() runs.
class Unpickler {
 public:
  Unpickler(std::span<const std::byte> bytes, std::string where) : in_(bytes), where_(std::move(where)) {}

  ValuePtr run() {
    for (;;) {
      const uint8_t op = byte();
      switch (op) {
        case 0x80:  // PROTO
          if (byte() > 5) fail("pickle protocol newer than 5");
          break;
        case 0x95:  // FRAME
          take(8);
          break;
        case '}':
          push(make(Value::Kind::dict));
          break;
        case ']':
          push(make(Value::Kind::list));
          break;
        case ')':
          push(make(Value::Kind::tuple));
          break;
        case '(':
          marks_.push_back(stack_.size());
          break;
        case 'N':
          push(make(Value::Kind::none));
          break;
        case 0x88:
        case 0x89:  // NEWTRUE, NEWFALSE
          push(boolean(op == 0x88));
          break;
        case 'J':
          push(integer(static_cast<int32_t>(little(4))));
          break;
        case 'K':
          push(integer(static_cast<int64_t>(little(1))));
          break;
        case 'M':
          push(integer(static_cast<int64_t>(little(2))));
          break;
        case 0x8a:  // LONG1: n bytes, two's complement
        {
          const size_t n = byte();
          if (n > 8) fail("an integer wider than 64 bits");
          uint64_t v = n ? little(n) : 0;
          if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
          push(integer(static_cast<int64_t>(v)));
          break;
        }
        case 'G':  // BINFLOAT, big-endian
        {
          uint64_t bits = 0;
          for (std::byte b : take(8)) bits = bits << 8 | static_cast<uint8_t>(b);
          auto v = make(Value::Kind::real);
          v->real = std::bit_cast<double>(bits);
          push(v);
          break;
        }
        case 'X':
        case 'T':
        case 'B':
          push(string(little(4)));
          break;
        case 0x8c:
        case 'U':
        case 'C':
          push(string(byte()));
          break;
        case 0x8d:
        case 0x8e:
          push(string(little(8)));
          break;
        case 'c':  // GLOBAL module\nname\n
        {
          const std::string module = line(), name = line();
          push(global(module + "." + name));
          break;
        }
        case 0x93:  // STACK_GLOBAL
        {
          const ValuePtr name = pop(), module = pop();
          if (module->kind != Value::Kind::string || name->kind != Value::Kind::string)
            fail("STACK_GLOBAL without strings");
          push(global(module->text + "." + name->text));
          break;
        }
        case 'Q':  // BINPERSID
          push(persistent(pop()));
          break;
        case 't':
          push(tuple(pop_mark()));
          break;
        case 0x85:
        case 0x86:
        case 0x87: {
          std::vector<ValuePtr> items(static_cast<size_t>(op - 0x84));
          for (size_t i = items.size(); i > 0; --i) items[i - 1] = pop();
          push(tuple(std::move(items)));
          break;
        }
        case 'R':
        case 0x81:  // REDUCE, NEWOBJ: callable(*args)
        {
          const ValuePtr args = pop(), callable = pop();
          push(call(callable, args));
          break;
        }
        case 'b':  // BUILD: an object's state (OrderedDict's _metadata): not needed
          pop();
          top();
          break;
        case 's': {
          const ValuePtr value = pop(), key = pop();
          add_items(top(), {key, value}, Value::Kind::dict);
          break;
        }
        case 'u':
        case 'e': {
          std::vector<ValuePtr> items = pop_mark();
          add_items(top(), std::move(items), op == 'u' ? Value::Kind::dict : Value::Kind::list);
          break;
        }
        case 'a': {
          const ValuePtr value = pop();
          add_items(top(), {value}, Value::Kind::list);
          break;
        }
        case 'q':
          memo_[little(1)] = top();
          break;
        case 'r':
          memo_[little(4)] = top();
          break;
        case 0x94:  // MEMOIZE
          memo_[memo_.size()] = top();
          break;
        case 'h':
          push(recall(little(1)));
          break;
        case 'j':
          push(recall(little(4)));
          break;
        case '.':  // STOP
          if (stack_.size() != 1) fail("the pickle ends with " + std::to_string(stack_.size()) + " values");
          return stack_.back();
        default:
          fail("pickle opcode 0x" + hex(op) + " is not one torch.save writes for a state dict");
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(where_ + ": data.pkl at byte " + std::to_string(at_) + ": " + what);
  }
  static std::string hex(uint8_t b) {
    const char* digits = "0123456789abcdef";
    return {digits[b >> 4], digits[b & 15]};
  }
  std::span<const std::byte> take(uint64_t n) {
    if (n > in_.size() - at_) fail("the pickle ends early");
    const auto s = in_.subspan(at_, static_cast<size_t>(n));
    at_ += static_cast<size_t>(n);
    return s;
  }
  uint8_t byte() { return static_cast<uint8_t>(take(1)[0]); }
  uint64_t little(size_t n) {
    uint64_t v = 0;
    const auto s = take(n);
    for (size_t i = n; i > 0; --i) v = v << 8 | static_cast<uint8_t>(s[i - 1]);
    return v;
  }
  std::string line() {
    std::string s;
    for (char c; (c = static_cast<char>(byte())) != '\n';) s += c;
    return s;
  }
  ValuePtr string(uint64_t n) {
    const auto s = take(n);
    auto v = make(Value::Kind::string);
    v->text.assign(reinterpret_cast<const char*>(s.data()), s.size());
    return v;
  }
  static ValuePtr integer(int64_t i) {
    auto v = make(Value::Kind::integer);
    v->integer = i;
    return v;
  }
  static ValuePtr boolean(bool b) {
    auto v = make(Value::Kind::boolean);
    v->integer = b;
    return v;
  }
  static ValuePtr global(std::string name) {
    auto v = make(Value::Kind::global);
    v->text = std::move(name);
    return v;
  }
  static ValuePtr tuple(std::vector<ValuePtr> items) {
    auto v = make(Value::Kind::tuple);
    v->items = std::move(items);
    return v;
  }
  void push(ValuePtr v) {
    if (stack_.size() > (1u << 20)) fail("the pickle's stack grows past a million values");
    stack_.push_back(std::move(v));
  }
  ValuePtr pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail("the pickle pops an empty stack");
    ValuePtr v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  ValuePtr top() {
    if (stack_.empty()) fail("the pickle reads an empty stack");
    return stack_.back();
  }
  std::vector<ValuePtr> pop_mark() {
    if (marks_.empty()) fail("the pickle closes a mark it never opened");
    std::vector<ValuePtr> items(stack_.begin() + static_cast<ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  ValuePtr recall(uint64_t i) {
    auto it = memo_.find(i);
    if (it == memo_.end()) fail("the pickle recalls memo " + std::to_string(i) + ", never stored");
    return it->second;
  }
  void add_items(const ValuePtr& target, std::vector<ValuePtr> items, Value::Kind kind) {
    if (target->kind != kind)
      fail(kind == Value::Kind::dict ? "items set on something not a dict" : "items appended to something not a list");
    if (kind == Value::Kind::dict && items.size() % 2) fail("a dict item without its value");
    for (ValuePtr& v : items) target->items.push_back(std::move(v));
  }

  // ('storage', torch.FloatStorage, key, location, numel)
  ValuePtr persistent(const ValuePtr& pid) {
    if (pid->kind != Value::Kind::tuple || pid->items.size() < 3 || pid->items[0]->kind != Value::Kind::string ||
        pid->items[0]->text != "storage" || pid->items[1]->kind != Value::Kind::global)
      fail("a persistent id that is not a torch storage");
    const std::optional<DType> dtype = storage_dtype(pid->items[1]->text);
    if (!dtype) fail("storage type " + pid->items[1]->text + " has no kglm dtype");
    const ValuePtr& key = pid->items[2];
    auto v = make(Value::Kind::storage);
    v->storage.dtype = *dtype;
    if (key->kind == Value::Kind::string)
      v->storage.key = key->text;
    else if (key->kind == Value::Kind::integer)
      v->storage.key = std::to_string(key->integer);
    else
      fail("a storage key that is neither a string nor an integer");
    return v;
  }

  std::vector<int64_t> integers(const ValuePtr& v, const char* what) {
    if (v->kind != Value::Kind::tuple && v->kind != Value::Kind::list) fail(std::string(what) + " is not a tuple");
    std::vector<int64_t> out;
    for (const ValuePtr& i : v->items) {
      if (i->kind != Value::Kind::integer) fail(std::string(what) + " holds something not an integer");
      out.push_back(i->integer);
    }
    return out;
  }

  ValuePtr call(const ValuePtr& callable, const ValuePtr& args) {
    if (callable->kind != Value::Kind::global) fail("a call of something not a global");
    if (args->kind != Value::Kind::tuple) fail("a call without an argument tuple");
    const std::string& f = callable->text;
    const std::vector<ValuePtr>& a = args->items;
    if (f == "collections.OrderedDict" && a.empty()) return make(Value::Kind::dict);
    if ((f == "torch._utils._rebuild_tensor_v2" || f == "torch._utils._rebuild_tensor") && a.size() >= 4) {
      if (a[0]->kind != Value::Kind::storage) fail(f + " without a storage");
      if (a[1]->kind != Value::Kind::integer) fail(f + " without a storage offset");
      auto v = make(Value::Kind::tensor);
      v->tensor = {a[0]->storage, a[1]->integer, integers(a[2], "a tensor's size"),
                   integers(a[3], "a tensor's stride")};
      if (v->tensor.sizes.size() != v->tensor.strides.size()) fail("a tensor's size and stride differ in length");
      return v;
    }
    if ((f == "torch._utils._rebuild_parameter" || f == "torch._utils._rebuild_parameter_with_state") && !a.empty() &&
        a[0]->kind == Value::Kind::tensor)
      return a[0];
    fail("the pickle calls " + f + ", which a state dict of tensors does not need: refused");
  }

  std::span<const std::byte> in_;
  size_t at_ = 0;
  std::string where_;
  std::vector<ValuePtr> stack_;
  std::vector<size_t> marks_;
  std::map<uint64_t, ValuePtr> memo_;
};

// A contiguous copy of the tensor's elements from its storage's bytes.
Tensor gather(const TensorRef& t, std::span<const std::byte> storage, const std::string& name, const Archive& archive) {
  const size_t element = dtype_size(t.storage.dtype);
  const int64_t available = static_cast<int64_t>(storage.size() / element);
  int64_t numel = 1, last = t.offset;
  for (size_t d = 0; d < t.sizes.size(); ++d) {
    if (t.sizes[d] < 0 || t.strides[d] < 0) archive.fail(name + ": a negative size or stride");
    if (t.sizes[d] == 0)
      numel = 0;
    else if (numel > 0 && t.sizes[d] > (int64_t{1} << 40) / numel)
      archive.fail(name + ": too many elements");
    else
      numel *= t.sizes[d];
    if (t.sizes[d] > 0) last += (t.sizes[d] - 1) * t.strides[d];
  }
  if (t.offset < 0 || (numel > 0 && last >= available))
    archive.fail(name + ": its elements lie outside its storage of " + std::to_string(available));
  Tensor out = Tensor::empty(Shape(t.sizes.begin(), t.sizes.end()), t.storage.dtype);
  auto* dst = static_cast<std::byte*>(out.raw());
  std::vector<int64_t> index(t.sizes.size(), 0);
  for (int64_t i = 0; i < numel; ++i) {
    int64_t src = t.offset;
    for (size_t d = 0; d < index.size(); ++d) src += index[d] * t.strides[d];
    std::memcpy(dst + static_cast<size_t>(i) * element, storage.data() + static_cast<size_t>(src) * element, element);
    for (size_t d = index.size(); d > 0; --d) {
      if (++index[d - 1] < t.sizes[d - 1]) break;
      index[d - 1] = 0;
    }
  }
  return out;
}

std::vector<std::pair<std::string, Tensor>> read_archive(const Archive& archive, const std::string& source) {
  const std::string prefix = archive.prefix();
  if (auto order = archive.read(prefix + "byteorder")) {
    const std::string_view s(reinterpret_cast<const char*>(order->data()), order->size());
    if (s != "little") archive.fail("a big-endian checkpoint (byteorder \"" + std::string(s) + "\")");
  }
  const std::vector<std::byte> pickle = *archive.read(prefix + "data.pkl");
  const ValuePtr root = Unpickler(pickle, source).run();
  if (root->kind != Value::Kind::dict) archive.fail("data.pkl holds no dict of tensors: not a state dict");
  std::map<std::string, std::vector<std::byte>> storages;
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (size_t i = 0; i + 1 < root->items.size(); i += 2) {
    const Value &key = *root->items[i], &value = *root->items[i + 1];
    if (key.kind != Value::Kind::string) archive.fail("a state dict key that is not a string");
    if (value.kind != Value::Kind::tensor) continue;  // e.g. a buffer kept as a number
    auto it = storages.find(value.tensor.storage.key);
    if (it == storages.end()) {
      auto bytes = archive.read(prefix + "data/" + value.tensor.storage.key);
      if (!bytes) archive.fail(key.text + ": its storage data/" + value.tensor.storage.key + " is missing");
      it = storages.emplace(value.tensor.storage.key, std::move(*bytes)).first;
    }
    tensors.emplace_back(key.text, gather(value.tensor, it->second, key.text, archive));
  }
  if (tensors.empty()) archive.fail("the state dict holds no tensor");
  return tensors;
}

// torch.save before 1.6: a pickle stream starting with the magic number 0x1950a86a20f9469cfc6c.
bool legacy_torch_save(std::span<const std::byte> head) {
  return head.size() >= 2 && static_cast<uint8_t>(head[0]) == 0x80 && static_cast<uint8_t>(head[1]) <= 5;
}

[[noreturn]] void refuse_not_zip(std::span<const std::byte> head, const std::string& source) {
  if (legacy_torch_save(head))
    throw Error(source +
                ": the torch.save format of PyTorch < 1.6 (a bare pickle); re-save it with a newer "
                "torch or convert it to safetensors");
  throw Error(source + ": not a torch.save checkpoint (a zip archive with data.pkl)");
}

}  // namespace

std::vector<std::pair<std::string, Tensor>> read_torch_state_dict(std::span<const std::byte> bytes,
                                                                  const std::string& source) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (src == nullptr) throw Error(source + ": " + zip_error_strerror(&error));
  zip_t* zip = zip_open_from_source(src, ZIP_RDONLY, &error);
  if (zip == nullptr) {
    zip_source_free(src);
    zip_error_fini(&error);
    refuse_not_zip(bytes.first(std::min<size_t>(bytes.size(), 16)), source);
  }
  return read_archive(Archive(zip, source, bytes.size()), source);
}

std::vector<std::pair<std::string, Tensor>> read_torch_state_dict(const fs::path& path) {
  const std::string source = path.string();
  int code = 0;
  zip_t* zip = zip_open(source.c_str(), ZIP_RDONLY, &code);
  if (zip == nullptr) {
    if (!fs::exists(path)) throw Error(source + ": no such file");
    std::vector<std::byte> head(16);
    std::FILE* f = std::fopen(source.c_str(), "rb");
    if (f == nullptr) throw Error(source + ": cannot open: " + std::strerror(errno));
    head.resize(std::fread(head.data(), 1, head.size(), f));
    std::fclose(f);
    refuse_not_zip(head, source);
  }
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  return read_archive(Archive(zip, source, ec ? UINT64_MAX : size), source);
}

SafetensorsFile open_model_weights(const fs::path& dir) {
  if (fs::exists(dir / "model.safetensors")) return SafetensorsFile::open(dir / "model.safetensors");
  const fs::path bin = dir / "pytorch_model.bin";
  if (fs::exists(bin)) return SafetensorsFile::from_tensors(read_torch_state_dict(bin), bin.string());
  throw Error(dir.string() + ": no model.safetensors or pytorch_model.bin");
}

}  // namespace kglm::nn
