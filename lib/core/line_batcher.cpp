#include "core/line_batcher.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/input_kind.hpp"

namespace kglm {

void LineBatcher::recycle(LineBatch&& batch) {
  std::lock_guard lock(pool_mutex_);
  if (batch.data && pool_.size() < 16) pool_.push_back(std::move(batch));
}

bool LineBatcher::next(LineBatch& batch) {
  if (eof_ && carry_.empty()) return false;
  if (!batch.data) {
    std::lock_guard lock(pool_mutex_);
    if (!pool_.empty()) {
      batch = std::move(pool_.back());
      pool_.pop_back();
    }
  }
  // Start with the previous batch's incomplete last line, then read until the batch holds at
  // least target_ bytes and ends at a line break (or the input ends).
  size_t size = carry_.size();
  auto reserve = [&](size_t need) {
    if (batch.data && batch.capacity >= need + LineBatch::kPadding) return;
    size_t cap = std::max(need + LineBatch::kPadding, batch.capacity * 2);
    auto bigger = std::make_unique_for_overwrite<char[]>(cap);
    if (batch.data) std::memcpy(bigger.get(), batch.data.get(), size);
    batch.data = std::move(bigger);
    batch.capacity = cap;
  };
  reserve(std::max(target_, size) + target_);
  std::memcpy(batch.data.get(), carry_.data(), carry_.size());
  carry_.clear();
  size_t cut = std::string::npos;  // one past the last '\n'
  while (!eof_) {
    size_t want = std::max(target_, size / 2);
    reserve(size + want);
    size_t got = 0;
    try {
      got = in_.read(batch.data.get() + size, want);
    } catch (const Error& e) {
      stream_error_ = e.what();
    }
    if (got == 0) {
      eof_ = true;
      break;
    }
    const char* nl = static_cast<const char*>(memrchr(batch.data.get() + size, '\n', got));
    size += got;
    if (nl != nullptr) {
      cut = static_cast<size_t>(nl - batch.data.get()) + 1;
      if (size >= target_) break;
    }
  }
  if (eof_ || cut == std::string::npos) cut = size;
  carry_.assign(batch.data.get() + cut, size - cut);
  if (cut == 0) return false;
  batch.size = cut;
  batch.first_line = next_line_;
  const char* p = batch.data.get();
  next_line_ += static_cast<uint64_t>(std::count(p, p + cut, '\n'));
  if (p[cut - 1] != '\n') ++next_line_;
  batch.raw_bytes = in_.raw_bytes_read();
  return true;
}

void for_each_line(InputStream& in, const std::function<void(uint64_t, std::string_view)>& fn) {
  LineBatcher batcher(in);
  LineBatch batch;
  while (batcher.next(batch)) {
    batch.for_each_line([&](uint64_t number, std::string_view line) {
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      fn(number, line);
    });
    batcher.recycle(std::move(batch));
  }
  if (!batcher.stream_error().empty()) throw Error(batcher.stream_error());
}

void for_each_data_line(const std::string& path, const std::function<void(uint64_t, std::string_view)>& fn) {
  InputStream in(path);
  require_text_input(in, "a text file of lines (a list or a table)");
  for_each_line(in, [&](uint64_t number, std::string_view line) {
    if (!line.empty() && line[0] != '#') fn(number, line);
  });
}

}  // namespace kglm
