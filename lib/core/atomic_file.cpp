#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/error.hpp"
#include "core/temporaries.hpp"

namespace kglm {

namespace {

namespace fs = std::filesystem;

std::string directory_of(const std::string& path) {
  fs::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

std::string scratch_directory() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

// Durability (man 7 kglm, OUTPUTS): a file's data, and then the directory entry that names it, reach
// the disk before the tool reports the output written, so that a node crash after "saved" cannot
// leave a checkpoint with a missing or empty file. File systems that cannot sync (EINVAL) pass.
void sync_fd(int fd, const std::string& name) {
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
    throw Error(location(name) + "cannot write to disk (fsync): " + std::strerror(errno));
}

void sync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  // A directory we may write but not read (mode 0333) cannot be opened to sync: its entry stays
  // as durable as the file system makes it.
  if (fd < 0 && directory && (errno == EACCES || errno == EPERM)) return;
  if (fd < 0) throw Error(location(path) + "cannot open to write to disk: " + std::strerror(errno));
  try {
    sync_fd(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

void close_checked(int fd, const std::string& name) {
  if (::close(fd) != 0 && errno != EINTR) throw Error(location(name) + "write error: " + std::strerror(errno));
}

void rename_into_place(const std::string& temp, const OutputTarget& target) {
  if (target.exists) ::chmod(temp.c_str(), target.mode);
  if (std::rename(temp.c_str(), target.path.c_str()) != 0) {
    int err = errno;
    std::remove(temp.c_str());
    throw Error(location(target.name) + "cannot rename " + temp + " into place: " + std::strerror(err));
  }
  sync_path(directory_of(target.path), true);
}

}  // namespace

void write_all(int fd, const void* data, size_t n, const std::string& name) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t put = ::write(fd, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0 && errno == EPIPE) await_sigpipe_exit();
    if (put <= 0) throw Error(location(name) + "write error: " + std::strerror(put < 0 ? errno : EIO));
    p += put;
    n -= static_cast<size_t>(put);
  }
}

uint64_t copy_file_into(int in_fd, const std::string& in_name, int out_fd, const std::string& out_name) {
  std::vector<char> buffer(1 << 20);
  uint64_t offset = 0;
  for (;;) {
    ssize_t got = ::pread(in_fd, buffer.data(), buffer.size(), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw Error(location(in_name) + "cannot read: " + std::strerror(errno));
    if (got == 0) return offset;
    write_all(out_fd, buffer.data(), static_cast<size_t>(got), out_name);
    offset += static_cast<uint64_t>(got);
  }
}

AtomicPath::AtomicPath(const std::string& final_path) : target_(resolve_output(final_path)) {
  if (target_.kind == OutputTarget::Kind::file) {
    remove_stale_temporaries(target_.path);
    temp_ = temporary_name_for(target_.path);
  } else {
    std::string base = fs::path(target_.name).filename().string();
    const std::string scratch = scratch_directory() + "/kglm-" + (base.empty() ? "output" : base);
    remove_stale_temporaries(scratch);
    temp_ = temporary_name_for(scratch);
  }
  register_temporary(temp_);
}

AtomicPath::~AtomicPath() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(temp_, ec);
  }
  unregister_temporary(temp_);
}

void AtomicPath::commit() {
  if (target_.kind == OutputTarget::Kind::file) {
    sync_path(temp_, false);
    rename_into_place(temp_, target_);
    committed_ = true;
    return;
  }
  int in = ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw Error(location(temp_) + "cannot read back: " + std::strerror(errno));
  int out = target_.kind == OutputTarget::Kind::standard_output ? STDOUT_FILENO : open_output_stream(target_);
  try {
    copy_file_into(in, "the scratch file of " + target_.name, out, target_.name);
  } catch (...) {
    ::close(in);
    if (out != STDOUT_FILENO) ::close(out);
    throw;
  }
  ::close(in);
  if (out != STDOUT_FILENO) close_checked(out, target_.name);
  std::remove(temp_.c_str());
  committed_ = true;
}

AtomicOutputFd::AtomicOutputFd(const std::string& path) : target_(resolve_output(path)) {
  if (target_.kind == OutputTarget::Kind::standard_output) {
    fd_ = STDOUT_FILENO;
    return;
  }
  if (target_.kind == OutputTarget::Kind::stream) {
    fd_ = open_output_stream(target_);
    return;
  }
  remove_stale_temporaries(target_.path);
  const std::string dir = directory_of(target_.path);
#ifdef O_TMPFILE
  fd_ = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);  // RDWR: readable for the copy fallback
#endif
  if (fd_ < 0) {
    named_temp_ = temporary_name_for(target_.path);
    fd_ = ::open(named_temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) throw Error(location(target_.name) + "cannot create: " + std::strerror(errno));
    register_temporary(named_temp_);
  }
}

AtomicOutputFd::~AtomicOutputFd() {
  if (fd_ >= 0 && fd_ != STDOUT_FILENO) ::close(fd_);
  if (!named_temp_.empty()) {
    if (!committed_) std::remove(named_temp_.c_str());
    unregister_temporary(named_temp_);
  }
}

void AtomicOutputFd::commit() {
  finish();
  put_in_place();
}

void AtomicOutputFd::put_in_place() {
  if (!finished_) finish();
  if (committed_) return;
  rename_into_place(named_temp_, target_);
  committed_ = true;
}

void AtomicOutputFd::finish() {
  if (finished_) return;
  finished_ = true;
  int fd = fd_;
  fd_ = -1;
  if (target_.kind != OutputTarget::Kind::file) {
    if (fd != STDOUT_FILENO) close_checked(fd, target_.name);
    committed_ = true;
    return;
  }
  if (named_temp_.empty()) {
    // The anonymous inode gets a name only now; rename() then replaces the output atomically.
    named_temp_ = temporary_name_for(target_.path);
    register_temporary(named_temp_);
    const std::string proc = "/proc/self/fd/" + std::to_string(fd);
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, named_temp_.c_str(), AT_SYMLINK_FOLLOW) != 0 &&
        ::linkat(fd, "", AT_FDCWD, named_temp_.c_str(), AT_EMPTY_PATH) != 0) {
      // No /proc and no CAP_DAC_READ_SEARCH: copy the bytes out under the temporary name.
      int out = ::open(named_temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
      if (out < 0) {
        ::close(fd);
        throw Error(location(target_.name) + "cannot create: " + std::strerror(errno));
      }
      try {
        copy_file_into(fd, "the temporary of " + target_.name, out, target_.name);
        sync_fd(out, target_.name);
      } catch (...) {
        ::close(out);
        ::close(fd);
        throw;
      }
      close_checked(out, target_.name);
    }
  }
  try {
    sync_fd(fd, target_.name);
  } catch (...) {
    ::close(fd);
    throw;
  }
  close_checked(fd, target_.name);
}

void make_directories(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(location(dir) + "cannot create directory: " + ec.message());
}

fs::path directory_output_path(const fs::path& given) {
  std::string text = given.string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

namespace {

// The directory a directory output replaces: through a symbolic link, the one it points to.
fs::path replaced_directory(const fs::path& given) {
  std::error_code ec;
  const fs::path dir = directory_output_path(given);
  return fs::is_symlink(dir, ec) ? fs::weakly_canonical(dir) : dir;
}

}  // namespace

void check_directory_output(const fs::path& given, const std::string& what, const std::string& marker) {
  const fs::path dir = replaced_directory(given);
  const std::string name = dir.string();
  std::error_code ec;
  if (name.empty()) throw Error("an empty path is not a " + what);
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec))
      throw Error(name + ": is " + describe_file_type(name) + "; a " + what + " is needed");
    bool has_marker = false;
    size_t entries = 0;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      ++entries;
      if (!it->is_regular_file(ec))
        throw Error(name + ": exists and holds " + it->path().filename().string() + ", which is not a file of a " +
                    what + "; replacing it would delete everything in it: give a new or empty directory");
      has_marker = has_marker || it->path().filename() == marker;
    }
    if (ec) throw Error(name + ": cannot read the directory: " + ec.message());
    if (entries > 0 && !has_marker)
      throw Error(name + ": exists and is not a " + what + " (no " + marker +
                  "); replacing it would delete everything in it: give a new or empty directory");
  }
  // Made and removed at once: the temporary the real save will write beside DIR, or, where DIR's
  // parents are still to be made, the first of them.
  fs::path first = dir;
  while (first.has_parent_path() && first.parent_path() != first && !fs::exists(first.parent_path(), ec))
    first = first.parent_path();
  remove_stale_temporaries(first.string());
  const fs::path probe = temporary_name_for(first.string());
  register_temporary(probe.string());
  const bool made = fs::create_directory(probe, ec);
  const std::error_code made_ec = ec;
  fs::remove(probe, ec);
  unregister_temporary(probe.string());
  if (!made) {
    const fs::path parent = first.has_parent_path() ? first.parent_path() : fs::path(".");
    throw Error(name + ": cannot write the " + what + " in " + parent.string() + ": " +
                (made_ec ? made_ec.message() : std::string("the temporary ") + probe.string() + " exists"));
  }
}

void write_directory_atomically(const fs::path& given_dir, const std::string& what, const std::string& marker,
                                const std::function<void(const fs::path&)>& write_files) {
  std::error_code ec;
  check_directory_output(given_dir, what, marker);
  const fs::path dir = replaced_directory(given_dir);
  remove_stale_temporaries(dir.string());
  const fs::path tmp = temporary_name_for(dir.string());
  register_temporary(tmp.string());
  struct Unregister {
    std::string path;
    ~Unregister() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
      unregister_temporary(path);
    }
  } cleanup{tmp.string()};
  fs::remove_all(tmp, ec);
  const CommitSection whole;  // an interrupting signal waits for the save: no half-removed temporary
  try {
    fs::create_directories(tmp);
    write_files(tmp);
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(tmp))
      if (e.is_regular_file() || e.is_directory()) sync_path(e.path().string(), e.is_directory());
    sync_path(tmp.string(), true);
    // Swap in with one atomic exchange, so DIR is always either the old or the new directory;
    // the old one, now under the temporary name, is removed with it.
    if (!fs::exists(dir)) {
      fs::rename(tmp, dir);
    } else if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
      if (errno != EINVAL && errno != ENOSYS)
        throw fs::filesystem_error("renameat2", tmp, dir, std::error_code(errno, std::generic_category()));
      // A file system without RENAME_EXCHANGE: move the old one aside first.
      const fs::path old = dir.string() + ".tmp." + std::to_string(::getpid()) + ".old";
      register_temporary(old.string());
      fs::rename(dir, old);
      fs::rename(tmp, dir);
      fs::remove_all(old, ec);
      unregister_temporary(old.string());
    }
    sync_path(directory_of(dir.string()), true);
  } catch (const fs::filesystem_error& e) {
    throw Error(dir.string() + ": cannot write the " + what + ": " + e.code().message());
  }
}

}  // namespace kglm
