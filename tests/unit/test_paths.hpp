// Paths shared by the unit tests: fixtures (skipped when absent) and a scratch directory.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace kglm::test {

// The source tree the tests were built in, or the one $KGLM_TEST_SOURCE_DIR names where the binaries
// run elsewhere (the GPU kit, tests/gpu/run.sh).
inline std::string source_dir() {
  const char* value = std::getenv("KGLM_TEST_SOURCE_DIR");
  return value && *value ? value : KGLM_SOURCE_DIR;
}

inline std::string fixture(const std::string& rel) { return std::string(KGLM_FIXTURES_DIR) + "/" + rel; }
inline bool have_fixtures() { return std::filesystem::exists(fixture("wikidata/Q42.json")); }

#define KGLM_REQUIRE_FIXTURES() \
  if (!::kglm::test::have_fixtures()) GTEST_SKIP() << "../shared/fixtures not found"

// A fresh directory per test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("kglm-" + std::string(info->test_suite_name()) + "-" + info->name() + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes `text` to the file `name` here and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = file(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kglm::test
