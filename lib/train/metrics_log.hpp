// The metrics log (JSON lines with a "step" field) that pretrain appends to.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace kglm::train {

// On --resume from a checkpoint at `step`: drops the lines of steps after it (a run that went on
// past its last checkpoint before it was stopped), so the resumed run does not repeat them. The
// rewrite is atomic; a log that is not a regular file (a FIFO, a device) is left alone. Returns the
// number of lines dropped.
uint64_t truncate_metrics_log(const std::string& path, int64_t step);

// Opens the log a run appends its lines to: a fresh run truncates it, a resumed one (at `step`)
// drops the lines after that step first (saying so on stderr) and appends.
void open_metrics_log(std::ofstream& log, const std::string& path, bool resuming, int64_t step);

}  // namespace kglm::train
