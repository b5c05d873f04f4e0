#include "core/input_stream.hpp"

#include <bzlib.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <vector>

#include "core/bzip2_blocks.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/thread_pool.hpp"

namespace kglm {

const char* compression_name(Compression c) {
  static constexpr const char* kNames[] = {"plain", "gzip", "bzip2", "zstd"};  // in Compression order
  return kNames[static_cast<size_t>(c)];
}

namespace {
std::mutex truncation_mutex;
bool truncation_allowed = false;
std::vector<std::string> truncated_list;
}  // namespace

void set_allow_truncated(bool allow) {
  std::lock_guard lock(truncation_mutex);
  truncation_allowed = allow;
}

std::vector<std::string> truncated_inputs() {
  std::lock_guard lock(truncation_mutex);
  return truncated_list;
}

Compression detect_compression(const unsigned char* head, size_t n) {
  if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) return Compression::gzip;
  if (n >= 3 && head[0] == 'B' && head[1] == 'Z' && head[2] == 'h') return Compression::bzip2;
  if (n >= 4 && head[0] == 0x28 && head[1] == 0xb5 && head[2] == 0x2f && head[3] == 0xfd) {
    return Compression::zstd;
  }
  return Compression::plain;
}

// Holds the raw input buffer and the state of whichever decompressor the magic bytes chose.
struct InputStream::Decoder {
  static constexpr size_t kRawBuffer = 1 << 20;
  std::vector<unsigned char> raw = std::vector<unsigned char>(kRawBuffer);
  size_t raw_pos = 0;
  size_t raw_end = 0;
  bool raw_eof = false;
  bool stream_open = false;  // inside a gzip member / bzip2 stream / zstd frame
  z_stream gz{};
  bz_stream bz{};
  ZSTD_DCtx* zs = nullptr;

  ~Decoder() {
    if (gz.state != nullptr) inflateEnd(&gz);
    if (bz.state != nullptr) BZ2_bzDecompressEnd(&bz);
    if (zs != nullptr) ZSTD_freeDCtx(zs);
  }

  // Refills the raw buffer when empty; false at the end of the raw input.
  bool fill(InputStream& in) {
    if (raw_pos < raw_end) return true;
    if (raw_eof) return false;
    raw_pos = 0;
    raw_end = in.read_raw(raw.data(), raw.size());
    if (raw_end == 0) raw_eof = true;
    return raw_end > 0;
  }
};

InputStream::InputStream(const std::string& path) : name_(path == "-" ? "<stdin>" : path) {
  if (path == "-") {
    fd_ = STDIN_FILENO;
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(location(path) + "cannot open: " + std::strerror(errno));
    owns_fd_ = true;
#ifdef POSIX_FADV_SEQUENTIAL
    posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  }
  struct stat st {};
  if (fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) raw_size_ = static_cast<uint64_t>(st.st_size);
  if (fd_ >= 0 && S_ISDIR(st.st_mode)) throw Error(location(name_) + "is a directory");

  decoder_ = std::make_unique<Decoder>();
  Decoder& d = *decoder_;
  // Read until at least 4 bytes are there (pipes may deliver less) to see the magic.
  while (d.raw_end < 4) {
    size_t got = read_raw(d.raw.data() + d.raw_end, d.raw.size() - d.raw_end);
    if (got == 0) break;
    d.raw_end += got;
  }
  compression_ = detect_compression(d.raw.data(), d.raw_end);
  if (compression_ == Compression::gzip && inflateInit2(&d.gz, 15 + 16) != Z_OK) {
    throw Error(location(name_) + "cannot initialise zlib");
  }
  if (compression_ == Compression::bzip2 && BZ2_bzDecompressInit(&d.bz, 0, 0) != BZ_OK) {
    throw Error(location(name_) + "cannot initialise bzip2");
  }
  if (compression_ == Compression::zstd && (d.zs = ZSTD_createDCtx()) == nullptr) {
    throw Error(location(name_) + "cannot initialise zstd");
  }
}

InputStream::~InputStream() {
  parallel_.reset();  // its threads read fd_
  if (owns_fd_) ::close(fd_);
}

size_t InputStream::read_raw(unsigned char* out, size_t n) {
  if (raw_limit_ != UINT64_MAX) n = static_cast<size_t>(std::min<uint64_t>(n, raw_limit_ - raw_read_));
  if (n == 0) return 0;
  for (;;) {
    ssize_t got = ::read(fd_, out, n);
    if (got >= 0) {
      raw_read_ += static_cast<uint64_t>(got);
      return static_cast<size_t>(got);
    }
    if (errno != EINTR) throw Error(location(name_) + "read error: " + std::strerror(errno));
  }
}

void InputStream::read_range(uint64_t begin, uint64_t end) {
  if (!splittable() || begin > end || end > raw_size_)
    throw Error(location(name_) + "cannot read bytes " + std::to_string(begin) + ".." + std::to_string(end) + " alone");
  if (::lseek(fd_, static_cast<off_t>(begin), SEEK_SET) < 0)
    throw Error(location(name_) + "cannot seek: " + std::strerror(errno));
  Decoder& d = *decoder_;
  d.raw_pos = d.raw_end = 0;
  d.raw_eof = false;
  if (compression_ == Compression::bzip2 && d.stream_open) {
    BZ2_bzDecompressEnd(&d.bz);
    if (BZ2_bzDecompressInit(&d.bz, 0, 0) != BZ_OK) throw Error(location(name_) + "cannot initialise bzip2");
  }
  d.stream_open = false;
  peeked_.clear();
  peeked_pos_ = 0;
  raw_read_ = raw_begin_ = begin;
  raw_limit_ = end;
  parallel_.reset();
}

uint64_t InputStream::next_occurrence(uint64_t from, std::string_view pattern, uint64_t limit) const {
  // Scanned a megabyte at a time; consecutive windows overlap by the pattern's length - 1.
  static constexpr size_t kWindow = 1 << 20;
  std::vector<char> buffer(kWindow + pattern.size());
  limit = std::min(limit, raw_size_);
  uint64_t at = from;
  while (at < limit) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), raw_size_ - at));
    ssize_t got = ::pread(fd_, buffer.data(), want, static_cast<off_t>(at));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      throw Error(location(name_) + "read error at byte " + std::to_string(at) + ": " + std::strerror(errno));
    std::string_view window(buffer.data(), static_cast<size_t>(got));
    const size_t hit = window.find(pattern);
    if (hit != std::string_view::npos) return at + hit < limit ? at + hit : raw_size_;
    if (at + static_cast<uint64_t>(got) >= raw_size_) break;
    at += static_cast<uint64_t>(got) - std::min<size_t>(static_cast<size_t>(got) - 1, pattern.size() - 1);
  }
  return raw_size_;
}

uint64_t InputStream::next_stream_start(uint64_t from, uint64_t limit) const {
  if (compression_ != Compression::bzip2 || !owns_fd_) throw Error(location(name_) + "not a bzip2 file");
  // A stream header is 4 bytes, "BZh" and the block size digit, then the 48-bit magic of its first
  // block (pi). Inside a stream blocks are bit-aligned, so a byte-aligned magic with a header
  // before it is a stream start but by a 2^-80 chance (and a false one would fail the stream's
  // CRC: loudly). An empty stream (no block) is passed over: the next start serves as well.
  static constexpr std::string_view kBlock("\x31\x41\x59\x26\x53\x59", 6);
  limit = std::min(limit, raw_size_);
  for (uint64_t at = from + 4; at < limit;) {
    const uint64_t hit = next_occurrence(at, kBlock, limit);
    if (hit >= limit) break;
    unsigned char h[4];
    if (::pread(fd_, h, 4, static_cast<off_t>(hit - 4)) == 4 && h[0] == 'B' && h[1] == 'Z' && h[2] == 'h' &&
        h[3] >= '1' && h[3] <= '9')
      return hit - 4;
    at = hit + 1;
  }
  return raw_size_;
}

// decode_in_parallel and read_block_range: the blocks cut into segments of about 256 kB of the
// file (a few blocks), decoded by a pool and handed out in order, at most two per thread in
// flight. A cut may fall on a false block magic: the segment before then runs past it, and the
// segment after, which started there, is decoded again from where that one ended. A segment's
// decoding error reaches the reader where the segment's data would have begun, so
// --allow-truncated keeps exactly what came before it.
class InputStream::Parallel {
 public:
  // The blocks that start at bits [first, stop) of the file; mark() says at which decoded offset
  // the blocks at or after bit `mark` begin.
  Parallel(const InputStream& in, uint64_t first, uint64_t stop, uint64_t mark, unsigned threads)
      : blocks_(in.fd_, in.name_, in.raw_size_),
        next_(first),
        stop_(stop),
        mark_(mark),
        expected_(first),
        pool_(threads),
        depth_(2 * threads) {
    fill();
  }

  size_t read(char* out, size_t n) {
    for (;;) {
      if (piece_ < current_.count()) {
        const std::string_view piece = current_.piece(piece_);
        const size_t take = std::min(n, piece.size() - pos_);
        std::memcpy(out, piece.data() + pos_, take);
        pos_ += take;
        delivered_ += take;
        if (pos_ == piece.size()) {
          ++piece_;
          pos_ = 0;
        }
        return take;
      }
      if (!next_segment()) return 0;
    }
  }
  uint64_t raw_done() const { return std::min(expected_, stop_) / 8; }
  uint64_t mark_offset() const { return mark_offset_; }
  const bzip2::BlockFile& blocks() const { return blocks_; }

 private:
  static constexpr uint64_t kSegmentBits = uint64_t{8} * (256 << 10);

  struct Segment {
    uint64_t begin = 0, end = 0, next = 0;  // planned bits [begin, end); next: where the next block starts
    bzip2::Pieces data;
    std::string error;
  };

  Segment decode(uint64_t begin, uint64_t end) const {
    Segment s{begin, end, end, {}, {}};
    try {
      s.next = blocks_.decode(begin, end, s.data);
    } catch (const Error& e) {
      s.error = e.what();
    }
    return s;
  }

  bool next_segment() {
    while (!queue_.empty()) {
      Segment s = queue_.front().get();
      queue_.pop_front();
      fill();
      if (s.begin != expected_) {          // the segment before ran past a false cut
        if (s.end <= expected_) continue;  // and over this whole segment
        s = decode(expected_, s.end);
      }
      if (!s.error.empty()) throw Error(s.error);
      if (mark_offset_ == UINT64_MAX && s.begin >= mark_) mark_offset_ = delivered_;
      current_ = std::move(s.data);
      piece_ = pos_ = 0;
      expected_ = s.next;
      return true;
    }
    if (mark_offset_ == UINT64_MAX && expected_ >= mark_ && mark_ < blocks_.bits()) mark_offset_ = delivered_;
    return false;
  }

  void fill() {
    while (queue_.size() < depth_ && next_ < stop_) {
      // Past a shard's end only the line that runs over is wanted: a block at a time, no read-ahead.
      const bool past_mark = next_ >= mark_;
      if (past_mark && !queue_.empty()) break;
      uint64_t cut = blocks_.next_block(next_ + (past_mark ? 1 : kSegmentBits));
      if (next_ < mark_ && cut > mark_) cut = blocks_.next_block(mark_);  // a cut where the mark is
      cut = std::min(cut, stop_);
      queue_.push_back(pool_.submit([this, begin = next_, cut] { return decode(begin, cut); }));
      next_ = cut;
    }
  }

  bzip2::BlockFile blocks_;
  uint64_t next_, stop_, mark_, expected_;
  uint64_t delivered_ = 0, mark_offset_ = UINT64_MAX;
  std::deque<std::future<Segment>> queue_;
  bzip2::Pieces current_;
  size_t piece_ = 0, pos_ = 0;
  ThreadPool pool_;  // last: joined first, while what its tasks use is still there
  size_t depth_;
};

void InputStream::decode_in_parallel(unsigned threads) {
  if (compression_ != Compression::bzip2 || !owns_fd_ || raw_size_ == 0 || threads < 2) return;
  peeked_.clear();
  peeked_pos_ = 0;
  raw_read_ = raw_begin_;
  const uint64_t stop = std::min(raw_limit_, raw_size_) * 8;
  bzip2::BlockFile file(fd_, name_, raw_size_);
  parallel_ = std::make_unique<Parallel>(*this, file.next_block(raw_begin_ * 8), stop, stop, threads);
}

void InputStream::read_block_range(uint64_t begin, uint64_t end, unsigned threads) {
  if (compression_ != Compression::bzip2 || !splittable() || begin > end || end > raw_size_)
    throw Error(location(name_) + "cannot read the bzip2 blocks of bytes " + std::to_string(begin) + ".." +
                std::to_string(end) + " alone");
  bzip2::BlockFile file(fd_, name_, raw_size_);
  bzip2::BlockFile::Boundary b;
  b.first_block = file.next_block(0);
  if (begin > 0) b = file.boundary(begin * 8);
  parallel_.reset();
  peeked_ = b.has_last ? std::string(1, b.last) : std::string();
  peeked_pos_ = 0;
  block_range_prefix_ = peeked_.size();
  raw_begin_ = raw_read_ = b.first_block / 8;
  raw_limit_ = UINT64_MAX;
  parallel_ = std::make_unique<Parallel>(*this, b.first_block, raw_size_ * 8, end * 8, std::max(1u, threads));
}

uint64_t InputStream::block_range_end() const {
  if (!parallel_ || parallel_->mark_offset() == UINT64_MAX) return UINT64_MAX;
  return block_range_prefix_ + parallel_->mark_offset();
}

std::string_view InputStream::peek(size_t n) {
  if (peeked_pos_ > 0) {
    peeked_.erase(0, peeked_pos_);
    peeked_pos_ = 0;
  }
  while (peeked_.size() < n) {
    size_t have = peeked_.size();
    peeked_.resize(n);
    size_t got = decode(peeked_.data() + have, n - have);
    peeked_.resize(have + got);
    if (got == 0) break;
  }
  return std::string_view(peeked_).substr(0, std::min(n, peeked_.size()));
}

size_t InputStream::read(char* out, size_t n) {
  if (truncated_) return 0;
  if (peeked_pos_ < peeked_.size()) {
    size_t take = std::min(n, peeked_.size() - peeked_pos_);
    std::memcpy(out, peeked_.data() + peeked_pos_, take);
    peeked_pos_ += take;
    if (peeked_pos_ == peeked_.size()) {
      peeked_.clear();
      peeked_pos_ = 0;
    }
    if (take == n) return take;
    return take + read(out + take, n - take);
  }
  return decode(out, n);
}

size_t InputStream::decode(char* out, size_t n) {
  if (truncated_) return 0;
  try {
    return read_decoded(out, n);
  } catch (const Error& e) {
    std::lock_guard lock(truncation_mutex);
    if (!truncation_allowed) throw Error(std::string(e.what()) + "; --allow-truncated keeps what was read");
    truncated_ = true;
    truncated_list.push_back(e.what());
    log_warning(std::string(e.what()) + "; kept what was read before it (--allow-truncated)");
    return 0;
  }
}

size_t InputStream::read_decoded(char* out, size_t n) {
  if (parallel_) {
    const size_t got = parallel_->read(out, n);
    raw_read_ = parallel_->raw_done();
    return got;
  }
  Decoder& d = *decoder_;
  auto truncated = [&] {
    return location(name_) + "truncated or corrupt " + compression_name(compression_) + " stream";
  };
  size_t produced = 0;
  while (produced < n) {
    if (compression_ == Compression::plain && d.raw_pos == d.raw_end && !d.raw_eof) {
      // Plain input past the sniffed head: read straight into the caller's buffer.
      size_t got = read_raw(reinterpret_cast<unsigned char*>(out + produced), n - produced);
      if (got == 0) d.raw_eof = true;
      produced += got;
      if (got == 0) break;
      continue;
    }
    if (!d.fill(*this)) {
      if (d.stream_open) throw Error(truncated() + " (unexpected end of input)");
      break;
    }
    unsigned char* src = d.raw.data() + d.raw_pos;
    size_t avail = d.raw_end - d.raw_pos;
    char* dst = out + produced;
    size_t room = n - produced;
    switch (compression_) {
      case Compression::plain: {
        size_t take = std::min(avail, room);
        std::memcpy(dst, src, take);
        d.raw_pos += take;
        produced += take;
        break;
      }
      case Compression::gzip: {
        d.gz.next_in = src;
        d.gz.avail_in = static_cast<uInt>(avail);
        d.gz.next_out = reinterpret_cast<Bytef*>(dst);
        d.gz.avail_out = static_cast<uInt>(room);
        int rc = inflate(&d.gz, Z_NO_FLUSH);
        d.stream_open = true;
        d.raw_pos += avail - d.gz.avail_in;
        produced += room - d.gz.avail_out;
        if (rc == Z_STREAM_END) {
          d.stream_open = false;
          inflateReset(&d.gz);  // a following gzip member, if any
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
          throw Error(truncated() + ": " + (d.gz.msg ? d.gz.msg : "zlib error"));
        }
        break;
      }
      case Compression::bzip2: {
        d.bz.next_in = reinterpret_cast<char*>(src);
        d.bz.avail_in = static_cast<unsigned>(avail);
        d.bz.next_out = dst;
        d.bz.avail_out = static_cast<unsigned>(room);
        int rc = BZ2_bzDecompress(&d.bz);
        d.stream_open = true;
        d.raw_pos += avail - d.bz.avail_in;
        produced += room - d.bz.avail_out;
        if (rc == BZ_STREAM_END) {
          d.stream_open = false;
          BZ2_bzDecompressEnd(&d.bz);
          if (BZ2_bzDecompressInit(&d.bz, 0, 0) != BZ_OK) throw Error(truncated());
        } else if (rc != BZ_OK) {
          throw Error(truncated() + " (bzip2 error " + std::to_string(rc) + ")");
        }
        break;
      }
      case Compression::zstd: {
        ZSTD_inBuffer in{src, avail, 0};
        ZSTD_outBuffer o{dst, room, 0};
        size_t rc = ZSTD_decompressStream(d.zs, &o, &in);
        if (ZSTD_isError(rc)) throw Error(truncated() + ": " + ZSTD_getErrorName(rc));
        d.stream_open = rc != 0;
        d.raw_pos += in.pos;
        produced += o.pos;
        break;
      }
    }
  }
  return produced;
}

}  // namespace kglm
