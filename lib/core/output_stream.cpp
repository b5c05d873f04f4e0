#include "core/output_stream.hpp"

#include <bzlib.h>
#include <zlib.h>
#include <zstd.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/temporaries.hpp"

namespace kglm {

Compression compression_for_suffix(std::string_view path) {
  auto ends = [&](std::string_view s) { return path.size() >= s.size() && path.ends_with(s); };
  if (ends(".gz")) return Compression::gzip;
  if (ends(".bz2")) return Compression::bzip2;
  if (ends(".zst") || ends(".zstd")) return Compression::zstd;
  return Compression::plain;
}

struct OutputStream::Encoder {
  Compression kind;
  std::vector<char> buffer = std::vector<char>(1 << 18);
  z_stream gz{};
  bz_stream bz{};
  ZSTD_CCtx* zs = nullptr;

  explicit Encoder(Compression k, const std::string& name) : kind(k) {
    bool ok = true;
    if (kind == Compression::gzip) ok = deflateInit2(&gz, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    if (kind == Compression::bzip2) ok = BZ2_bzCompressInit(&bz, 9, 0, 0) == BZ_OK;
    if (kind == Compression::zstd) ok = (zs = ZSTD_createCCtx()) != nullptr;
    if (!ok) throw Error(location(name) + "cannot initialise the compressor");
  }
  ~Encoder() {
    if (gz.state != nullptr) deflateEnd(&gz);
    if (bz.state != nullptr) BZ2_bzCompressEnd(&bz);
    if (zs != nullptr) ZSTD_freeCCtx(zs);
  }
};

namespace {
constexpr size_t kWriteBuffer = 1 << 20;
}  // namespace

OutputStream::OutputStream(const std::string& path) : file_(std::make_unique<AtomicOutputFd>(path)) {
  name_ = file_->name();
  buffer_.reserve(kWriteBuffer);
  Compression kind = path == "-" ? Compression::plain : compression_for_suffix(path);
  if (kind != Compression::plain) encoder_ = std::make_unique<Encoder>(kind, name_);
}

OutputStream::~OutputStream() = default;

void OutputStream::flush_buffer() {
  write_all(file_->fd(), buffer_.data(), buffer_.size(), name_);
  buffer_.clear();
}

void OutputStream::write_raw(const char* data, size_t n) {
  if (buffer_.size() + n > kWriteBuffer) flush_buffer();
  if (n >= kWriteBuffer) return write_all(file_->fd(), data, n, name_);
  buffer_.insert(buffer_.end(), data, data + n);
}

void OutputStream::write(std::string_view bytes) {
  if (!encoder_) return write_raw(bytes.data(), bytes.size());
  Encoder& e = *encoder_;
  switch (e.kind) {
    case Compression::gzip:
      e.gz.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
      e.gz.avail_in = static_cast<uInt>(bytes.size());
      while (e.gz.avail_in > 0) {
        e.gz.next_out = reinterpret_cast<Bytef*>(e.buffer.data());
        e.gz.avail_out = static_cast<uInt>(e.buffer.size());
        deflate(&e.gz, Z_NO_FLUSH);
        write_raw(e.buffer.data(), e.buffer.size() - e.gz.avail_out);
      }
      break;
    case Compression::bzip2:
      e.bz.next_in = const_cast<char*>(bytes.data());
      e.bz.avail_in = static_cast<unsigned>(bytes.size());
      while (e.bz.avail_in > 0) {
        e.bz.next_out = e.buffer.data();
        e.bz.avail_out = static_cast<unsigned>(e.buffer.size());
        BZ2_bzCompress(&e.bz, BZ_RUN);
        write_raw(e.buffer.data(), e.buffer.size() - e.bz.avail_out);
      }
      break;
    case Compression::zstd: {
      ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
      while (in.pos < in.size) {
        ZSTD_outBuffer out{e.buffer.data(), e.buffer.size(), 0};
        size_t rc = ZSTD_compressStream2(e.zs, &out, &in, ZSTD_e_continue);
        if (ZSTD_isError(rc)) throw Error(location(name_) + ZSTD_getErrorName(rc));
        write_raw(e.buffer.data(), out.pos);
      }
      break;
    }
    case Compression::plain:
      break;
  }
}

void OutputStream::finish() {
  if (finished_) return;
  finished_ = true;
  if (encoder_) {
    Encoder& e = *encoder_;
    bool done = false;
    while (!done) {
      size_t produced = 0;
      if (e.kind == Compression::gzip) {
        e.gz.next_out = reinterpret_cast<Bytef*>(e.buffer.data());
        e.gz.avail_out = static_cast<uInt>(e.buffer.size());
        done = deflate(&e.gz, Z_FINISH) == Z_STREAM_END;
        produced = e.buffer.size() - e.gz.avail_out;
      } else if (e.kind == Compression::bzip2) {
        e.bz.next_out = e.buffer.data();
        e.bz.avail_out = static_cast<unsigned>(e.buffer.size());
        done = BZ2_bzCompress(&e.bz, BZ_FINISH) == BZ_STREAM_END;
        produced = e.buffer.size() - e.bz.avail_out;
      } else {
        ZSTD_inBuffer in{nullptr, 0, 0};
        ZSTD_outBuffer out{e.buffer.data(), e.buffer.size(), 0};
        size_t rc = ZSTD_compressStream2(e.zs, &out, &in, ZSTD_e_end);
        if (ZSTD_isError(rc)) throw Error(location(name_) + ZSTD_getErrorName(rc));
        done = rc == 0;
        produced = out.pos;
      }
      write_raw(e.buffer.data(), produced);
    }
  }
  flush_buffer();
  file_->finish();
}

void OutputStream::close() {
  finish();
  put_in_place();
}

void OutputStream::put_in_place() { file_->put_in_place(); }

void put_in_place_together(const std::vector<OutputStream*>& parts) {
  for (OutputStream* part : parts) part->finish();
  const CommitSection together;
  for (OutputStream* part : parts) part->put_in_place();
}

void write_file_atomically(const std::string& path, std::string_view content) {
  OutputStream out(path);
  out.write(content);
  out.close();
}

}  // namespace kglm
