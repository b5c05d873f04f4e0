#include "train/tensorboard_events.hpp"

#include <crcutil/generic_crc.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "core/output_target.hpp"

namespace kglm::train {

namespace {

// The protocol buffers wire format (https://protobuf.dev/programming-guides/encoding/), by hand for
// the few fields of tensorflow/core/util/event.proto and framework/summary.proto used here: a key is
// (field << 3) | wire type; 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32; little-endian.
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

template <typename T>
void put_fixed(std::string& out, T v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));  // x86-64 and aarch64: already little-endian
  out.append(bytes, sizeof(T));
}

void put_key(std::string& out, uint32_t field, uint32_t wire_type) { put_varint(out, (field << 3) | wire_type); }

void put_bytes(std::string& out, uint32_t field, std::string_view bytes) {
  put_key(out, field, 2);
  put_varint(out, bytes.size());
  out.append(bytes);
}

// Event: wall_time = 1 (double), step = 2 (int64); then one of file_version = 3, summary = 5,
// session_log = 7.
std::string event_head(double wall_time, int64_t step) {
  std::string e;
  put_key(e, 1, 1);
  put_fixed(e, wall_time);
  if (step != 0) {
    put_key(e, 2, 0);
    put_varint(e, static_cast<uint64_t>(step));
  }
  return e;
}

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// CRC-32C (Castagnoli, reflected polynomial 0x82f63b78) from Google's crcutil.
const crcutil::GenericCrc<crcutil::uint64, crcutil::uint64, crcutil::uint64, 4>& crc32c_table() {
  static const crcutil::GenericCrc<crcutil::uint64, crcutil::uint64, crcutil::uint64, 4> table(0x82f63b78, 32, true);
  return table;
}

void flatten(simdjson::dom::element value, std::string& tag, int64_t step, double wall_time,
             TensorBoardEvents& events) {
  switch (value.type()) {
    case simdjson::dom::element_type::INT64:
      events.write_scalar(tag, step, static_cast<float>(int64_t(value)), wall_time);
      break;
    case simdjson::dom::element_type::UINT64:
      events.write_scalar(tag, step, static_cast<float>(uint64_t(value)), wall_time);
      break;
    case simdjson::dom::element_type::DOUBLE:
      events.write_scalar(tag, step, static_cast<float>(double(value)), wall_time);
      break;
    case simdjson::dom::element_type::BOOL:  // "skipped": true (a step the loss scaler skipped) as 1
      events.write_scalar(tag, step, bool(value) ? 1.0f : 0.0f, wall_time);
      break;
    case simdjson::dom::element_type::OBJECT:
      for (auto field : simdjson::dom::object(value)) {
        const size_t keep = tag.size();
        if (!tag.empty()) tag += '/';
        tag += field.key;
        flatten(field.value, tag, step, wall_time, events);
        tag.resize(keep);
      }
      break;
    default:  // null (a term a step did not have), strings, arrays
      break;
  }
}

bool is_stream(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
}

}  // namespace

uint32_t masked_crc32c(const void* data, size_t bytes) {
  const auto crc = static_cast<uint32_t>(crc32c_table().CrcDefault(data, bytes, 0));
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;  // TFRecord's mask (tensorflow/core/lib/hash/crc32c.h)
}

std::string tfrecord_frame(const std::string& data) {
  std::string out;
  out.reserve(data.size() + 16);
  put_fixed(out, static_cast<uint64_t>(data.size()));
  put_fixed(out, masked_crc32c(out.data(), 8));
  out += data;
  put_fixed(out, masked_crc32c(data.data(), data.size()));
  return out;
}

std::string event_file_version(double wall_time) {
  std::string e = event_head(wall_time, 0);
  put_bytes(e, 3, "brain.Event:2");
  return e;
}

std::string event_scalar(std::string_view tag, int64_t step, float value, double wall_time) {
  // Summary { repeated Value value = 1 }; Value { string tag = 1; float simple_value = 2 }.
  std::string v;
  put_bytes(v, 1, tag);
  put_key(v, 2, 5);
  put_fixed(v, value);
  std::string summary;
  put_bytes(summary, 1, v);
  std::string e = event_head(wall_time, step);
  put_bytes(e, 5, summary);
  return e;
}

std::string event_session_start(int64_t step, double wall_time) {
  std::string log;  // SessionLog { SessionStatus status = 1 }, START = 1
  put_key(log, 1, 0);
  put_varint(log, 1);
  std::string e = event_head(wall_time, step);
  put_bytes(e, 7, log);
  return e;
}

std::string tensorboard_subdir(const std::string& dir, const std::string& name) {
  if (dir.empty() || is_stream(dir)) return dir;
  return (std::filesystem::path(dir) / name).string();
}

namespace {

// TensorBoard reads a directory's event files in the order of their names, whose first field is the
// creation time in seconds. A resumed run's file must come after the files before it, also when it
// starts within the same second (then host and pid, compared as text, would decide: 10000 before
// 9999): its time is the latest in the directory plus one where that is not in the past.
int64_t event_file_seconds(const std::string& dir) {
  auto seconds = static_cast<int64_t>(now_seconds());
  const std::string prefix = "events.out.tfevents.";
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    int64_t earlier = 0;
    const char* first = name.data() + prefix.size();
    const auto [last, error] = std::from_chars(first, name.data() + name.size(), earlier);
    if (error == std::errc() && last != first && earlier >= seconds) seconds = earlier + 1;
  }
  return seconds;
}

}  // namespace

TensorBoardEvents::TensorBoardEvents(const std::string& dir, int64_t resumed_at) {
  if (is_stream(dir)) {
    path_ = dir;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!std::filesystem::is_directory(dir))
      throw Error(dir + ": --tensorboard wants a directory (or a FIFO or device), and this is " +
                  describe_file_type(dir));
    char host[256] = "localhost";
    ::gethostname(host, sizeof host - 1);
    path_ = (std::filesystem::path(dir) / ("events.out.tfevents." + std::to_string(event_file_seconds(dir)) + "." +
                                           host + "." + std::to_string(::getpid())))
                .string();
  }
  // Appending, never truncating: a device or FIFO is written in place, and a directory's file is new.
  file_ = std::fopen(path_.c_str(), "ab");
  if (!file_) throw Error(path_ + ": cannot open the TensorBoard event file: " + std::strerror(errno));
  const double t = now_seconds();
  write_record(event_file_version(t));
  if (resumed_at >= 0) write_record(event_session_start(resumed_at + 1, t));
  std::fflush(file_);
}

TensorBoardEvents::~TensorBoardEvents() {
  if (file_) std::fclose(file_);
}

void TensorBoardEvents::write_record(const std::string& payload) {
  const std::string framed = tfrecord_frame(payload);
  if (std::fwrite(framed.data(), 1, framed.size(), file_) != framed.size())
    throw Error(path_ + ": cannot write the TensorBoard event file: " + std::strerror(errno));
}

void TensorBoardEvents::write_scalar(std::string_view tag, int64_t step, float value, double wall_time) {
  write_record(event_scalar(tag, step, value, wall_time));
}

void TensorBoardEvents::write_metrics_line(std::string_view json_line) {
  // One parser for every line (its buffers are reused): a line a step, on the training loop's thread.
  static thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json_line.data(), json_line.size()).get(root) != simdjson::SUCCESS || !root.is_object()) return;
  int64_t step = 0;
  if (root["step"].get(step) != simdjson::SUCCESS) return;
  const double t = now_seconds();
  std::string tag;
  for (auto field : simdjson::dom::object(root)) {
    if (field.key == "step") continue;
    tag.assign(field.key);
    flatten(field.value, tag, step, t, *this);
  }
  if (std::fflush(file_) != 0)
    throw Error(path_ + ": cannot write the TensorBoard event file: " + std::strerror(errno));
}

}  // namespace kglm::train
