// Byte input from a file or stdin ("-"), decompressing gzip, bzip2 or zstd as detected from the
// magic bytes (never from the file name). Concatenated members/streams/frames are read in turn,
// as written by pigz, lbzip2/pbzip2 and zstd -T.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kglm {

enum class Compression { plain, gzip, bzip2, zstd };
const char* compression_name(Compression c);
Compression detect_compression(const unsigned char* head, size_t n);

// --allow-truncated, process-wide (set by ToolCli): a truncated or corrupt compressed stream then
// ends its input early with a warning, and is listed by truncated_inputs() for the statistics and
// the provenance. Without it, read() throws and the run fails with no output (man 7 kglm).
void set_allow_truncated(bool allow);
std::vector<std::string> truncated_inputs();  // one located message per truncated input

class InputStream {
 public:
  // Throws Error when the file cannot be opened.
  explicit InputStream(const std::string& path);
  ~InputStream();
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;

  // Reads up to n decompressed bytes; 0 at the end. Throws Error on a corrupt or truncated
  // compressed stream (unless --allow-truncated); everything returned before that is valid data.
  size_t read(char* out, size_t n);
  // The first n decompressed bytes (fewer at the end of input), without consuming them: read()
  // returns them again. For sniffing the kind of input (input_kind.hpp), stdin included.
  std::string_view peek(size_t n);

  // Whether the input is an uncompressed regular file, which read_range() splits anywhere.
  bool seekable() const { return compression_ == Compression::plain && raw_size_ > 0 && owns_fd_; }

  // Whether read_range() can be used: a regular file, plain or bzip2 (whose streams decode
  // independently: multistream dumps, pbzip2 output).
  bool splittable() const {
    return owns_fd_ && raw_size_ > 0 && (compression_ == Compression::plain || compression_ == Compression::bzip2);
  }
  // From now on, the decoded bytes of the raw bytes [begin, end) only: a shard's share of the file.
  // For bzip2, begin and end must be stream starts (next_stream_start) or the file size. What
  // peek() took is dropped. Throws Error on an input that is not splittable().
  void read_range(uint64_t begin, uint64_t end);
  // The first offset in [from, limit) at which a bzip2 stream starts ("BZh1".."BZh9" and a block's
  // magic, byte-aligned), or at which `pattern` starts; the file size when there is none. Reads
  // with pread, so reading goes on where it was.
  uint64_t next_stream_start(uint64_t from, uint64_t limit = UINT64_MAX) const;
  uint64_t next_occurrence(uint64_t from, std::string_view pattern, uint64_t limit = UINT64_MAX) const;

  // For a bzip2 regular file: decodes the rest of the input (from the start of its range; call
  // before read()) on `threads` threads, about 256 kB of the file's blocks each, delivered in
  // order; one stream of many blocks (Wikidata's json.bz2, lbzip2 output) as well as many
  // streams (multistream dumps, pbzip2). Does nothing for other inputs or one thread.
  void decode_in_parallel(unsigned threads);

  // For a bzip2 regular file, a shard's share: from now on, the last decoded byte of the block
  // before bit 8 * begin (none when begin is 0 or no block starts before it), then the decoded
  // bytes of the blocks from the first one that starts at or after bit 8 * begin to the end of
  // the file, on `threads` threads. block_range_end() is where, in what read() returns, the
  // blocks at or after bit 8 * end begin: UINT64_MAX until read() has got there (or never, when
  // none does). With that one byte before, the lines that start in the share are told from the
  // one that runs into it exactly as in a plain file's byte range. Throws Error otherwise.
  void read_block_range(uint64_t begin, uint64_t end, unsigned threads);
  uint64_t block_range_end() const;
  uint64_t block_range_prefix() const { return block_range_prefix_; }  // 1 with the byte before, else 0

  const std::string& name() const { return name_; }
  // The name errors give (a shard's input says where its line numbers count from).
  void rename(std::string name) { name_ = std::move(name); }
  Compression compression() const { return compression_; }
  // Raw (compressed) bytes consumed so far and the file size (0 when unknown, e.g. a pipe).
  uint64_t raw_bytes_read() const { return raw_read_; }
  uint64_t raw_size() const { return raw_size_; }

 private:
  struct Decoder;
  class Parallel;
  size_t read_raw(unsigned char* out, size_t n);
  size_t read_decoded(char* out, size_t n);
  size_t decode(char* out, size_t n);  // read_decoded() under the truncation policy

  std::string name_;
  int fd_ = -1;
  bool owns_fd_ = false;
  Compression compression_ = Compression::plain;
  uint64_t raw_read_ = 0;
  uint64_t raw_size_ = 0;
  uint64_t raw_begin_ = 0;           // read_range's begin
  uint64_t raw_limit_ = UINT64_MAX;  // read_range's end
  uint64_t block_range_prefix_ = 0;  // read_block_range's byte before
  std::unique_ptr<Parallel> parallel_;
  std::unique_ptr<Decoder> decoder_;
  std::string peeked_;  // decoded bytes taken by peek() and not yet returned by read()
  size_t peeked_pos_ = 0;
  bool truncated_ = false;  // --allow-truncated cut this input short
  friend struct Decoder;
};

}  // namespace kglm
