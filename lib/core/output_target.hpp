// Where an output path really leads, and so how it may be written (man 7 kglm, OUTPUTS):
// - "-": standard output, written as a stream;
// - a new path or a regular file: replaced atomically (a temporary beside it, renamed on success);
// - a symbolic link: followed, and the file it points to is replaced atomically; the link stays;
// - a character device, FIFO, socket or /dev/fd/N (process substitution): written in place as a
//   stream, never replaced, never truncated by rename;
// - a directory: refused.
#pragma once

#include <string>

namespace kglm {

struct OutputTarget {
  enum class Kind { standard_output, file, stream };
  Kind kind = Kind::file;
  std::string name;       // as the user gave it (for messages)
  std::string path;       // file: the path to replace (the link's target); stream: the path to open
  int inherited_fd = -1;  // stream given as /dev/fd/N or /proc/self/fd/N: that descriptor
  bool exists = false;    // file: there is one to replace
  unsigned mode = 0;      // file: permission bits of the existing file, kept by the replacement
};

// Throws Error for a directory or a symlink loop.
OutputTarget resolve_output(const std::string& path);

// Opens a stream target for writing (no truncation, no O_CREAT): an fd the caller owns.
int open_output_stream(const OutputTarget& target);

// A short description for messages: "a character device", "a FIFO", ...
std::string describe_file_type(const std::string& path);

}  // namespace kglm
