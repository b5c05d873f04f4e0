#include "core/line_shard.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace kglm {

namespace {

// A plain file read at offsets (pread), for the few lines around a cut.
class PlainFile {
 public:
  PlainFile(const std::string& path, uint64_t size) : path_(path), size_(size) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(location(path) + std::strerror(errno));
  }
  ~PlainFile() { ::close(fd_); }
  PlainFile(const PlainFile&) = delete;
  PlainFile& operator=(const PlainFile&) = delete;

  // The first line start at or after `at` (the size when none).
  uint64_t line_start_from(uint64_t at) const {
    if (at == 0) return 0;
    for (uint64_t pos = at - 1; pos < size_;) {
      const size_t got = read(pos);
      const char* nl = static_cast<const char*>(std::memchr(buffer_.data(), '\n', got));
      if (nl) return pos + static_cast<uint64_t>(nl - buffer_.data()) + 1;
      pos += got;
    }
    return size_;
  }
  // The start of the line that ends just before `at` (a line start > 0).
  uint64_t previous_line_start(uint64_t at) const {
    uint64_t end = at - 1;  // the '\n' of that line
    while (end > 0) {
      const uint64_t pos = end > kChunk ? end - kChunk : 0;
      const size_t got = read(pos, static_cast<size_t>(end - pos));
      for (size_t i = got; i > 0; --i)
        if (buffer_[i - 1] == '\n') return pos + i;
      end = pos;
    }
    return 0;
  }
  // The line [at, next line start), without its '\n'.
  std::string line_at(uint64_t at) const {
    const uint64_t next = line_start_from(at + 1);
    std::string line(static_cast<size_t>(next - at), '\0');
    read_exactly(at, line.data(), line.size());
    if (!line.empty() && line.back() == '\n') line.pop_back();
    return line;
  }

 private:
  static constexpr size_t kChunk = 1 << 16;

  size_t read(uint64_t pos, size_t want = kChunk) const {
    buffer_.resize(kChunk);
    want = static_cast<size_t>(std::min<uint64_t>({want, buffer_.size(), size_ - pos}));
    read_exactly(pos, buffer_.data(), want);
    return want;
  }
  void read_exactly(uint64_t pos, char* out, size_t n) const {
    while (n > 0) {
      const ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(pos));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0)
        throw Error(location(path_) + "read error at byte " + std::to_string(pos) + ": " +
                    (got == 0 ? "the file shrank" : std::strerror(errno)));
      out += got;
      pos += static_cast<uint64_t>(got);
      n -= static_cast<size_t>(got);
    }
  }

  std::string path_;
  uint64_t size_;
  int fd_ = -1;
  mutable std::vector<char> buffer_;
};

// The line start where a part begins that is cut at byte `at` of the file: the first line start at
// or after it, moved past the lines that continue the group of the line before.
uint64_t cut(const PlainFile& file, uint64_t size, uint64_t at, const SameGroup& same_group) {
  uint64_t start = file.line_start_from(at);
  if (!same_group || start == 0) return start;
  std::string previous = file.line_at(file.previous_line_start(start));
  while (start < size) {
    std::string line = file.line_at(start);
    if (!same_group(previous, line)) break;
    start = file.line_start_from(start + 1);
    previous = std::move(line);
  }
  return start;
}

}  // namespace

std::vector<LineShardRange> line_shard_ranges(const std::vector<std::string>& inputs, const Shard& shard,
                                              const SameGroup& same_group) {
  std::vector<uint64_t> sizes;
  std::vector<bool> plain;
  uint64_t total = 0;
  for (const std::string& path : inputs) {
    std::error_code ec;
    if (path == "-" || !std::filesystem::is_regular_file(path, ec))
      throw UsageError("--shard splits files by their bytes; " + (path == "-" ? std::string("stdin") : path) +
                       " is not a regular file");
    InputStream in(path);
    plain.push_back(in.compression() == Compression::plain);
    sizes.push_back(in.raw_size());
    total += in.raw_size();
  }
  const uint64_t from = shard.split_point(total, shard.index), to = shard.split_point(total, shard.index + 1);
  std::vector<LineShardRange> ranges;
  uint64_t offset = 0;  // of the file in the inputs taken end to end
  for (size_t k = 0; k < inputs.size(); ++k) {
    const uint64_t size = sizes[k];
    auto local = [&](uint64_t at) { return std::clamp(at, offset, offset + size) - offset; };
    LineShardRange range{inputs[k], 0, 0};
    if (!plain[k]) {
      // A compressed file cannot be entered at a byte: it goes whole to the part its first byte is in.
      if (offset >= from && offset < to) range.end = size;
    } else if (size > 0) {
      PlainFile file(inputs[k], size);
      range.begin = cut(file, size, local(from), same_group);
      range.end = std::max(range.begin, cut(file, size, local(to), same_group));
    }
    ranges.push_back(std::move(range));
    offset += size;
  }
  return ranges;
}

void restrict_to_line_range(InputStream& in, const LineShardRange& range) {
  if (range.begin == 0 && range.end == in.raw_size()) return;  // the whole file (any compressed one)
  in.read_range(range.begin, range.end);
  if (range.begin > 0) in.rename(in.name() + " (from byte " + std::to_string(range.begin) + ")");
}

}  // namespace kglm
