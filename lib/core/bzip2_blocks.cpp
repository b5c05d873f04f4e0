#include "core/bzip2_blocks.hpp"

#include <bzlib.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace kglm::bzip2 {

namespace {

constexpr uint64_t kBlockMagic = 0x314159265359;  // BCD pi
constexpr uint64_t kEndMagic = 0x177245385090;    // BCD sqrt(pi)
// A block holds at most 900k bytes before compression, and even data that bzip2 cannot compress
// stays far under 2 MB: no real block is longer, so a run of false cuts stops here.
constexpr uint64_t kMaxBlockBits = uint64_t{8} * (2 << 20);
// How far back a shard looks for the block before its first one.
constexpr uint64_t kBoundaryWindowBits = uint64_t{8} * (3 << 20);

// Appends bits, most significant first, as bzip2 writes them.
class BitWriter {
 public:
  explicit BitWriter(std::string& out) : out_(out) {}
  void put(uint64_t value, int bits) {  // bits <= 56
    acc_ = (acc_ << bits) | (value & ((uint64_t{1} << bits) - 1));
    held_ += bits;
    while (held_ >= 8) {
      held_ -= 8;
      out_.push_back(static_cast<char>(acc_ >> held_));
    }
  }
  void flush() {
    if (held_ > 0) put(0, 8 - held_);
  }

 private:
  std::string& out_;
  uint64_t acc_ = 0;
  int held_ = 0;
};

// `bits` (<= 56) bits of raw at bit offset `at`; raw has 8 bytes of slack at its end.
uint64_t get_bits(const std::vector<unsigned char>& raw, uint64_t at, int bits) {
  uint64_t word = 0;
  for (size_t i = 0; i < 8; ++i) word = word << 8 | raw[at / 8 + i];
  return (word << (at % 8)) >> (64 - bits);
}

bool bunzip(const std::string& stream, Pieces& out) {
  bz_stream bz{};
  if (BZ2_bzDecompressInit(&bz, 0, 0) != BZ_OK) throw Error("cannot initialise bzip2");
  const size_t count = out.count(), size = out.size();
  static constexpr size_t kPiece = 1 << 20;
  bz.next_in = const_cast<char*>(stream.data());
  bz.avail_in = static_cast<unsigned>(stream.size());
  int rc = BZ_OK;
  while (rc == BZ_OK) {
    bz.next_out = out.room(kPiece);
    bz.avail_out = kPiece;
    rc = BZ2_bzDecompress(&bz);
    out.commit(kPiece - bz.avail_out);
    if (rc == BZ_OK && bz.avail_in == 0 && bz.avail_out > 0) rc = BZ_UNEXPECTED_EOF;
  }
  BZ2_bzDecompressEnd(&bz);
  if (rc != BZ_STREAM_END) out.truncate(count, size);
  return rc == BZ_STREAM_END;
}

}  // namespace

std::vector<unsigned char> BlockFile::read_bytes(uint64_t begin, uint64_t end) const {
  end = std::min(end, size_);
  std::vector<unsigned char> raw(end > begin ? end - begin + 8 : 8, 0);  // slack for get_bits
  uint64_t done = 0;
  while (begin + done < end) {
    ssize_t got = ::pread(fd_, raw.data() + done, end - begin - done, static_cast<off_t>(begin + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      throw Error(location(name_) + "read error at byte " + std::to_string(begin + done) + ": " +
                  (got == 0 ? "unexpected end of file" : std::strerror(errno)));
    }
    done += static_cast<uint64_t>(got);
  }
  return raw;
}

std::vector<Marker> BlockFile::markers(uint64_t begin, uint64_t end, bool first_only) const {
  std::vector<Marker> found;
  end = std::min(end, bits());
  if (begin >= end) return found;
  // A magic starting at bit r of byte j covers all of byte j + 1, whose value then is one of 8 per
  // magic: a table of those 16 values passes over most bytes with one lookup, and the 8 offsets
  // of the byte before are compared only where it matches (about 1 GB/s).
  static const std::array<bool, 256> second_byte = [] {
    std::array<bool, 256> t{};
    for (uint64_t magic : {kBlockMagic, kEndMagic}) {
      for (int r = 0; r < 8; ++r) t[(magic >> (32 + r)) & 0xff] = true;
    }
    return t;
  }();
  static constexpr uint64_t kChunk = 64 << 10;
  const uint64_t last_start = (end - 1) / 8;  // the byte the last magic to find starts in
  for (uint64_t j0 = begin / 8; j0 <= last_start; j0 += kChunk) {
    const uint64_t j1 = std::min(last_start + 1, j0 + kChunk);  // start bytes [j0, j1)
    const std::vector<unsigned char> raw = read_bytes(j0, j1 + 7);
    for (uint64_t j = j0; j < j1; ++j) {
      if (!second_byte[raw[j - j0 + 1]]) continue;
      for (uint64_t r = 0; r < 8; ++r) {
        const uint64_t at = j * 8 + r;
        if (at < begin || at >= end || at + 48 > bits()) continue;
        const uint64_t v = get_bits(raw, at - j0 * 8, 48);
        if (v == kBlockMagic || v == kEndMagic) found.push_back({at, v == kBlockMagic});
      }
      if (first_only && !found.empty()) return found;
    }
  }
  return found;
}

Marker BlockFile::next_marker(uint64_t bit) const {
  static constexpr uint64_t kStep = uint64_t{8} << 20;
  for (uint64_t from = bit; from < bits(); from += kStep) {
    std::vector<Marker> m = markers(from, from + kStep, true);
    if (!m.empty()) return m.front();
  }
  return {bits(), false};
}

uint64_t BlockFile::next_block(uint64_t bit) const {
  for (Marker m = next_marker(bit); m.bit < bits(); m = next_marker(m.bit + 1)) {
    if (m.block) return m.bit;
  }
  return bits();
}

bool BlockFile::try_decode(const std::vector<Marker>& cuts, Pieces& out) const {
  const uint64_t begin = cuts.front().bit, end = cuts.back().bit;
  if (end <= begin + 80) return false;
  const uint64_t base = begin / 8;
  const std::vector<unsigned char> raw = read_bytes(base, (end + 7) / 8);
  std::string stream = "BZh9";  // the largest block size: any block fits
  stream.reserve(raw.size() + 16);
  BitWriter writer(stream);
  uint32_t combined = 0;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    if (!cuts[i].block) continue;  // after a stream's end: its CRC and the next stream's header
    const uint64_t from = cuts[i].bit - base * 8, to = cuts[i + 1].bit - base * 8;
    if (to - from <= 80) return false;
    const auto crc = static_cast<uint32_t>(get_bits(raw, from + 48, 32));
    combined = ((combined << 1) | (combined >> 31)) ^ crc;
    for (uint64_t at = from; at < to; at += 56) {
      const int n = static_cast<int>(std::min<uint64_t>(56, to - at));
      writer.put(get_bits(raw, at, n), n);
    }
  }
  writer.put(kEndMagic, 48);
  writer.put(combined, 32);
  writer.flush();
  return bunzip(stream, out);
}

Marker BlockFile::decode_one(uint64_t begin, Pieces& out) const {
  // The block ends at the first marker after it that lets it decode: a false magic inside it
  // cuts it short, and the short block fails its CRC.
  for (Marker end = next_marker(begin + 48); end.bit - begin <= kMaxBlockBits; end = next_marker(end.bit + 1)) {
    if (try_decode({{begin, true}, end}, out)) return end;
    if (end.bit >= bits()) break;
  }
  throw Error(location(name_) + "truncated or corrupt bzip2 block at byte " + std::to_string(begin / 8));
}

uint64_t BlockFile::decode(uint64_t begin, uint64_t end, Pieces& out) const {
  if (begin >= end) return begin;
  // All at once, every magic taken for real; block by block when a false one makes that fail.
  const Marker last = next_marker(end);
  std::vector<Marker> cuts = markers(begin + 1, last.bit);
  cuts.insert(cuts.begin(), Marker{begin, true});
  cuts.push_back(last);
  if (try_decode(cuts, out)) return after(last);
  uint64_t at = begin;
  while (at < end) at = after(decode_one(at, out));
  return at;
}

BlockFile::Boundary BlockFile::boundary(uint64_t bit) const {
  const uint64_t low = bit > kBoundaryWindowBits ? bit - kBoundaryWindowBits : 0;
  std::vector<Marker> before = markers(low, bit);
  for (auto it = before.rbegin(); it != before.rend(); ++it) {
    if (!it->block) continue;
    Pieces data;
    Marker end;
    try {
      end = decode_one(it->bit, data);
    } catch (const Error&) {
      continue;  // a false magic; the real block starts before it
    }
    const uint64_t first = after(end);
    if (first < bit) {  // a real block start after this one, whose own block failed
      throw Error(location(name_) + "truncated or corrupt bzip2 block at byte " + std::to_string(first / 8));
    }
    return {first, !data.empty(), data.empty() ? '\0' : data.back()};
  }
  if (low > 0) {
    throw Error(location(name_) + "no bzip2 block in the 3 MB before byte " + std::to_string(bit / 8) +
                ": not a bzip2 file, or a damaged one");
  }
  return {next_block(bit), false, '\0'};
}

}  // namespace kglm::bzip2
