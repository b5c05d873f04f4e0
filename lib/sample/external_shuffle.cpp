#include "sample/external_shuffle.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "core/temporaries.hpp"

namespace kglm::sample {

namespace {

constexpr uint32_t kShuffleStream = 0x53485546;  // "SHUF"
constexpr size_t kPerRecordOverhead = 16;        // sizeof(Entry)
constexpr size_t kWriteChunk = 1 << 20;
constexpr size_t kMinRunBuffer = 64 << 10;
constexpr size_t kMaxRunBuffer = 4 << 20;
// Each run holds a file descriptor until the merge; past this the budget is far too small.
constexpr size_t kMaxRuns = 4000;

std::string errno_text() { return std::strerror(errno); }

void write_all(int fd, const std::string& data, const std::string& what) {
  for (size_t done = 0; done < data.size();) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("cannot write the shuffle's temporary run in " + what + ": " + errno_text());
    done += static_cast<size_t>(n);
  }
}

// Counts per run with prefix sums, so a record can be drawn from run i with probability
// count_i / Σcount in O(log runs).
class Fenwick {
 public:
  explicit Fenwick(const std::vector<uint64_t>& counts) : tree_(counts.size() + 1, 0) {
    for (size_t i = 0; i < counts.size(); ++i) add(i, static_cast<int64_t>(counts[i]));
    for (top_ = 1; top_ * 2 <= counts.size();) top_ *= 2;
  }
  void add(size_t i, int64_t delta) {
    for (++i; i < tree_.size(); i += i & (~i + 1))
      tree_[i] = static_cast<uint64_t>(static_cast<int64_t>(tree_[i]) + delta);
  }
  // The run holding the k-th remaining record (0-based).
  size_t find(uint64_t k) const {
    size_t pos = 0;
    for (size_t step = top_; step > 0; step /= 2)
      if (pos + step < tree_.size() && tree_[pos + step] <= k) {
        pos += step;
        k -= tree_[pos];
      }
    return pos;
  }

 private:
  std::vector<uint64_t> tree_;
  size_t top_ = 1;
};

}  // namespace

// A spilled, shuffled run: an unlinked temporary file read back line by line with pread.
struct ExternalShuffle::FileRun {
  int fd = -1;
  uint64_t records = 0;
  uint64_t file_offset = 0;  // next byte to read
  std::string buffer;
  size_t begin = 0, end = 0;  // unread bytes in buffer
  std::string where;

  ~FileRun() {
    if (fd >= 0) ::close(fd);
  }

  std::string_view next() {
    for (;;) {
      const char* nl = static_cast<const char*>(std::memchr(buffer.data() + begin, '\n', end - begin));
      if (nl) {
        std::string_view line(buffer.data() + begin, static_cast<size_t>(nl - (buffer.data() + begin)));
        begin = static_cast<size_t>(nl - buffer.data()) + 1;
        return line;
      }
      std::memmove(buffer.data(), buffer.data() + begin, end - begin);
      end -= begin;
      begin = 0;
      if (end == buffer.size()) buffer.resize(buffer.size() * 2);  // a record longer than the buffer
      ssize_t n = ::pread(fd, buffer.data() + end, buffer.size() - end, static_cast<off_t>(file_offset));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw Error("cannot read back the shuffle's temporary run in " + where + ": " +
                    (n < 0 ? errno_text() : "truncated"));
      end += static_cast<size_t>(n);
      file_offset += static_cast<uint64_t>(n);
    }
  }
};

ExternalShuffle::ExternalShuffle(std::string tmp_dir, size_t memory_bytes, uint64_t seed, uint64_t stream_key)
    : tmp_dir_(std::move(tmp_dir)), memory_(memory_bytes), rng_(seed, stream_key, kShuffleStream) {
  if (memory_ == 0) throw UsageError("the shuffle needs some memory");
}

ExternalShuffle::~ExternalShuffle() = default;

std::string_view ExternalShuffle::buffered(size_t i) const {
  return {arena_.data() + entries_[i].start, entries_[i].length};
}

void ExternalShuffle::add(std::string_view record) {
  size_t needed = arena_.size() + record.size() + kPerRecordOverhead * (entries_.size() + 1);
  if (needed > memory_ && !entries_.empty()) spill();
  // Reserved once: untouched pages cost no memory, and neither the records nor their entries ever
  // reallocate (which would double what they hold) while under the budget.
  if (arena_.capacity() < memory_ && arena_.empty()) {
    arena_.reserve(memory_);
    entries_.reserve(memory_ / kPerRecordOverhead);
  }
  entries_.push_back({arena_.size(), record.size()});
  arena_.append(record);
  ++records_;
}

void ExternalShuffle::shuffle_buffer() {
  for (size_t i = entries_.size(); i > 1; --i) std::swap(entries_[i - 1], entries_[rng_.below(i)]);
}

void ExternalShuffle::clear_buffer() {
  arena_.clear();
  entries_.clear();
}

void ExternalShuffle::spill() {
  if (runs_.size() >= kMaxRuns)
    throw Error("the shuffle would need more than " + std::to_string(kMaxRuns) +
                " temporary runs: give it more memory (--memory-mb)");
  shuffle_buffer();
  const int fd = open_anonymous_file(tmp_dir_);  // O_TMPFILE: no file outlives the process
  auto run = std::make_unique<FileRun>();
  run->fd = fd;
  run->records = entries_.size();
  run->where = tmp_dir_;
  std::string chunk;
  chunk.reserve(kWriteChunk + 4096);
  for (size_t i = 0; i < entries_.size(); ++i) {
    chunk.append(buffered(i));
    chunk.push_back('\n');
    if (chunk.size() >= kWriteChunk) write_all(fd, chunk, tmp_dir_), chunk.clear();
  }
  write_all(fd, chunk, tmp_dir_);
  runs_.push_back(std::move(run));
  ++runs_spilled_;
  clear_buffer();
}

void ExternalShuffle::finish(OutputStream& out) {
  shuffle_buffer();
  std::string chunk;
  chunk.reserve(kWriteChunk + 4096);
  auto emit = [&](std::string_view record) {
    chunk.append(record);
    chunk.push_back('\n');
    if (chunk.size() >= kWriteChunk) out.write(chunk), chunk.clear();
  };
  if (runs_.empty()) {
    for (size_t i = 0; i < entries_.size(); ++i) emit(buffered(i));
  } else {
    // The shuffled buffer is the last run and stays in memory; file runs share a small read budget.
    size_t run_buffer = std::clamp(memory_ / 8 / runs_.size(), kMinRunBuffer, kMaxRunBuffer);
    std::vector<uint64_t> counts;
    for (auto& run : runs_) {
      run->buffer.resize(run_buffer);
      counts.push_back(run->records);
    }
    counts.push_back(entries_.size());
    Fenwick remaining(counts);
    size_t memory_next = 0;
    uint64_t left = 0;
    for (uint64_t c : counts) left += c;
    for (; left > 0; --left) {
      size_t r = remaining.find(rng_.below(left));
      remaining.add(r, -1);
      emit(r < runs_.size() ? runs_[r]->next() : buffered(memory_next++));
    }
  }
  out.write(chunk);
  runs_.clear();
  clear_buffer();
  arena_.shrink_to_fit();
  records_ = 0;
}

}  // namespace kglm::sample
