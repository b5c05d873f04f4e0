#include "core/atomic_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace kglm {

AtomicPath::AtomicPath(std::string final_path)
    : final_(std::move(final_path)), temp_(final_ + ".tmp." + std::to_string(::getpid())) {}

AtomicPath::~AtomicPath() {
  if (!committed_) std::remove(temp_.c_str());
}

void AtomicPath::commit() {
  if (std::rename(temp_.c_str(), final_.c_str()) != 0) {
    throw Error(location(final_) + "cannot rename " + temp_ + ": " + std::strerror(errno));
  }
  committed_ = true;
}

void make_directories(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(location(dir) + "cannot create directory: " + ec.message());
}

}  // namespace kglm
