// A fuzz input as a temporary file, for readers that take paths; removed when it goes.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace kglm::fuzz {

class FuzzFile {
 public:
  FuzzFile(const void* data, size_t size) {
    const int fd = ::mkstemp(path_);
    if (fd < 0) return;
    if (::write(fd, data, size) != static_cast<ssize_t>(size)) std::abort();
    ::close(fd);
    made_ = true;
  }
  ~FuzzFile() {
    if (made_) ::unlink(path_);
  }
  FuzzFile(const FuzzFile&) = delete;
  FuzzFile& operator=(const FuzzFile&) = delete;

  bool made() const { return made_; }  // false: no temporary could be made (skip the input)
  const char* path() const { return path_; }

 private:
  char path_[32] = "/tmp/kglm-fuzz-XXXXXX";
  bool made_ = false;
};

}  // namespace kglm::fuzz
