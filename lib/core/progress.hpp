// A progress line on stderr: items, bytes, rate and ETA. Shown only when stderr is a terminal and
// --quiet is off; updates are throttled so callers may call update() per batch.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace kglm {

class Progress {
 public:
  // total_bytes = 0 when unknown (a pipe): no percentage or ETA then.
  Progress(std::string label, uint64_t total_bytes);
  ~Progress();
  void update(uint64_t items, uint64_t bytes);
  void finish();

 private:
  void draw(bool final);

  std::string label_;
  uint64_t total_;
  uint64_t items_ = 0;
  uint64_t bytes_ = 0;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

// "1.5 GB", "320 kB": human-readable sizes (decimal units).
std::string human_bytes(double bytes);

}  // namespace kglm
