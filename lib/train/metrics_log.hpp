// The metrics log of a training run: JSON lines with a "step" field (--log), mirrored as TensorBoard
// event files (--tensorboard). Rank 0 opens it; the other ranks leave it closed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "train/tensorboard_events.hpp"

namespace kglm::train {

// On --resume from a checkpoint at `step`: drops the lines of steps after it (a run that went on
// past its last checkpoint before it was stopped), so the resumed run does not repeat them. The
// rewrite is atomic; a log that is not a regular file (a FIFO, a device) is left alone. Returns the
// number of lines dropped.
uint64_t truncate_metrics_log(const std::string& path, int64_t step);

class MetricsLog {
 public:
  // Opens the sinks that are set ("" = none): the JSON-lines log at `path` and a new event file in
  // the directory `tensorboard`. A fresh run truncates the log; a resumed one (at `step`) first drops
  // the log's lines after that step (saying so on stderr) and appends, and its event file starts
  // with TensorBoard's marker of a restart after `step`, so neither holds a step twice.
  void open(const std::string& path, const std::string& tensorboard, bool resuming, int64_t step);
  bool is_open() const { return jsonl_fd_ >= 0 || events_ != nullptr; }
  MetricsLog() = default;
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;
  ~MetricsLog();

  // One metrics line (a JSON object with "step"; no newline) into every sink, written through at
  // once, so that a tail -f or a TensorBoard watching the directory sees it. A failed write (a full
  // disk) throws Error with the system's reason: the run's record is part of its output.
  void write(const std::string& json_line);

 private:
  int jsonl_fd_ = -1;
  std::string jsonl_path_;
  std::unique_ptr<TensorBoardEvents> events_;
};

}  // namespace kglm::train
