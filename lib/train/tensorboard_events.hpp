// TensorBoard event files: the metrics log's numbers as scalar summaries that TensorBoard (and its
// EventAccumulator) reads. One writer per run, on rank 0; every metrics line is mirrored as it is
// written, and the file is flushed after each line, so a TensorBoard watching the directory over
// an SSH tunnel sees the curves grow.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace kglm::train {

class TensorBoardEvents {
 public:
  // DIR: a directory (created if missing) that gets a new file
  // events.out.tfevents.<unix seconds>.<host>.<pid>, or a FIFO or character device (/dev/null)
  // written as a stream. resumed_at >= 0: a run resumed from its checkpoint at that step; its new
  // file starts with SessionLog START at resumed_at + 1, by which TensorBoard drops what the earlier
  // files hold past the checkpoint (the steps the stopped run went on to), as the metrics log drops
  // those lines: the curves continue without duplicates.
  explicit TensorBoardEvents(const std::string& dir, int64_t resumed_at = -1);
  ~TensorBoardEvents();
  TensorBoardEvents(const TensorBoardEvents&) = delete;
  TensorBoardEvents& operator=(const TensorBoardEvents&) = delete;

  // Writes every number of one metrics JSON line (an object with an integer "step") as a scalar
  // tagged with its key (nested objects: keys joined with '/'; booleans as 1 and 0); null and
  // strings are skipped. A line without "step" is ignored.
  void write_metrics_line(std::string_view json_line);

  // One scalar at a step.
  void write_scalar(std::string_view tag, int64_t step, float value, double wall_time);

  const std::string& path() const { return path_; }

 private:
  void write_record(const std::string& payload);

  std::string path_;
  std::FILE* file_ = nullptr;
};

// DIR/name, a run of its own under --tensorboard DIR (TensorBoard lists each subdirectory as a run:
// finetune's seeds), or DIR itself where it is a FIFO or character device; "" for an empty DIR.
std::string tensorboard_subdir(const std::string& dir, const std::string& name);

// The bytes of an Event record holding the file version, and of one holding scalars; exposed for
// the unit tests, which decode them.
std::string event_file_version(double wall_time);
std::string event_scalar(std::string_view tag, int64_t step, float value, double wall_time);
std::string event_session_start(int64_t step, double wall_time);

// TFRecord framing of one record: length, masked CRC-32C of the length, data, masked CRC-32C of the
// data (little-endian).
std::string tfrecord_frame(const std::string& data);
uint32_t masked_crc32c(const void* data, size_t bytes);

}  // namespace kglm::train
