#include "core/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include "core/log.hpp"

namespace kglm {

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

namespace {
std::string human_count(double n) {
  char buf[32];
  if (n >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.2fM", n / 1e6);
  } else if (n >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.1fk", n / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f", n);
  }
  return buf;
}
}  // namespace

Progress::Progress(std::string label, uint64_t total_bytes)
    : label_(std::move(label)),
      total_(total_bytes),
      enabled_(!log_quiet() && ::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

Progress::~Progress() { finish(); }

void Progress::update(uint64_t items, uint64_t bytes) {
  items_ = items;
  bytes_ = bytes;
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(250)) return;
  last_ = now;
  draw(false);
}

void Progress::finish() {
  if (enabled_ && drawn_) {
    draw(true);
    std::fputc('\n', stderr);
  }
  drawn_ = false;
  enabled_ = false;
}

void Progress::draw(bool final) {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = secs > 0 ? bytes_ / secs : 0;
  std::string line = "\r" + label_ + ": " + human_count(static_cast<double>(items_)) + " items, " +
                     human_bytes(static_cast<double>(bytes_));
  if (total_ > 0) {
    char pct[16];
    std::snprintf(pct, sizeof pct, " (%.0f%%)", 100.0 * bytes_ / total_);
    line += " / " + human_bytes(static_cast<double>(total_)) + pct;
  }
  line += ", " + human_bytes(rate) + "/s";
  if (total_ > 0 && rate > 0 && !final && bytes_ < total_) {
    int eta = static_cast<int>((total_ - bytes_) / rate);
    char buf[32];
    std::snprintf(buf, sizeof buf, ", ETA %d:%02d:%02d", eta / 3600, eta / 60 % 60, eta % 60);
    line += buf;
  }
  line += "\x1b[K";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace kglm
