#include "core/provenance.hpp"

#include <sys/stat.h>

#include <ctime>

#include "core/cli.hpp"

namespace kglm {

Provenance make_provenance(std::string tool, std::string command_line, const std::vector<std::string>& input_paths,
                           uint64_t seed) {
  Provenance p;
  p.tool = std::move(tool);
  p.version = kglm_version();
  p.command_line = std::move(command_line);
  p.seed = seed;
  for (const auto& path : input_paths) {
    InputInfo info{path == "-" ? "<stdin>" : path, -1};
    struct stat st {};
    if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) info.size = st.st_size;
    p.inputs.push_back(info);
  }
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  p.created = buf;
  return p;
}

}  // namespace kglm
