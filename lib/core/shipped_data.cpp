#include "core/shipped_data.hpp"

#include <system_error>

#include "core/error.hpp"

namespace kglm {

namespace fs = std::filesystem;

fs::path shipped_data_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);  // the tool's own path, links resolved
  if (ec) return {};
  fs::path dir = exe.parent_path().parent_path() / "share" / "kglm" / "data";
  return fs::is_directory(dir, ec) ? dir : fs::path{};
}

std::string find_data_path(const std::string& value, const char* option) {
  std::error_code ec;
  if (value.empty() || fs::exists(value, ec)) return value;
  fs::path given(value);
  fs::path shipped = shipped_data_dir();
  if (given.is_relative() && !shipped.empty() && fs::exists(shipped / given, ec)) return (shipped / given).string();
  throw UsageError(std::string("--") + option + " " + value + ": not found" +
                   (given.is_relative()
                        ? " here nor in the shipped data (" +
                              (shipped.empty() ? std::string("none beside this executable") : shipped.string()) + ")"
                        : std::string()));
}

}  // namespace kglm
