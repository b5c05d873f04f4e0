#include "core/line_batcher.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace kglm {

bool LineBatcher::next(LineBatch& batch) {
  if (eof_ && carry_.empty()) return false;
  std::string& buf = batch.data;
  buf.clear();
  buf.swap(carry_);
  size_t cut = std::string::npos;  // one past the last '\n'
  while (!eof_) {
    size_t old = buf.size();
    size_t want = std::max(target_, old / 2);
    buf.resize(old + want);
    size_t got = 0;
    try {
      got = in_.read(buf.data() + old, want);
    } catch (const Error& e) {
      stream_error_ = e.what();
    }
    buf.resize(old + got);
    if (got == 0) {
      eof_ = true;
      break;
    }
    const char* nl = static_cast<const char*>(memrchr(buf.data() + old, '\n', got));
    if (nl != nullptr) {
      cut = static_cast<size_t>(nl - buf.data()) + 1;
      if (buf.size() >= target_) break;
    }
  }
  if (eof_) cut = buf.size();
  if (cut == std::string::npos) cut = buf.size();
  carry_.assign(buf, cut, std::string::npos);
  buf.resize(cut);
  if (buf.empty()) return false;
  batch.size = buf.size();
  batch.first_line = next_line_;
  next_line_ += static_cast<uint64_t>(std::count(buf.begin(), buf.end(), '\n'));
  if (buf.back() != '\n') ++next_line_;
  batch.raw_bytes = in_.raw_bytes_read();
  buf.append(LineBatch::kPadding, '\0');
  return true;
}

}  // namespace kglm
