// An exclusive lock on an output that a run writes again and again (a model directory saved at every
// --save-every, a fine-tuning run directory): two runs given the same --out would otherwise replace
// each other's checkpoints in turn, and both exit 0 (man 7 kglm, OUTPUTS).
#pragma once

#include <filesystem>
#include <string>

namespace kglm {

class OutputLock {
 public:
  OutputLock() = default;
  // Locks `output` (its path resolved through symbolic links, so two names of one directory share
  // the lock) with flock(2) on OUTPUT.lock beside it, which names the holder ("host pid"), making
  // OUTPUT's parent directories when missing. Another run holding it: Error, in one line naming the
  // holder's host and pid. The kernel drops the lock when its process ends however it ends, so the
  // file a killed run left is stale and taken over. Where the file system has no locks (ENOLCK), a
  // warning, and the run goes on unlocked. `what` names the output ("model directory").
  OutputLock(const std::filesystem::path& output, const std::string& what);
  // Removes the lock file, then releases the lock.
  ~OutputLock();
  OutputLock(OutputLock&& other) noexcept;
  OutputLock& operator=(OutputLock&& other) noexcept;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  void release() noexcept;
  std::string path_;
  int fd_ = -1;
};

}  // namespace kglm
