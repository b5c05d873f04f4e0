// Byte output to a file or stdout ("-"), compressed according to the file suffix (.gz, .bz2,
// .zst; anything else is plain). Regular files are atomic (AtomicOutputFd): nothing appears under
// the final name until close() succeeds; devices, FIFOs and /dev/fd/N are written as streams.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/input_stream.hpp"

namespace kglm {

Compression compression_for_suffix(std::string_view path);

// Writes `content` to `path` as one atomic output (man 7 kglm, OUTPUTS): small files of a model
// directory (config.json, trainer_state.json, vocab.txt). Throws Error with the system's reason.
void write_file_atomically(const std::string& path, std::string_view content);

class OutputStream;

// The files of one output (a dataset split by language, documents and their redirects): each is
// finished and synced (what can fail), and only then are all renamed into place, in a
// CommitSection that an interrupting signal waits for: all new or all old (man 7 kglm, OUTPUTS).
void put_in_place_together(const std::vector<OutputStream*>& parts);

class OutputStream {
 public:
  explicit OutputStream(const std::string& path);
  ~OutputStream();  // without close(): the temporary file is removed
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;

  void write(std::string_view bytes);
  // Flushes the compressor, syncs and renames into place. Throws Error on failure.
  void close();
  // close() in two, for outputs of several files (CommitSection): finish() writes and syncs all
  // that is left, put_in_place() renames.
  void finish();
  void put_in_place();
  const std::string& name() const { return name_; }

 private:
  struct Encoder;
  void write_raw(const char* data, size_t n);

  void flush_buffer();

  std::string name_;
  std::unique_ptr<class AtomicOutputFd> file_;
  bool finished_ = false;
  std::vector<char> buffer_;  // bytes not yet written to the descriptor
  std::unique_ptr<Encoder> encoder_;
};

}  // namespace kglm
