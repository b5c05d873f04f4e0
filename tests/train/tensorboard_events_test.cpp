// TensorBoard event records: CRC-32C against its published check value, TFRecord framing, and the
// Event/Summary fields decoded here field by field (the end-to-end check with TensorBoard's own
// reader is tests/cli/tensorboard.sh).
#include "train/tensorboard_events.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "core/error.hpp"
#include "temp_dir.hpp"

namespace kglm::train {
namespace {

using kglm::testing::TempDir;

uint32_t unmask(uint32_t masked) {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

uint64_t varint(const std::string& s, size_t& at) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const auto b = static_cast<uint8_t>(s.at(at++));
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
}

// The fields of one message: number -> raw bytes (varint fields as their decimal value).
std::multimap<uint32_t, std::string> fields(const std::string& msg) {
  std::multimap<uint32_t, std::string> out;
  size_t at = 0;
  while (at < msg.size()) {
    const uint64_t key = varint(msg, at);
    const auto field = static_cast<uint32_t>(key >> 3);
    switch (key & 7) {
      case 0:
        out.emplace(field, std::to_string(varint(msg, at)));
        break;
      case 1:
        out.emplace(field, msg.substr(at, 8));
        at += 8;
        break;
      case 5:
        out.emplace(field, msg.substr(at, 4));
        at += 4;
        break;
      case 2: {
        const uint64_t n = varint(msg, at);
        out.emplace(field, msg.substr(at, n));
        at += n;
        break;
      }
      default:
        ADD_FAILURE() << "wire type " << (key & 7);
    }
  }
  EXPECT_EQ(at, msg.size());
  return out;
}

template <typename T>
T fixed(const std::string& bytes) {
  T v;
  EXPECT_EQ(bytes.size(), sizeof v);
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

TEST(TensorBoardEvents, Crc32cCheckValue) {
  // CRC-32C("123456789") = 0xe3069283 (RFC 3720, B.4's check value).
  EXPECT_EQ(unmask(masked_crc32c("123456789", 9)), 0xe3069283u);
  EXPECT_EQ(unmask(masked_crc32c("", 0)), 0u);
}

TEST(TensorBoardEvents, FramingAndScalar) {
  const std::string event = event_scalar("loss_mlm", 42, 1.5f, 1700000000.25);
  const std::string framed = tfrecord_frame(event);
  ASSERT_EQ(framed.size(), event.size() + 16);
  EXPECT_EQ(fixed<uint64_t>(framed.substr(0, 8)), event.size());
  EXPECT_EQ(fixed<uint32_t>(framed.substr(8, 4)), masked_crc32c(framed.data(), 8));
  EXPECT_EQ(framed.substr(12, event.size()), event);
  EXPECT_EQ(fixed<uint32_t>(framed.substr(12 + event.size())), masked_crc32c(event.data(), event.size()));

  const auto e = fields(event);
  EXPECT_EQ(fixed<double>(e.find(1)->second), 1700000000.25);  // wall_time
  EXPECT_EQ(e.find(2)->second, "42");                          // step
  const auto summary = fields(e.find(5)->second);
  const auto value = fields(summary.find(1)->second);
  EXPECT_EQ(value.find(1)->second, "loss_mlm");
  EXPECT_EQ(fixed<float>(value.find(2)->second), 1.5f);
}

TEST(TensorBoardEvents, FileVersionAndSessionStart) {
  const auto version = fields(event_file_version(1.0));
  EXPECT_EQ(version.find(3)->second, "brain.Event:2");
  EXPECT_EQ(version.count(2), 0u);  // step 0 is the default, left out
  const auto start = fields(event_session_start(21, 2.0));
  EXPECT_EQ(start.find(2)->second, "21");
  EXPECT_EQ(fields(start.find(7)->second).find(1)->second, "1");  // SessionLog.status = START
}

TEST(TensorBoardEvents, MetricsLineToFile) {
  TempDir dir;
  const std::string tb = (dir.path() / "tb").string();
  std::string file;
  {
    TensorBoardEvents events(tb, 20);
    file = events.path();
    events.write_metrics_line(R"({"step": 21, "loss": 2.5, "skipped": true, "loss_knowledge": null, "note": "x",)"
                              R"( "per_lang": {"de": 0.25}})");
    events.write_metrics_line(R"({"eval_loss": 1.0})");  // no step: ignored
  }
  EXPECT_EQ(std::filesystem::path(file).parent_path(), tb);
  EXPECT_EQ(std::filesystem::path(file).filename().string().rfind("events.out.tfevents.", 0), 0u);
  std::ifstream in(file, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string all = bytes.str();
  std::vector<std::multimap<uint32_t, std::string>> records;
  for (size_t at = 0; at < all.size();) {
    const auto n = fixed<uint64_t>(all.substr(at, 8));
    records.push_back(fields(all.substr(at + 12, n)));
    at += 16 + n;
  }
  ASSERT_EQ(records.size(), 5u);  // version, session start, loss, skipped, per_lang/de
  EXPECT_EQ(records[1].find(2)->second, "21");
  std::map<std::string, float> scalars;
  for (size_t i = 2; i < records.size(); ++i) {
    EXPECT_EQ(records[i].find(2)->second, "21");
    const auto value = fields(fields(records[i].find(5)->second).find(1)->second);
    scalars[value.find(1)->second] = fixed<float>(value.find(2)->second);
  }
  EXPECT_EQ(scalars, (std::map<std::string, float>{{"loss", 2.5f}, {"per_lang/de", 0.25f}, {"skipped", 1.0f}}));
}

TEST(TensorBoardEvents, RefusesAFile) {
  TempDir dir;
  const std::string file = (dir.path() / "plain").string();
  std::ofstream(file) << "x";
  EXPECT_THROW(TensorBoardEvents events(file), Error);
  EXPECT_EQ(tensorboard_subdir("", "seed-1"), "");
  EXPECT_EQ(tensorboard_subdir("/dev/null", "seed-1"), "/dev/null");
  EXPECT_EQ(tensorboard_subdir("runs/tb", "seed-1"), "runs/tb/seed-1");
}

// TensorBoard reads event files in name order: a run resumed within the same second as the run
// before it (or with a pid of more digits) must still come after it (cli_tensorboard once failed so).
TEST(TensorBoardEvents, ANewFileSortsAfterTheDirectorysEarlierOnes) {
  TempDir dir;
  const auto later =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count() +
      100;
  const std::string earlier = "events.out.tfevents." + std::to_string(later) + ".zzzz.99999";
  std::ofstream(dir.path() / earlier) << "";
  std::ofstream(dir.path() / "events.out.tfevents.notanumber.host.1") << "";
  { TensorBoardEvents first(dir.path().string()); }
  { TensorBoardEvents second(dir.path().string()); }
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    if (entry.path().filename().string().find("notanumber") == std::string::npos)
      names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[0], earlier);
  EXPECT_EQ(names[1].substr(0, names[1].find('.', 20)), "events.out.tfevents." + std::to_string(later + 1));
  EXPECT_EQ(names[2].substr(0, names[2].find('.', 20)), "events.out.tfevents." + std::to_string(later + 2));
}

}  // namespace
}  // namespace kglm::train
