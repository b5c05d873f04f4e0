// Where an output came from: tool, version, command line, inputs (name + size), seed, time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kglm {

struct InputInfo {
  std::string name;
  int64_t size = -1;  // bytes; -1 for stdin or pipes
};

struct Provenance {
  std::string tool;
  std::string version;
  std::string command_line;
  std::vector<InputInfo> inputs;
  uint64_t seed = 0;
  std::string created;  // ISO 8601, UTC
};

Provenance make_provenance(std::string tool, std::string command_line, const std::vector<std::string>& input_paths,
                           uint64_t seed);

}  // namespace kglm
