// The reliability policy of lib/core (man 7 kglm): error limits, input sniffing, output targets,
// atomic replacement and stale temporaries. The whole-tool matrix is tests/cli/bad_input.sh.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/json_writer.hpp"
#include "core/output_lock.hpp"
#include "core/output_stream.hpp"
#include "core/output_target.hpp"
#include "core/temporaries.hpp"
#include "temp_dir.hpp"

namespace kglm {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void spit(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(ErrorLimit, ParsesCountsAndRates) {
  EXPECT_EQ(ErrorLimit::parse("7").count, 7u);
  EXPECT_LT(ErrorLimit::parse("7").rate, 0);
  EXPECT_DOUBLE_EQ(ErrorLimit::parse("1%").rate, 0.01);
  EXPECT_DOUBLE_EQ(ErrorLimit::parse("0.5%").rate, 0.005);
  EXPECT_EQ(ErrorLimit::parse("2.5%").to_string(), "2.5%");
  for (const char* bad : {"", "%", "-1", "x", "1.5", "101%", "nan%", "-3%", "5 %"})
    EXPECT_THROW(ErrorLimit::parse(bad), UsageError) << bad;
}

TEST(ErrorCounter, RateIsCheckedOnceAThousandRecordsAreSeen) {
  ErrorCounter errors(ErrorLimit::parse("1%"), 0);
  for (int i = 0; i < 20; ++i) errors.record("f", i + 1, "bad");  // 20 of 20: too early to judge
  errors.add_valid(979);                                          // 20 of 999: still early
  EXPECT_THROW(errors.add_valid(1), Error);                       // 20 of 1000 > 1%
  ErrorCounter fine(ErrorLimit::parse("1%"), 0);
  fine.add_valid(990);
  for (int i = 0; i < 10; ++i) fine.record("f", i + 1, "bad");  // 10 of 1000 = 1%: allowed
  EXPECT_NO_THROW(fine.finish("f"));
}

TEST(ErrorCounter, AllBadFailsAndEmptyPasses) {
  ErrorCounter all_bad(100, 0);
  all_bad.record("in.jsonl", 1, "not JSON");
  all_bad.record("in.jsonl", 2, "not JSON");
  try {
    all_bad.finish("in.jsonl");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "in.jsonl: no valid record; all 2 were bad (the first: in.jsonl:1: not JSON)");
  }
  ErrorCounter empty(100, 0);
  EXPECT_NO_THROW(empty.finish("in.jsonl"));
  ErrorCounter some(100, 0);
  some.record("in.jsonl", 1, "bad");
  some.add_valid();
  EXPECT_NO_THROW(some.finish("in.jsonl"));
}

TEST(InputKind, ClassifiesHeads) {
  using std::string_view_literals::operator""sv;
  EXPECT_EQ(classify_input(""), InputKind::empty);
  EXPECT_EQ(classify_input("\x89HDF\r\n\x1a\n\0\0"sv), InputKind::hdf5);
  EXPECT_EQ(classify_input("  <mediawiki>"), InputKind::xml);
  EXPECT_EQ(classify_input("\xef\xbb\xbf{\"a\":1}\n"), InputKind::json);
  EXPECT_EQ(classify_input("[\n{"), InputKind::json);
  EXPECT_EQ(classify_input("Q42\tDouglas Adams\n"), InputKind::text);
  EXPECT_EQ(classify_input("caf\xe9 latin-1 text\n"), InputKind::text);  // not UTF-8, still text
  EXPECT_EQ(classify_input("ab\0cd"sv), InputKind::binary);
  EXPECT_EQ(classify_input("\xff\xfe<\0m\0"sv), InputKind::xml);  // UTF-16 LE XML
  EXPECT_EQ(classify_input("\xff\xfeh\0i\0"sv), InputKind::utf16_text);
  EXPECT_EQ(classify_input("<\0?\0x\0m\0l\0"sv), InputKind::xml);  // UTF-16 LE XML, no BOM
  EXPECT_EQ(classify_input("\0<\0?\0x"sv), InputKind::xml);        // UTF-16 BE XML, no BOM
  std::string controls(200, 'a');
  for (size_t i = 0; i < controls.size(); i += 10) controls[i] = '\x01';
  EXPECT_EQ(classify_input(controls), InputKind::binary);
}

TEST(InputKind, PeekedBytesAreReadAgainAndWrongKindsNamed) {
  testing::TempDir dir;
  const fs::path p = dir.path() / "store.h5";
  std::string bytes("\x89HDF\r\n\x1a\n", 8);
  bytes += std::string(100000, 'x');
  spit(p, bytes);
  InputStream in(p.string());
  try {
    require_input_kind(in, {InputKind::json}, "JSON lines");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), p.string() + ": is an HDF5 file; expected JSON lines");
  }
  std::string back(bytes.size() + 10, '\0');
  size_t got = 0;
  while (size_t n = in.read(back.data() + got, back.size() - got)) got += n;
  EXPECT_EQ(back.substr(0, got), bytes);
  EXPECT_EQ(describe_file((dir.path() / "missing").string()), "No such file or directory");
}

TEST(OutputTarget, ClassifiesPaths) {
  testing::TempDir dir;
  EXPECT_EQ(resolve_output("-").kind, OutputTarget::Kind::standard_output);
  OutputTarget fresh = resolve_output((dir.path() / "new.jsonl").string());
  EXPECT_EQ(fresh.kind, OutputTarget::Kind::file);
  EXPECT_FALSE(fresh.exists);
  spit(dir.path() / "target.txt", "old");
  fs::create_directory(dir.path() / "sub");
  fs::create_symlink("../target.txt", dir.path() / "sub" / "link.txt");
  OutputTarget link = resolve_output((dir.path() / "sub" / "link.txt").string());
  EXPECT_EQ(link.kind, OutputTarget::Kind::file);
  EXPECT_EQ(fs::canonical(link.path), fs::canonical(dir.path() / "target.txt"));
  ASSERT_EQ(::mkfifo((dir.path() / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(resolve_output((dir.path() / "fifo").string()).kind, OutputTarget::Kind::stream);
  OutputTarget fd = resolve_output("/dev/fd/2");
  EXPECT_EQ(fd.kind, OutputTarget::Kind::stream);
  EXPECT_EQ(fd.inherited_fd, 2);
  EXPECT_THROW(resolve_output(dir.path().string()), Error);
  fs::create_symlink("loop", dir.path() / "loop");
  EXPECT_THROW(resolve_output((dir.path() / "loop").string()), Error);
}

TEST(AtomicOutput, NothingVisibleBeforeCommitAndLinksSurvive) {
  testing::TempDir dir;
  spit(dir.path() / "target.txt", "old");
  ::chmod((dir.path() / "target.txt").c_str(), 0640);
  fs::create_symlink("target.txt", dir.path() / "link.txt");
  {
    OutputStream out((dir.path() / "link.txt").string());
    out.write("new contents\n");
    size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++entries;
    EXPECT_EQ(entries, 2u) << "a temporary is visible while writing";
    EXPECT_EQ(slurp(dir.path() / "target.txt"), "old");
    out.close();
  }
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link.txt"));
  EXPECT_EQ(slurp(dir.path() / "target.txt"), "new contents\n");
  EXPECT_EQ(fs::status(dir.path() / "target.txt").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  {
    OutputStream abandoned((dir.path() / "target.txt").string());
    abandoned.write("never seen");
  }
  EXPECT_EQ(slurp(dir.path() / "target.txt"), "new contents\n");
}

TEST(AtomicOutput, StreamTargetsAreWrittenInPlace) {
  testing::TempDir dir;
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A reader on the FIFO, as a shell pipeline would have.
  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  {
    AtomicPath path(fifo.string());  // a file written by name (HDF5): copied in on commit
    spit(path.temp(), "hdf5 bytes");
    path.commit();
  }
  char buf[64];
  ssize_t n = ::read(reader, buf, sizeof buf);
  ::close(reader);
  ASSERT_EQ(n, 10);
  EXPECT_EQ(std::string(buf, 10), "hdf5 bytes");
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(Temporaries, StaleOnesOfDeadProcessesAreRemoved) {
  testing::TempDir dir;
  const fs::path out = dir.path() / "kg.h5";
  // A pid that cannot be running: above the kernel's pid_max.
  spit(dir.path() / "kg.h5.tmp.99999999", "left by SIGKILL");
  fs::create_directory(dir.path() / "kg.h5.tmp.99999998");
  spit(dir.path() / ("kg.h5.tmp." + std::to_string(::getpid())), "ours");
  spit(dir.path() / "kg.h5.tmp.1", "init is alive");
  spit(dir.path() / "kg.h5.tmp.x", "not a pid");
  spit(dir.path() / "other.h5.tmp.99999999", "another output");
  EXPECT_EQ(remove_stale_temporaries(out.string()), 2u);
  EXPECT_FALSE(fs::exists(dir.path() / "kg.h5.tmp.99999999"));
  EXPECT_FALSE(fs::exists(dir.path() / "kg.h5.tmp.99999998"));
  for (const char* kept : {"kg.h5.tmp.1", "kg.h5.tmp.x", "other.h5.tmp.99999999"})
    EXPECT_TRUE(fs::exists(dir.path() / kept)) << kept;
  EXPECT_TRUE(fs::exists(dir.path() / ("kg.h5.tmp." + std::to_string(::getpid()))));
}

// A directory output replaces only what is its own (man 7 kglm, OUTPUTS): missing, empty, or an
// earlier output of its kind (regular files, the marker among them).
TEST(DirectoryOutput, ReplacesOnlyEmptyDirectoriesAndEarlierOutputsOfItsKind) {
  testing::TempDir dir;
  const auto check = [](const fs::path& p) { check_directory_output(p, "model directory", "model.safetensors"); };
  EXPECT_NO_THROW(check(dir.path() / "new"));
  EXPECT_NO_THROW(check(dir.path() / "new" / "parents" / "too"));
  EXPECT_FALSE(fs::exists(dir.path() / "new"));  // checked, not made
  fs::create_directory(dir.path() / "empty");
  EXPECT_NO_THROW(check(dir.path() / "empty"));
  fs::create_directory(dir.path() / "ckpt");
  spit(dir.path() / "ckpt" / "model.safetensors", "w");
  spit(dir.path() / "ckpt" / "README", "notes");
  EXPECT_NO_THROW(check(dir.path() / "ckpt"));
  EXPECT_NO_THROW(check(dir.path() / "ckpt/"));
  fs::create_directory(dir.path() / "ckpt" / "sub");
  EXPECT_THROW(check(dir.path() / "ckpt"), Error);
  fs::create_directory(dir.path() / "papers");
  spit(dir.path() / "papers" / "draft.tex", "d");
  try {
    check(dir.path() / "papers");
    ADD_FAILURE() << "a directory without model.safetensors was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not a model directory (no model.safetensors)"), std::string::npos)
        << e.what();
  }
  spit(dir.path() / "plain", "a file");
  EXPECT_THROW(check(dir.path() / "plain"), Error);           // a file, not a directory
  EXPECT_THROW(check(dir.path() / "plain" / "ckpt"), Error);  // under a file: Not a directory
  EXPECT_THROW(check(""), Error);
  // Nothing left beside the outputs by the writability probe.
  for (const auto& entry : fs::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
}

TEST(DirectoryOutput, TrailingSlashesNameTheDirectory) {
  EXPECT_EQ(directory_output_path("ckpt/"), fs::path("ckpt"));
  EXPECT_EQ(directory_output_path("runs/exp1//"), fs::path("runs/exp1"));
  EXPECT_EQ(directory_output_path("/"), fs::path("/"));
  testing::TempDir dir;
  write_directory_atomically(dir.path() / "out/", "model directory", "model.safetensors",
                             [](const fs::path& tmp) { spit(tmp / "model.safetensors", "v1"); });
  EXPECT_EQ(slurp(dir.path() / "out" / "model.safetensors"), "v1");
  for (const auto& entry : fs::recursive_directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
}

// Two runs with one output (man 7 kglm, OUTPUTS): the second lock is refused naming the holder; the
// file goes with the lock, and a lock file that no process holds (left by SIGKILL) is taken over.
TEST(OutputLock, ASecondLockIsRefusedNamingTheHolder) {
  testing::TempDir dir;
  const fs::path out = dir.path() / "runs" / "ckpt";
  {
    OutputLock first(out, "model directory");
    EXPECT_EQ(first.path(), (fs::weakly_canonical(out).string() + ".lock"));
    EXPECT_NE(slurp(first.path()).find("pid " + std::to_string(::getpid())), std::string::npos);
    try {
      OutputLock second(out.string() + "/", "model directory");
      ADD_FAILURE() << "a second lock on the same output was taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("another run writes this model directory (host "), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("pid " + std::to_string(::getpid())), std::string::npos) << e.what();
    }
    OutputLock moved = std::move(first);
    EXPECT_TRUE(fs::exists(moved.path()));
  }
  EXPECT_FALSE(fs::exists(out.string() + ".lock"));
  spit(out.string() + ".lock", "host gone pid 1\n");  // stale: nobody holds it
  { OutputLock again(out, "model directory"); }
  EXPECT_FALSE(fs::exists(out.string() + ".lock"));
}

// A signal that arrives inside a CommitSection waits for it: both parts are put in place, then the
// run exits 143 (SIGTERM). Run in a child process, which the signal ends.
TEST(CommitSection, AnInterruptionWaitsForTheRenames) {
  testing::TempDir dir;
  const fs::path a = dir.path() / "docs.jsonl", b = dir.path() / "redirects.tsv";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    install_interrupt_cleanup();
    spit(a.string() + ".part", "new docs");
    spit(b.string() + ".part", "new redirects");
    const CommitSection together;
    if (::write(ready[1], "x", 1) != 1) ::_exit(2);
    ::usleep(300000);  // the SIGTERM arrives now
    fs::rename(a.string() + ".part", a);
    ::usleep(100000);
    fs::rename(b.string() + ".part", b);
    // the section ends here: the waiting signal thread exits with 143
  } else {
    char byte;
    ASSERT_EQ(::read(ready[0], &byte, 1), 1);
    ::kill(child, SIGTERM);
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 143) << status;
    EXPECT_EQ(slurp(a), "new docs");
    EXPECT_EQ(slurp(b), "new redirects");
  }
  if (child == 0) {
    ::sleep(5);  // the signal thread exits the process before this ends
    ::_exit(0);
  }
}

TEST(JsonNumbers, NonFiniteValuesAreNull) {
  EXPECT_EQ(json_number(0.25), "0.25");
  EXPECT_EQ(json_number(1.0 / 3, 17), "0.33333333333333331");
  EXPECT_EQ(json_fixed(-2.5, 2), "-2.50");
  for (double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    EXPECT_EQ(json_number(bad), "null");
    EXPECT_EQ(json_fixed(bad, 6), "null");
  }
  EXPECT_EQ(json_fixed(1e300, 1).size(), 303u);  // the widest %f fits
}

}  // namespace
}  // namespace kglm
