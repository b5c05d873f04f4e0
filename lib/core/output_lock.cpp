#include "core/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/temporaries.hpp"

namespace kglm {

namespace fs = std::filesystem;

namespace {

std::string holder_of(int fd) {
  char text[300] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  std::string holder = n > 0 ? std::string(text, static_cast<size_t>(n)) : std::string();
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
  return holder.empty() ? "a run that has not yet written its name" : holder;
}

}  // namespace

OutputLock::OutputLock(const fs::path& output, const std::string& what) {
  const fs::path dir = directory_output_path(output);
  std::error_code ec;
  const fs::path resolved = fs::weakly_canonical(dir, ec);
  path_ = (ec ? dir : resolved).string() + ".lock";
  const fs::path parent = fs::path(path_).parent_path();
  if (!parent.empty()) make_directories(parent.string());
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd_ < 0) throw Error(path_ + ": cannot create the lock of the " + what + ": " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err == EWOULDBLOCK) {
        const std::string holder = holder_of(fd_);
        ::close(fd_);
        fd_ = -1;
        throw Error(dir.string() + ": another run writes this " + what + " (" + holder + ", holding " + path_ +
                    "): wait for it to end, or give another output");
      }
      ::close(fd_);
      fd_ = -1;
      if (err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS) {
        log_warning(path_ + ": the file system has no locks (" + std::strerror(err) +
                    "): nothing keeps a second run from writing the same " + what);
        path_.clear();
        return;
      }
      throw Error(path_ + ": cannot lock the " + what + ": " + std::strerror(err));
    }
    // The holder before us may have removed the file between our open and our flock: the lock is
    // then on a name no longer there, and another run could make and lock a new file. Take the lock
    // only on the file the name still holds.
    struct stat held {
    }, named{};
    if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino)
      break;
    ::close(fd_);
    fd_ = -1;
  }
  register_temporary(path_);  // removed on SIGINT/SIGTERM like the run's other temporaries
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  const std::string holder = std::string("host ") + host + " pid " + std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0) throw Error(path_ + ": cannot write the lock file: " + std::strerror(errno));
  write_all(fd_, holder.data(), holder.size(), path_);
}

OutputLock::~OutputLock() { release(); }

OutputLock::OutputLock(OutputLock&& other) noexcept
    : path_(std::exchange(other.path_, std::string())), fd_(std::exchange(other.fd_, -1)) {}

OutputLock& OutputLock::operator=(OutputLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::exchange(other.path_, std::string());
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void OutputLock::release() noexcept {
  if (fd_ < 0) return;
  // Removed while still held, so that no other run can lock the old file after we let it go.
  ::unlink(path_.c_str());
  unregister_temporary(path_);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace kglm
