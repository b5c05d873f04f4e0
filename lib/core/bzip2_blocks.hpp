// bzip2 at block granularity: a bzip2 file's blocks decode independently of each other, even
// inside one stream (Wikidata's json.bz2 is a single stream of ~100k blocks), so a shard can
// decode only the blocks in its share of the file and a pool can decode blocks in parallel.
// libbz2 decodes whole streams only, and no packaged library decodes from a block, so this is
// written here: blocks are found by their 48-bit magic at any bit offset, and a run of blocks
// is copied bit by bit into a stream of its own ("BZh9", the blocks, the end-of-stream magic and
// the combined CRC of their CRCs) that libbz2 then decodes and checks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kglm::bzip2 {

// A block magic (pi) or an end-of-stream magic (sqrt pi) at a bit offset of the file. Inside a
// stream the magics are bit-aligned, so a false one turns up about once in 2^47 bits; it is
// told from a real one because the block it would cut in two fails its CRC.
struct Marker {
  uint64_t bit = 0;
  bool block = false;  // false: end of stream (or the end of the file, at bit 8 * size)
};

// Decoded bytes in pieces of up to 1 MB, so that a run of blocks (tens of MB of JSON) grows
// without being copied or zero-filled.
class Pieces {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  char back() const { return pieces_.back().first[pieces_.back().second - 1]; }
  size_t count() const { return pieces_.size(); }
  std::string_view piece(size_t i) const { return {pieces_[i].first.get(), pieces_[i].second}; }
  // Room for up to n bytes at the end; commit(k) keeps k of them.
  char* room(size_t n) {
    pieces_.emplace_back(std::unique_ptr<char[]>(new char[n]), 0);
    return pieces_.back().first.get();
  }
  void commit(size_t k) {
    pieces_.back().second = k;
    size_ += k;
    if (k == 0) pieces_.pop_back();
  }
  void truncate(size_t count, size_t size) {  // back to an earlier count() and size()
    pieces_.resize(count);
    size_ = size;
  }

 private:
  std::vector<std::pair<std::unique_ptr<char[]>, size_t>> pieces_;
  size_t size_ = 0;
};

class BlockFile {
 public:
  // fd is read with pread only; name is for messages.
  BlockFile(int fd, std::string name, uint64_t size) : fd_(fd), name_(std::move(name)), size_(size) {}

  uint64_t bits() const { return size_ * 8; }
  // The first marker at or after `bit`; {bits(), false} when there is none.
  Marker next_marker(uint64_t bit) const;
  // The first block magic at or after `bit`; bits() when there is none.
  uint64_t next_block(uint64_t bit) const;

  // Decodes the blocks that start in [begin, end), begin being a block's start: appends their
  // bytes to `out` and returns the bit where the next block starts. A block runs to the next
  // marker that lets it decode (a false magic inside it is passed over). Throws Error, naming
  // the byte, on a corrupt or truncated block; what was appended before it is valid.
  uint64_t decode(uint64_t begin, uint64_t end, Pieces& out) const;

  // The block before the one that starts at the first real block start at or after `bit`
  // (bit > 0): the last byte it decodes to (`has_last` false for none: the file's first block
  // starts at or after `bit`) and that start. For a shard that begins at `bit`.
  struct Boundary {
    uint64_t first_block = 0;
    bool has_last = false;
    char last = 0;
  };
  Boundary boundary(uint64_t bit) const;

  const std::string& name() const { return name_; }

 private:
  // Decodes the blocks between consecutive cuts as one stream (after an end-of-stream cut, its
  // CRC and the next stream's header are left out); false, appending nothing, when libbz2
  // refuses it.
  bool try_decode(const std::vector<Marker>& cuts, Pieces& out) const;
  // Decodes the block starting at `begin`; returns its end marker. Throws Error.
  Marker decode_one(uint64_t begin, Pieces& out) const;
  uint64_t after(const Marker& m) const { return m.block ? m.bit : next_block(m.bit + 48); }
  // In [begin, end), in order; with first_only, the first one only (read 64 kB at a time).
  std::vector<Marker> markers(uint64_t begin, uint64_t end, bool first_only = false) const;
  std::vector<unsigned char> read_bytes(uint64_t begin, uint64_t end) const;

  int fd_;
  std::string name_;
  uint64_t size_;
};

}  // namespace kglm::bzip2
