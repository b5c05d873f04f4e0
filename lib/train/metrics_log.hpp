// The metrics log (JSON lines with a "step" field) that pretrain appends to.
#pragma once

#include <cstdint>
#include <string>

namespace kglm::train {

// On --resume from a checkpoint at `step`: drops the lines of steps after it (a run that went on
// past its last checkpoint before it was stopped), so the resumed run does not repeat them. The
// rewrite is atomic; a log that is not a regular file (a FIFO, a device) is left alone. Returns the
// number of lines dropped.
uint64_t truncate_metrics_log(const std::string& path, int64_t step);

}  // namespace kglm::train
