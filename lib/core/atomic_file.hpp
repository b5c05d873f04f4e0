// Atomic outputs: a file is written as NAME.tmp.<pid> and renamed to NAME only on commit(),
// so a failed or killed run never leaves a partial file under the final name.
#pragma once

#include <string>

namespace kglm {

class AtomicPath {
 public:
  explicit AtomicPath(std::string final_path);
  ~AtomicPath();  // removes the temporary file unless committed
  AtomicPath(const AtomicPath&) = delete;
  AtomicPath& operator=(const AtomicPath&) = delete;

  const std::string& temp() const { return temp_; }
  const std::string& final_path() const { return final_; }
  void commit();

 private:
  std::string final_;
  std::string temp_;
  bool committed_ = false;
};

// Creates the directory (and parents) if missing; throws Error on failure.
void make_directories(const std::string& dir);

}  // namespace kglm
