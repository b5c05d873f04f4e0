#include "core/output_target.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "core/error.hpp"

namespace kglm {

namespace {

namespace fs = std::filesystem;

// N for "/dev/fd/N", "/proc/self/fd/N" or "/proc/<our pid>/fd/N"; -1 otherwise. Such paths name
// descriptors the shell handed over (process substitution): duplicating the descriptor works for
// pipes and sockets alike, where re-opening the path would fail for a socket.
int descriptor_path_number(std::string_view path) {
  const std::string own = "/proc/" + std::to_string(::getpid()) + "/fd/";
  for (std::string_view prefix :
       {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/"), std::string_view(own)}) {
    if (!path.starts_with(prefix)) continue;
    std::string_view digits = path.substr(prefix.size());
    if (digits.empty() || digits.size() > 9) return -1;
    int n = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return -1;
      n = n * 10 + (c - '0');
    }
    return n;
  }
  return -1;
}

// Follows a chain of symbolic links to the path it finally names, which may not exist yet.
std::string follow_links(const std::string& path) {
  fs::path current(path);
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return current.string();
    std::error_code ec;
    fs::path target = fs::read_symlink(current, ec);
    if (ec) throw Error(location(path) + "cannot read the symbolic link: " + ec.message());
    current = target.is_absolute() ? target : current.parent_path() / target;
  }
  throw Error(location(path) + "too many levels of symbolic links");
}

const char* type_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

}  // namespace

std::string describe_file_type(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "missing";
  return type_name(st.st_mode);
}

OutputTarget resolve_output(const std::string& path) {
  OutputTarget t;
  t.name = path;
  if (path == "-") {
    t.kind = OutputTarget::Kind::standard_output;
    t.name = "<stdout>";
    return t;
  }
  if (int fd = descriptor_path_number(path); fd >= 0) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw Error(location(path) + "no such open descriptor: " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw Error(location(path) + "is a directory");
    t.kind = OutputTarget::Kind::stream;
    t.path = path;
    t.inherited_fd = fd;
    return t;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) throw Error(location(path) + "cannot write: " + std::strerror(errno));
    t.path = follow_links(path);  // a new file, or a dangling link's future target
    return t;
  }
  if (S_ISDIR(st.st_mode)) throw Error(location(path) + "is a directory; expected a file");
  if (!S_ISREG(st.st_mode)) {
    t.kind = OutputTarget::Kind::stream;
    t.path = path;
    return t;
  }
  t.path = follow_links(path);
  t.exists = true;
  t.mode = st.st_mode & 07777;
  return t;
}

int open_output_stream(const OutputTarget& target) {
  int fd = target.inherited_fd >= 0 ? ::fcntl(target.inherited_fd, F_DUPFD_CLOEXEC, 0)
                                    : ::open(target.path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw Error(location(target.name) + "cannot open for writing: " + std::strerror(errno));
  return fd;
}

}  // namespace kglm
