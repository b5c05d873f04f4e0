#include <bzlib.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "core/atomic_file.hpp"
#include "core/byte_scan.hpp"
#include "core/cli.hpp"
#include "core/error.hpp"
#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"
#include "core/line_shard.hpp"
#include "core/ordered_pipeline.hpp"
#include "core/output_stream.hpp"
#include "core/rng.hpp"
#include "core/shipped_data.hpp"
#include "core/stats.hpp"
#include "temp_dir.hpp"
#include "test_paths.hpp"

namespace kglm {
namespace {

std::string sample_text() {
  std::string s;
  for (int i = 0; i < 20000; ++i) s += "line " + std::to_string(i) + " ünïcödé \xe4\xb8\xad\n";
  return s;
}

std::string read_all(const std::string& path) {
  InputStream in(path);
  std::string out;
  char buf[4096];
  while (size_t n = in.read(buf, sizeof buf)) out.append(buf, n);
  return out;
}

class CompressionRoundTrip : public ::testing::TestWithParam<std::pair<const char*, Compression>> {};

TEST_P(CompressionRoundTrip, WritesBySuffixAndDetectsByMagic) {
  test::ScratchDir dir;
  auto [suffix, kind] = GetParam();
  std::string path = dir.file(std::string("data") + suffix);
  const std::string text = sample_text();
  {
    OutputStream out(path);
    out.write(text.substr(0, 1000));
    out.write(text.substr(1000));
    out.close();
  }
  InputStream probe(path);
  EXPECT_EQ(probe.compression(), kind);
  EXPECT_EQ(read_all(path), text);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, CompressionRoundTrip,
                         ::testing::Values(std::make_pair(".txt", Compression::plain),
                                           std::make_pair(".gz", Compression::gzip),
                                           std::make_pair(".bz2", Compression::bzip2),
                                           std::make_pair(".zst", Compression::zstd)),
                         [](const auto& info) { return std::string(compression_name(info.param.second)); });

TEST(InputStream, ReadsConcatenatedGzipMembers) {
  test::ScratchDir dir;
  for (const char* part : {"a.gz", "b.gz"}) {
    OutputStream out(dir.file(part));
    out.write(std::string(part) + "\n");
    out.close();
  }
  std::string both = test::read_file(dir.file("a.gz")) + test::read_file(dir.file("b.gz"));
  std::ofstream(dir.file("ab.gz"), std::ios::binary) << both;
  EXPECT_EQ(read_all(dir.file("ab.gz")), "a.gz\nb.gz\n");
}

TEST(InputStream, TruncatedStreamThrowsAfterDeliveringItsData) {
  test::ScratchDir dir;
  // bzip2 decodes whole 900 kB blocks, so the text spans several blocks.
  const std::string text = sample_text() + sample_text() + sample_text() + sample_text();
  for (const char* suffix : {".gz", ".bz2", ".zst"}) {
    std::string path = dir.file(std::string("t") + suffix);
    OutputStream out(path);
    out.write(text);
    out.close();
    std::string bytes = test::read_file(path);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() * 2 / 3);
    InputStream in(path);
    std::string got;
    char buf[1024];
    EXPECT_THROW(
        {
          while (size_t n = in.read(buf, sizeof buf)) got.append(buf, n);
        },
        Error)
        << suffix;
    EXPECT_GT(got.size(), 0u) << suffix;
    EXPECT_EQ(got, text.substr(0, got.size())) << suffix;
  }
}

TEST(InputStream, ReadsARangeOfBzip2StreamsFoundFromAnyOffset) {
  test::ScratchDir dir;
  std::vector<std::string> texts;
  std::vector<uint64_t> starts;
  std::string file;
  for (int i = 0; i < 4; ++i) {  // streams of one and of several 900 kB blocks
    texts.push_back(i == 2 ? sample_text() + sample_text() + sample_text() + sample_text() + sample_text()
                           : "stream " + std::to_string(i) + "\n" + sample_text().substr(0, 1000u * (i + 1)));
    OutputStream out(dir.file("s.bz2"));
    out.write(texts.back());
    out.close();
    starts.push_back(file.size());
    file += test::read_file(dir.file("s.bz2"));
  }
  starts.push_back(file.size());
  std::ofstream(dir.file("all.bz2"), std::ios::binary) << file;
  InputStream in(dir.file("all.bz2"));
  ASSERT_TRUE(in.splittable());
  for (size_t k = 0; k + 1 < starts.size(); ++k) {
    EXPECT_EQ(in.next_stream_start(starts[k]), starts[k]);
    EXPECT_EQ(in.next_stream_start(starts[k] + 1), starts[k + 1]);
    EXPECT_EQ(in.next_stream_start((starts[k] + starts[k + 1]) / 2), starts[k + 1]);
  }
  for (auto [first, last] : {std::pair{1, 3}, {0, 4}, {3, 4}, {2, 2}}) {
    in.read_range(starts[first], starts[last]);
    std::string got, want;
    char buf[4096];
    while (size_t n = in.read(buf, sizeof buf)) got.append(buf, n);
    for (int k = first; k < last; ++k) want += texts[k];
    EXPECT_EQ(got, want) << first << ".." << last;
  }
  EXPECT_THROW(in.read_range(starts[1], file.size() + 1), Error);
  std::ofstream(dir.file("plain.txt"), std::ios::binary) << "0123456789<page>abc<page>";
  InputStream plain(dir.file("plain.txt"));
  EXPECT_EQ(plain.next_occurrence(0, "<page>"), 10u);
  EXPECT_EQ(plain.next_occurrence(11, "<page>"), 19u);
  EXPECT_EQ(plain.next_occurrence(20, "<page>"), 25u);  // none: the file size
  plain.read_range(3, 12);
  char buf[32];
  EXPECT_EQ(std::string(buf, plain.read(buf, sizeof buf)), "3456789<p");
}

// One bzip2 stream of 100k blocks (bzip2 -1), as libbz2 writes it.
std::string bzip2_of(const std::string& text) {
  std::string out(text.size() + text.size() / 100 + 600, '\0');
  auto n = static_cast<unsigned>(out.size());
  EXPECT_EQ(BZ2_bzBuffToBuffCompress(out.data(), &n, const_cast<char*>(text.data()), static_cast<unsigned>(text.size()),
                                     1, 0, 0),
            BZ_OK);
  out.resize(n);
  return out;
}

std::string numbers_text(size_t bytes, uint64_t seed) {
  std::string text;
  Rng rng(seed, 0);
  while (text.size() < bytes) text += std::to_string(rng.next_u64()) + (rng.next_u64() % 7 ? " " : "\n");
  return text;
}

// Decodes path on `threads` threads, as the tools do after sniffing its head.
void expect_decoded_in_parallel(const std::string& path, const std::string& text, unsigned threads) {
  InputStream in(path);
  in.peek(100);
  in.decode_in_parallel(threads);
  std::string got;
  char buf[70000];
  while (size_t n = in.read(buf, sizeof buf)) got.append(buf, n);
  EXPECT_EQ(got, text) << path << " on " << threads << " threads";
  EXPECT_EQ(in.raw_bytes_read(), std::filesystem::file_size(path));
}

TEST(InputStream, DecodesManyBzip2StreamsInParallelInOrder) {
  test::ScratchDir dir;
  std::string text, file;
  Rng rng(7, 0);
  for (int stream = 0; stream < 40; ++stream) {  // ~2 MB of bzip2: 8 segments and more
    std::string part;
    while (part.size() < 100000) part += std::to_string(rng.next_u64()) + (rng.next_u64() % 7 ? " " : "\n");
    OutputStream out(dir.file("s.bz2"));
    out.write(part);
    out.close();
    text += part;
    file += test::read_file(dir.file("s.bz2"));
  }
  std::ofstream(dir.file("all.bz2"), std::ios::binary) << file;
  for (unsigned threads : {2u, 4u}) expect_decoded_in_parallel(dir.file("all.bz2"), text, threads);
  std::ofstream(dir.file("cut.bz2"), std::ios::binary) << file.substr(0, file.size() * 2 / 3);
  InputStream cut(dir.file("cut.bz2"));
  cut.decode_in_parallel(3);
  std::string got;
  char buf[4096];
  EXPECT_THROW(
      {
        while (size_t n = cut.read(buf, sizeof buf)) got.append(buf, n);
      },
      Error);
  EXPECT_GT(got.size(), text.size() / 2);
  EXPECT_EQ(got, text.substr(0, got.size()));
}

TEST(InputStream, DecodesTheBlocksOfOneBzip2StreamInParallel) {
  test::ScratchDir dir;
  const std::string text = numbers_text(3 << 20, 11);  // ~30 blocks, ~1.4 MB of bzip2: 6 segments
  const std::string file = bzip2_of(text);
  std::ofstream(dir.file("one.bz2"), std::ios::binary) << file;
  for (unsigned threads : {2u, 3u}) expect_decoded_in_parallel(dir.file("one.bz2"), text, threads);
  // A damaged block: the error names its byte, and what came before it is the text's prefix.
  std::string damaged = file;
  damaged[damaged.size() * 3 / 5] ^= 0x55;
  std::ofstream(dir.file("damaged.bz2"), std::ios::binary) << damaged;
  InputStream in(dir.file("damaged.bz2"));
  in.decode_in_parallel(2);
  std::string got;
  char buf[4096];
  try {
    while (size_t n = in.read(buf, sizeof buf)) got.append(buf, n);
    ADD_FAILURE() << "a damaged block decoded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt bzip2 block at byte "), std::string::npos) << e.what();
  }
  EXPECT_GT(got.size(), text.size() / 4);
  EXPECT_EQ(got, text.substr(0, got.size()));
}

// The lines a shard of a bzip2 file reads (read_block_range), by the rule a plain file's byte
// range follows: those that start in its share, the one through the byte before left out.
std::string lines_of_block_range(const std::string& path, uint64_t begin, uint64_t end, unsigned threads) {
  InputStream in(path);
  in.read_block_range(begin, end, threads);
  std::string data;
  char buf[50000];
  // Read until the share's end is known and the line that starts before it has ended.
  while (in.block_range_end() == UINT64_MAX || data.find('\n', in.block_range_end()) == std::string::npos) {
    const size_t n = in.read(buf, sizeof buf);
    if (n == 0) break;
    data.append(buf, n);
  }
  size_t from = 0;
  if (in.block_range_prefix() == 1) from = data.find('\n') + 1;  // the line through the byte before
  size_t to = std::min<uint64_t>(in.block_range_end(), data.size());
  if (to > from && to < data.size()) to = data.find('\n', to - 1) + 1;  // through the line running over
  return to > from ? data.substr(from, to - from) : "";
}

TEST(InputStream, ShardsOfABzip2FileReadTheirBlocksAndTogetherAllLines) {
  test::ScratchDir dir;
  // One stream of many blocks, and many streams cut in the middle of lines (as pbzip2 cuts).
  const std::string text = numbers_text(2 << 20, 5);
  std::string many;
  for (size_t at = 0; at < text.size(); at += 300001) many += bzip2_of(text.substr(at, 300001));
  std::ofstream(dir.file("one.bz2"), std::ios::binary) << bzip2_of(text);
  std::ofstream(dir.file("many.bz2"), std::ios::binary) << many;
  for (const char* name : {"one.bz2", "many.bz2"}) {
    const std::string path = dir.file(name);
    const uint64_t size = std::filesystem::file_size(path);
    for (uint64_t shards : {1u, 3u, 8u, 60u}) {  // 60: more shards than blocks, some empty
      std::string got;
      for (uint64_t i = 0; i < shards; ++i) {
        got += lines_of_block_range(path, size * i / shards, size * (i + 1) / shards, i % 2 + 1);
      }
      EXPECT_EQ(got.size(), text.size()) << name << " " << shards;
      EXPECT_TRUE(got == text) << name << " in " << shards << " shards";
    }
  }
  std::ofstream(dir.file("plain.txt")) << "a\nb\n";
  EXPECT_THROW(InputStream(dir.file("plain.txt")).read_block_range(0, 2, 1), Error);
}

// The lines of a shard's ranges, read through InputStream as a tool reads them.
std::string read_line_shard(const std::vector<LineShardRange>& ranges) {
  std::string got;
  for (const LineShardRange& r : ranges) {
    if (r.begin == r.end) continue;
    InputStream in(r.path);
    restrict_to_line_range(in, r);
    char buf[97];
    while (size_t n = in.read(buf, sizeof buf)) got.append(buf, n);
  }
  return got;
}

TEST(LineShard, PartsConcatenateToTheInputsAndKeepGroupsWhole) {
  test::ScratchDir dir;
  // Three files: lines of varied length, an empty file, a last line without its newline; a line is
  // "key:payload", and the lines of one key are a group.
  std::string a, c;
  for (int i = 0; i < 300; ++i) a += "k" + std::to_string(i / 7) + ":" + std::string(i % 23, 'x') + "\n";
  for (int i = 0; i < 40; ++i) c += "c" + std::to_string(i / 3) + ":" + std::string(i * 5 % 61, 'y') + "\n";
  c += "last:no newline";
  std::ofstream(dir.file("a.jsonl"), std::ios::binary) << a;
  std::ofstream(dir.file("b.jsonl"), std::ios::binary) << "";
  std::ofstream(dir.file("c.jsonl"), std::ios::binary) << c;
  std::string z;  // a compressed file: one unit, read whole by one part
  for (int i = 0; i < 200; ++i) z += "z" + std::to_string(i / 4) + ":" + std::string(i % 17, 'z') + "\n";
  OutputStream gz(dir.file("z.jsonl.gz"));
  gz.write(z);
  gz.close();
  const std::vector<std::string> inputs = {dir.file("a.jsonl"), dir.file("b.jsonl"), dir.file("z.jsonl.gz"),
                                           dir.file("c.jsonl")};
  const SameGroup by_key = [](std::string_view p, std::string_view l) {
    return p.substr(0, p.find(':')) == l.substr(0, l.find(':'));
  };
  for (uint32_t n : {1u, 2u, 5u, 13u, 64u, 700u}) {
    for (const SameGroup& group : {SameGroup(), by_key}) {
      std::string all;
      std::set<std::string> keys_seen;
      for (uint32_t i = 0; i < n; ++i) {
        const std::string part = read_line_shard(line_shard_ranges(inputs, Shard{i, n}, group));
        EXPECT_TRUE(part.empty() || all.empty() || all.back() == '\n') << n;
        if (group && !part.empty()) {  // the part's first key is new: no group was cut
          const std::string key = part.substr(0, part.find(':'));
          EXPECT_TRUE(keys_seen.insert(key).second) << key << " in two parts of " << n;
          for (size_t at = part.find('\n'); at != std::string::npos && at + 1 < part.size();
               at = part.find('\n', at + 1))
            keys_seen.insert(part.substr(at + 1, part.find(':', at + 1) - at - 1));
        }
        all += part;
      }
      EXPECT_EQ(all, a + z + c) << n << (group ? " groups" : "");
    }
  }
  // A part after the first names where its line numbers count from.
  const std::vector<LineShardRange> ranges = line_shard_ranges(inputs, Shard{1, 2});
  InputStream in(ranges[0].path);
  restrict_to_line_range(in, ranges[0]);
  EXPECT_NE(in.name().find("(from byte " + std::to_string(ranges[0].begin) + ")"), std::string::npos) << in.name();
  // Compressed files and stdin are refused.
  // The compressed file is in one part only, whole.
  size_t holders = 0;
  for (uint32_t i = 0; i < 7; ++i) {
    const LineShardRange r = line_shard_ranges(inputs, Shard{i, 7})[2];
    holders += r.begin < r.end;
    EXPECT_TRUE(r.begin == r.end || (r.begin == 0 && r.end == std::filesystem::file_size(r.path)));
  }
  EXPECT_EQ(holders, 1u);
  EXPECT_THROW(line_shard_ranges({"-"}, Shard{0, 2}), UsageError);
}

TEST(InputStream, MissingFileIsAnError) { EXPECT_THROW(InputStream("/nonexistent/kglm/file"), Error); }

TEST(AtomicPath, NothingUnderTheFinalNameUntilCommit) {
  test::ScratchDir dir;
  std::string path = dir.file("out.txt");
  {
    OutputStream out(path);
    out.write("partial");
    EXPECT_FALSE(std::filesystem::exists(path));
  }  // destroyed without close(): abandoned
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir.file("")));
  OutputStream out(path);
  out.write("done");
  out.close();
  EXPECT_EQ(test::read_file(path), "done");
}

// Plain files are memory-mapped, compressed ones streamed: both must cut the same lines.
TEST(LineBatcher, BatchesHoldWholeLinesWithCorrectLineNumbers) {
  test::ScratchDir dir;
  std::string text;
  for (int i = 1; i <= 5000; ++i) text += "L" + std::to_string(i) + std::string(i % 97, 'x') + "\n";
  text += "last-without-newline";
  for (const char* name : {"lines.txt", "lines.txt.gz"}) {
    OutputStream out(dir.file(name));
    out.write(text);
    out.close();
    InputStream in(dir.file(name));
    LineBatcher batcher(in, 1000);
    LineBatch batch;
    std::string joined;
    uint64_t expected_line = 1;
    int batches = 0;
    while (batcher.next(batch)) {
      ++batches;
      EXPECT_EQ(batch.first_line, expected_line) << name;
      std::string_view lines = batch.lines();
      ASSERT_FALSE(lines.empty());
      EXPECT_EQ(lines.substr(0, 1), "L");
      EXPECT_EQ(lines.substr(1, std::to_string(expected_line).size()), std::to_string(expected_line));
      expected_line += std::count(lines.begin(), lines.end(), '\n');
      // Parsers may read kPadding bytes past the lines.
      EXPECT_GE(batch.end_of_storage(), lines.data() + lines.size() + LineBatch::kPadding) << name;
      joined.append(lines);
      batcher.recycle(std::move(batch));
      batch = LineBatch();
    }
    EXPECT_GT(batches, 10) << name;
    EXPECT_EQ(joined, text) << name;
    EXPECT_EQ(batcher.lines_seen(), 5001u) << name;
  }
}

TEST(Rng, CounterBasedStreamsAreReproducibleAndIndependent) {
  Rng a(42, 7), b(42, 7), c(42, 8), d(43, 7);
  std::vector<uint64_t> va, vb, vc, vd;
  for (int i = 0; i < 100; ++i) {
    va.push_back(a.next_u64());
    vb.push_back(b.next_u64());
    vc.push_back(c.next_u64());
    vd.push_back(d.next_u64());
  }
  EXPECT_EQ(va, vb);
  EXPECT_NE(va, vc);
  EXPECT_NE(va, vd);
  Rng r(1, 1);
  std::vector<int> counts(6);
  for (int i = 0; i < 60000; ++i) {
    uint64_t x = r.below(6);
    ASSERT_LT(x, 6u);
    ++counts[x];
    double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
  for (int n : counts) EXPECT_NEAR(n, 10000, 500);
}

TEST(ErrorCounter, ThrowsOnlyPastTheLimit) {
  ErrorCounter errors(2, 0);
  errors.record("f", 1, "bad");
  errors.record("f", 2, "bad");
  EXPECT_EQ(errors.count(), 2u);
  EXPECT_THROW(errors.record("f", 3, "bad"), Error);
  EXPECT_EQ(location("f.json", 12), "f.json:12: ");
}

TEST(OrderedPipeline, ConsumesInProductionOrderWithManyWorkers) {
  for (unsigned workers : {1u, 2u, 7u}) {
    int next = 0;
    std::vector<int> consumed;
    run_ordered_pipeline<int, int>(
        workers, 5, [&](int& item) { return next < 1000 ? (item = next++, true) : false; },
        [](unsigned, int& item, int& result) {
          if (item % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
          result = item * 2;
        },
        [&](int& r) { consumed.push_back(r); });
    ASSERT_EQ(consumed.size(), 1000u);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(consumed[i], 2 * i);
  }
}

TEST(OrderedPipeline, PropagatesWorkerExceptions) {
  int next = 0;
  auto run = [&] {
    run_ordered_pipeline<int, int>(
        2, 4, [&](int& item) { return next < 100 ? (item = next++, true) : false; },
        [](unsigned, int& item, int& r) {
          if (item == 50) throw Error("boom");
          r = item;
        },
        [](int&) {});
  };
  EXPECT_THROW(run(), Error);
}

// Tasks of very unequal output (task 3 yields 20,000 chunks) come out in task order, chunk by chunk,
// while no more than max_tasks * max_chunks chunks wait at any time; consume returning false stops
// every task; an exception in a task is rethrown.
TEST(OrderedStreams, TaskOrderBoundedWaitingEarlyStopAndExceptions) {
  for (unsigned workers : {1u, 3u}) {
    int next = 0;
    std::atomic<int> waiting{0}, most_waiting{0};
    std::vector<std::pair<int, int>> consumed;
    auto work = [&](unsigned, int& task, const std::function<bool(std::pair<int, int> &&)>& emit) {
      const int chunks = task == 3 ? 20000 : task % 5;
      for (int c = 0; c < chunks; ++c) {
        const int now = ++waiting;
        for (int seen = most_waiting; now > seen && !most_waiting.compare_exchange_weak(seen, now);) {
        }
        if (!emit({task, c})) return;
      }
    };
    run_ordered_streams<int, std::pair<int, int>>(
        workers, 4, 2, [&](int& task) { return next < 40 ? (task = next++, true) : false; }, work,
        [&](std::pair<int, int>& chunk) {
          --waiting;
          consumed.push_back(chunk);
          return true;
        });
    ASSERT_TRUE(std::is_sorted(consumed.begin(), consumed.end())) << workers;
    EXPECT_EQ(consumed.size(), 20000u + 8 * (1 + 2 + 3 + 4) - 3) << workers;
    // Waiting: the slots' chunks, one being emitted per worker, one being consumed.
    EXPECT_LE(most_waiting.load(), 4 * 2 + static_cast<int>(workers) + 1) << workers;

    next = 0;
    size_t taken = 0;
    run_ordered_streams<int, std::pair<int, int>>(
        workers, 4, 2, [&](int& task) { return next < 40 ? (task = next++, true) : false; }, work,
        [&](std::pair<int, int>&) { return ++taken < 100; });
    EXPECT_EQ(taken, 100u);
  }
  int next = 0;
  auto failing = [&] {
    run_ordered_streams<int, int>(
        2, 4, 2, [&](int& task) { return next < 100 ? (task = next++, true) : false; },
        [](unsigned, int& task, const std::function<bool(int&&)>& emit) {
          if (task == 50) throw Error("boom");
          emit(int(task));
        },
        [](int&) { return true; });
  };
  EXPECT_THROW(failing(), Error);
}

// --threads' default: OMP_NUM_THREADS when it is a positive number, else the CPUs of the affinity
// mask (what a Slurm job or taskset allows), not every core of the node.
TEST(DefaultThreads, OmpNumThreadsThenTheAffinityMask) {
  const char* saved = std::getenv("OMP_NUM_THREADS");
  std::string kept = saved ? saved : "";
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const unsigned cpus = CPU_COUNT(&allowed);
  setenv("OMP_NUM_THREADS", "3", 1);
  EXPECT_EQ(default_threads(), 3u);
  setenv("OMP_NUM_THREADS", "5,2", 1);  // nested levels: the outer one
  EXPECT_EQ(default_threads(), 5u);
  for (const char* ignored : {"0", "-2", "many", "", "4x"}) {
    setenv("OMP_NUM_THREADS", ignored, 1);
    EXPECT_EQ(default_threads(), cpus) << ignored;
  }
  unsetenv("OMP_NUM_THREADS");
  EXPECT_EQ(default_threads(), cpus);
  // One CPU allowed (taskset -c, a Slurm cpuset): one thread, whatever the machine has.
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) {
      CPU_SET(cpu, &one);
      break;
    }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(default_threads(), 1u);
  ASSERT_EQ(sched_setaffinity(0, sizeof allowed, &allowed), 0);
  if (saved) setenv("OMP_NUM_THREADS", kept.c_str(), 1);
}

TEST(Stats, JsonRoundTrip) {
  Stats s;
  s.add("labels_en", 3);
  s.add("labels_en");
  s.set("errors", 0);
  Stats back = Stats::from_json(s.to_json());
  EXPECT_EQ(back.values(), s.values());
  EXPECT_EQ(back.get("labels_en"), 4);
}

// The shipped data beside the executable (BUILD/share/kglm/data for a build tree, PREFIX/share/kglm/data
// installed): a data option's value is taken as given when it exists, else looked up there when
// relative; otherwise a usage error names both places.
TEST(ShippedData, ValuesResolveFromTheWorkingDirectoryThenBesideTheExecutable) {
  namespace fs = std::filesystem;
  const fs::path shipped = shipped_data_dir();
  ASSERT_FALSE(shipped.empty()) << "no share/kglm/data beside this test binary";
  EXPECT_TRUE(fs::exists(shipped / "templates" / "en.jsonl"));
  testing::TempDir dir;
  const fs::path before = fs::current_path();
  fs::current_path(dir.path());
  EXPECT_EQ(find_data_path("templates", "templates"), (shipped / "templates").string());
  EXPECT_EQ(find_data_path("elmo/options-small.json", "options"), (shipped / "elmo" / "options-small.json").string());
  fs::create_directory(dir.path() / "templates");  // a folder of that name here comes first
  EXPECT_EQ(find_data_path("templates", "templates"), "templates");
  EXPECT_EQ(find_data_path("", "questions"), "");  // not given
  try {
    find_data_path("no-such-templates", "templates");
    ADD_FAILURE() << "a missing value was accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--templates no-such-templates: not found here nor in the shipped data (" + shipped.string() + ")");
  }
  EXPECT_THROW(find_data_path("/no/such/questions", "questions"), UsageError);  // absolute: never looked up
  fs::current_path(before);
}

}  // namespace
}  // namespace kglm

TEST(ByteScan, AgreesWithScalarSearchAtEveryOffsetAndLength) {
  kglm::Rng rng(7, 0, 0);
  const kglm::ByteSet set("[]'&", false);
  const kglm::ByteSet controls("\"\\", true);
  for (int trial = 0; trial < 2000; ++trial) {
    size_t n = rng.below(100);
    std::string buffer(n + kglm::ByteSet::kPadding, '[');  // padding full of members: must be ignored
    for (size_t i = 0; i < n; ++i) buffer[i] = "ab ['&]\"\\\n\x01\xc3"[rng.below(12)];
    std::string_view s(buffer.data(), n);
    size_t pos = n == 0 ? 0 : rng.below(n);
    size_t expected = pos;
    while (expected < n && !set.contains(s[expected])) ++expected;
    EXPECT_EQ(set.find(s, pos), expected);
    EXPECT_EQ(set.find_padded(s, pos), expected);
    size_t expected_control = pos;
    while (expected_control < n && !controls.contains(s[expected_control])) ++expected_control;
    EXPECT_EQ(controls.find(s, pos), expected_control);
    size_t pair = 0;
    while (pair + 1 < n && !(s[pair] == ' ' && s[pair + 1] == ' ')) ++pair;
    if (pair + 1 >= n) pair = n;
    std::fill(buffer.begin() + static_cast<long>(n), buffer.end(), ' ');
    EXPECT_EQ(kglm::find_repeated(s, ' '), pair);
    EXPECT_EQ(kglm::find_repeated_padded(s, ' '), pair);
  }
}
