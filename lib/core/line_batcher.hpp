// Cuts an input stream into batches of whole lines for parallel parsing. Each batch keeps spare
// bytes after its data so that parsers needing readable padding (simdjson) can use it in place.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/input_stream.hpp"

namespace kglm {

struct LineBatch {
  static constexpr size_t kPadding = 64;
  std::unique_ptr<char[]> data;  // uninitialised storage: filling it is the reader's only pass
  size_t capacity = 0;           // bytes allocated; always >= size + kPadding
  size_t size = 0;               // bytes of lines (the last one may lack '\n' at the end of input)
  uint64_t first_line = 1;       // 1-based line number of the first line in its input
  uint64_t raw_bytes = 0;        // the stream's raw bytes consumed once this batch was cut

  std::string_view lines() const { return {data.get(), size}; }

  // Calls fn(line_number, line) for every line, without its '\n'. A line view is followed by at
  // least kPadding readable bytes (up to end_of_storage()).
  template <class F>
  void for_each_line(F&& fn) const {
    std::string_view all = lines();
    uint64_t line_no = first_line;
    for (size_t pos = 0; pos < all.size(); ++line_no) {
      size_t end = std::min(all.find('\n', pos), all.size());
      fn(line_no, all.substr(pos, end - pos));
      pos = end + 1;
    }
  }
  const char* end_of_storage() const { return data.get() + capacity; }
};

class LineBatcher {
 public:
  LineBatcher(InputStream& in, size_t target_bytes = 4 << 20) : in_(in), target_(target_bytes) {}

  // False at the end. A corrupt or truncated compressed stream ends the input early: the data
  // before the fault is still delivered and stream_error() says what happened.
  bool next(LineBatch& batch);
  // Hands a processed batch's storage back for reuse (thread-safe), which saves the page faults
  // of fresh multi-megabyte allocations.
  void recycle(LineBatch&& batch);
  const std::string& stream_error() const { return stream_error_; }
  uint64_t lines_seen() const { return next_line_ - 1; }

 private:
  InputStream& in_;
  size_t target_;
  std::string carry_;  // the incomplete last line of the previous read
  bool eof_ = false;
  uint64_t next_line_ = 1;
  std::string stream_error_;
  std::mutex pool_mutex_;
  std::vector<LineBatch> pool_;
};

// Calls fn(line_number, line) for every line of `in` (blank ones included), without '\n' and a
// trailing '\r'. Throws Error on a corrupt or truncated compressed stream.
void for_each_line(InputStream& in, const std::function<void(uint64_t, std::string_view)>& fn);

// Calls fn(line_number, line) for every line of the file (or "-") at path, without '\n' and a
// trailing '\r', skipping empty lines and '#' comments: the shape of kglm's list and table
// inputs. Throws Error on a corrupt or truncated compressed stream.
void for_each_data_line(const std::string& path, const std::function<void(uint64_t, std::string_view)>& fn);

}  // namespace kglm
