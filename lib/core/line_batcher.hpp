// Cuts an input stream into batches of whole lines for parallel parsing. Each batch keeps spare
// bytes after its data so that parsers needing readable padding (simdjson) can use it in place.
#pragma once

#include <cstdint>
#include <string>

#include "core/input_stream.hpp"

namespace kglm {

struct LineBatch {
  static constexpr size_t kPadding = 64;
  std::string data;         // size() = bytes of lines + kPadding
  size_t size = 0;          // bytes of lines (the last one may lack '\n' at the end of input)
  uint64_t first_line = 1;  // 1-based line number of the first line in its input
  uint64_t raw_bytes = 0;   // the stream's raw bytes consumed once this batch was cut

  std::string_view lines() const { return {data.data(), size}; }
};

class LineBatcher {
 public:
  LineBatcher(InputStream& in, size_t target_bytes = 4 << 20) : in_(in), target_(target_bytes) {}

  // False at the end. A corrupt or truncated compressed stream ends the input early: the data
  // before the fault is still delivered and stream_error() says what happened.
  bool next(LineBatch& batch);
  const std::string& stream_error() const { return stream_error_; }
  uint64_t lines_seen() const { return next_line_ - 1; }

 private:
  InputStream& in_;
  size_t target_;
  std::string carry_;  // the incomplete last line of the previous read
  bool eof_ = false;
  uint64_t next_line_ = 1;
  std::string stream_error_;
};

}  // namespace kglm
