#include "train/metrics_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/output_stream.hpp"

namespace kglm::train {

namespace {

// The value of "step" in a metrics line; -1 when there is none.
int64_t line_step(std::string_view line) {
  constexpr std::string_view kKey = "\"step\":";
  size_t at = line.find(kKey);
  if (at == std::string_view::npos) return -1;
  at += kKey.size();
  while (at < line.size() && line[at] == ' ') ++at;
  int64_t step = -1;
  std::from_chars(line.data() + at, line.data() + line.size(), step);
  return step;
}

}  // namespace

uint64_t truncate_metrics_log(const std::string& path, int64_t step) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(location(path) + "cannot read the metrics log: " + std::strerror(errno));
  std::string kept, line;
  uint64_t dropped = 0;
  while (std::getline(in, line)) {
    if (line_step(line) > step) {
      ++dropped;
      continue;
    }
    kept += line;
    kept += '\n';
  }
  if (dropped == 0) return 0;
  OutputStream out(path);
  out.write(kept);
  out.close();
  return dropped;
}

void MetricsLog::open(const std::string& path, const std::string& tensorboard, bool resuming, int64_t step) {
  if (!path.empty()) {
    if (resuming) {
      if (uint64_t dropped = truncate_metrics_log(path, step); dropped > 0)
        log_info(path + ": dropped " + std::to_string(dropped) + " lines after step " + std::to_string(step) +
                 ", the checkpoint's");
    }
    // Not atomic: the log grows while the run goes on (tail -f), and a resumed run appends.
    jsonl_fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (resuming ? O_APPEND : O_TRUNC), 0666);
    if (jsonl_fd_ < 0) throw Error(path + ": cannot open the metrics log: " + std::strerror(errno));
    jsonl_path_ = path;
  }
  if (!tensorboard.empty()) events_ = std::make_unique<TensorBoardEvents>(tensorboard, resuming ? step : -1);
}

MetricsLog::~MetricsLog() {
  if (jsonl_fd_ >= 0) ::close(jsonl_fd_);
}

void MetricsLog::write(const std::string& json_line) {
  if (jsonl_fd_ >= 0) {
    const std::string line = json_line + '\n';
    write_all(jsonl_fd_, line.data(), line.size(), jsonl_path_);
  }
  if (events_) events_->write_metrics_line(json_line);
}

}  // namespace kglm::train
