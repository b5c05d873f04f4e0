// Atomic outputs (man 7 kglm, OUTPUTS). A regular file, or a new path, is written under a
// temporary name beside it and renamed over it only on commit(), so a failed or interrupted run
// never leaves a partial file under the final name and an existing file stays untouched. A
// symbolic link is followed: its target is replaced and the link stays. Character devices, FIFOs,
// sockets and /dev/fd/N are never replaced: they receive the bytes as a stream.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "core/output_target.hpp"

namespace kglm {

// For files a library writes by name (HDF5, safetensors, JSON): write temp(), then commit().
// A stream target gets a scratch file under $TMPDIR whose bytes are copied into it on commit().
// Temporaries are registered for removal on SIGINT/SIGTERM and removed by the destructor unless
// committed; stale ones of dead processes beside the output are removed on construction.
class AtomicPath {
 public:
  explicit AtomicPath(const std::string& final_path);
  ~AtomicPath();
  AtomicPath(const AtomicPath&) = delete;
  AtomicPath& operator=(const AtomicPath&) = delete;

  const std::string& temp() const { return temp_; }
  // The path as given, for messages.
  const std::string& final_path() const { return target_.name; }
  void commit();

 private:
  OutputTarget target_;
  std::string temp_;
  bool committed_ = false;
};

// For byte streams: an open descriptor on the output. A regular file is an anonymous O_TMPFILE
// inode linked into place on commit() (nothing visible exists until then, even after SIGKILL),
// or a registered NAME.tmp.<pid> where the file system has no O_TMPFILE. Standard output and
// stream targets are written directly.
class AtomicOutputFd {
 public:
  explicit AtomicOutputFd(const std::string& path);
  ~AtomicOutputFd();
  AtomicOutputFd(const AtomicOutputFd&) = delete;
  AtomicOutputFd& operator=(const AtomicOutputFd&) = delete;

  int fd() const { return fd_; }
  const std::string& name() const { return target_.name; }
  bool is_stream() const { return target_.kind != OutputTarget::Kind::file; }
  // Closes the descriptor and puts a file in place. Throws Error on failure.
  void commit();
  // commit() in two: finish() does what can fail for want of space (the data synced, the anonymous
  // file named NAME.tmp.<pid>, the descriptor closed); put_in_place() then only renames. Outputs of
  // several files finish every part before they put any in place (CommitSection).
  void finish();
  void put_in_place();

 private:
  OutputTarget target_;
  int fd_ = -1;
  std::string named_temp_;  // empty with O_TMPFILE
  bool finished_ = false;
  bool committed_ = false;
};

// Writes all n bytes to fd, retrying short writes and EINTR. Throws Error naming `name`.
void write_all(int fd, const void* data, size_t n, const std::string& name);

// Copies the whole file open at in_fd (from offset 0) to out_fd; returns the bytes copied. Throws
// Error naming in_name or out_name.
uint64_t copy_file_into(int in_fd, const std::string& in_name, int out_fd, const std::string& out_name);

// A directory output's path as written by the user, with trailing separators dropped ("ckpt/"
// names "ckpt"): its temporary DIR.tmp.<pid> then lies beside it, not inside it.
std::filesystem::path directory_output_path(const std::filesystem::path& given);

// What a directory output may replace (man 7 kglm, OUTPUTS): replacing DIR deletes all it holds, so
// DIR must be missing, an empty directory, or an earlier output of the same kind: a directory whose
// entries are regular files, among them `marker` (model.safetensors, weights.hdf5). Anything else
// (a typo that names a folder of experiments) is refused in one line. A directory must also be
// creatable beside DIR (tried: made and removed), so that an unwritable or read-only location fails
// before any work, not at the first save. `what` names the output ("model directory"). Throws Error.
void check_directory_output(const std::filesystem::path& dir, const std::string& what, const std::string& marker);

// Writes DIR as a whole: `write_files(tmp)` fills DIR.tmp.<pid>, which then replaces DIR in one
// atomic exchange, so DIR is always either the old or the new directory (through a symbolic link,
// the directory it points to is replaced). Checks DIR first (check_directory_output). `what` names
// it in errors ("model directory").
void write_directory_atomically(const std::filesystem::path& dir, const std::string& what, const std::string& marker,
                                const std::function<void(const std::filesystem::path&)>& write_files);

// Creates the directory (and parents) if missing; throws Error on failure.
void make_directories(const std::string& dir);

}  // namespace kglm
