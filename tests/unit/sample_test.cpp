// lib/sample: the α rule and plan, selection sampling, the external shuffle, batch-level language
// sampling, and reading corpus records.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "core/error.hpp"
#include "core/output_stream.hpp"
#include "core/rng.hpp"
#include "sample/corpus.hpp"
#include "sample/external_shuffle.hpp"
#include "sample/language_sampler.hpp"
#include "sample/plan.hpp"
#include "sample/record_selector.hpp"
#include "test_paths.hpp"

namespace kglm::sample {
namespace {

std::vector<LanguageSize> sizes_of(std::initializer_list<std::pair<const char*, uint64_t>> list) {
  std::vector<LanguageSize> out;
  for (auto& [lang, n] : list) out.push_back({lang, n, n});
  return out;
}

std::map<std::string, uint64_t> targets(const Plan& plan) {
  std::map<std::string, uint64_t> out;
  for (const PlanRow& r : plan.rows) out[r.lang] = r.target;
  return out;
}

TEST(SmoothedDistribution, HandComputedValues) {
  // p = (0.9, 0.1); p^0.5 = (0.948683, 0.316228) -> q = (0.75, 0.25).
  std::vector<double> q = smoothed_distribution(std::vector<double>{9, 1}, 0.5);
  EXPECT_NEAR(q[0], 0.75, 1e-12);
  EXPECT_NEAR(q[1], 0.25, 1e-12);
  q = smoothed_distribution(std::vector<double>{600, 300, 100}, 1.0);
  EXPECT_NEAR(q[0], 0.6, 1e-12);
  EXPECT_NEAR(q[2], 0.1, 1e-12);
  q = smoothed_distribution(std::vector<double>{600, 0, 100}, 0.0);
  EXPECT_NEAR(q[0], 0.5, 1e-12);
  EXPECT_EQ(q[1], 0.0);  // an empty language is never sampled, even at α = 0
  EXPECT_THROW(smoothed_distribution(std::vector<double>{0, 0}, 0.5), Error);
  EXPECT_THROW(smoothed_distribution(std::vector<double>{1, 2}, -0.1), UsageError);
}

TEST(Plan, AlphaOneKeepsProportions) {
  Plan plan = make_plan(SizeUnit::lines, sizes_of({{"en", 1000}, {"de", 300}, {"sw", 7}}), PlanOptions{});
  for (const PlanRow& r : plan.rows) {
    EXPECT_EQ(r.target, r.units) << r.lang;
    EXPECT_NEAR(r.q, r.p, 1e-12);
    EXPECT_DOUBLE_EQ(r.ratio, 1.0);
  }
  PlanOptions half;
  half.total = 1307 / 2;
  plan = make_plan(SizeUnit::lines, sizes_of({{"en", 1000}, {"de", 300}, {"sw", 7}}), half);
  EXPECT_EQ(plan.total_target(), 653u);
  for (const PlanRow& r : plan.rows) EXPECT_LE(std::abs(static_cast<double>(r.target) - r.units * 653.0 / 1307), 1.0);
}

TEST(Plan, AlphaZeroEqualises) {
  PlanOptions o;
  o.alpha = 0;
  o.total = 3000;
  auto t = targets(make_plan(SizeUnit::lines, sizes_of({{"en", 100000}, {"de", 500}, {"sw", 20}}), o));
  EXPECT_EQ(t["en"], 1000u);
  EXPECT_EQ(t["de"], 1000u);
  EXPECT_EQ(t["sw"], 1000u);
}

TEST(Plan, TotalIsMetExactly) {
  Rng rng(7, 0);
  for (int round = 0; round < 200; ++round) {
    std::vector<LanguageSize> sizes;
    size_t langs = 1 + rng.below(30);
    for (size_t i = 0; i < langs; ++i) {
      uint64_t n = rng.below(4) == 0 ? rng.below(10) : rng.below(10000000);
      sizes.push_back({"l" + std::to_string(i), n, n});
    }
    if (std::all_of(sizes.begin(), sizes.end(), [](auto& s) { return s.units == 0; })) sizes[0].units = 1;
    PlanOptions o;
    o.alpha = rng.uniform() * 1.5;
    o.total = rng.below(100000000);
    Plan plan = make_plan(SizeUnit::tokens, sizes, o);
    ASSERT_EQ(plan.total_target(), *o.total) << "round " << round;
    for (const PlanRow& r : plan.rows) {
      EXPECT_LE(std::abs(static_cast<double>(r.target) - r.q * static_cast<double>(*o.total)), 1.0 + 1e-6);
      if (r.units == 0) {
        EXPECT_EQ(r.target, 0u);
      }
    }
  }
}

TEST(Plan, TruncateCutsToTheSmallest) {
  PlanOptions o;
  o.truncate = true;
  auto t = targets(make_plan(SizeUnit::lines, sizes_of({{"en", 5000}, {"de", 800}, {"yo", 120}, {"xx", 0}}), o));
  EXPECT_EQ(t["en"], 120u);
  EXPECT_EQ(t["de"], 120u);
  EXPECT_EQ(t["yo"], 120u);
  EXPECT_EQ(t["xx"], 0u);
  o.total = 10;
  EXPECT_THROW(make_plan(SizeUnit::lines, sizes_of({{"en", 5}}), o), UsageError);
}

TEST(Plan, KeepSmallestKeepsItWholeAndDownSamplesTheRest) {
  PlanOptions o;
  o.alpha = 0.3;
  o.keep_smallest = true;
  Plan plan = make_plan(SizeUnit::lines, sizes_of({{"en", 1000000}, {"fi", 40000}, {"sw", 1000}}), o);
  auto t = targets(plan);
  EXPECT_EQ(t["sw"], 1000u);
  for (const PlanRow& r : plan.rows) {
    EXPECT_LE(r.ratio, 1.0) << r.lang;  // α < 1: nothing is up-sampled under this convention
    EXPECT_NEAR(static_cast<double>(r.target), 1000.0 * r.q / plan.rows[2].q, 0.5 + 1e-9);
  }
  // The ratio n_i^α : n_j^α of the smoothed shares, here 1000^0.3 = 7.943.
  EXPECT_EQ(t["en"], static_cast<uint64_t>(std::llround(1000 * std::pow(1000.0, 0.3))));
}

TEST(Plan, StrongSkew) {
  // 1000:1 — α = 0.2 lifts the small language from 0.1% to (1/1000)^0.2 / (1 + (1/1000)^0.2) ≈ 20%.
  PlanOptions o;
  o.alpha = 0.2;
  o.total = 1001000;
  Plan plan = make_plan(SizeUnit::lines, sizes_of({{"big", 1000000}, {"small", 1000}}), o);
  double expected_small = std::pow(0.001, 0.2) / (1 + std::pow(0.001, 0.2));
  EXPECT_NEAR(plan.rows[1].q, expected_small, 1e-12);
  EXPECT_EQ(plan.rows[1].lang, "small");
  EXPECT_GT(plan.rows[1].ratio, 150.0);  // up-sampled some 200 times
  EXPECT_EQ(plan.total_target(), 1001000u);
}

TEST(Plan, RejectsDuplicatesAndNothing) {
  EXPECT_THROW(make_plan(SizeUnit::lines, {}, PlanOptions{}), Error);
  EXPECT_THROW(make_plan(SizeUnit::lines, sizes_of({{"en", 1}, {"en", 2}}), PlanOptions{}), Error);
  PlanOptions both;
  both.keep_smallest = true;
  both.total = 5;
  EXPECT_THROW(make_plan(SizeUnit::lines, sizes_of({{"en", 1}}), both), UsageError);
}

TEST(Plan, CountsFileRoundTrip) {
  test::ScratchDir dir;
  PlanOptions o;
  o.alpha = 0.4;
  std::vector<LanguageSize> sizes = {{"de", 12, 340}, {"en", 40, 9000}, {"yo", 3, 17}};
  Plan plan = make_plan(SizeUnit::tokens, sizes, o);
  OutputStream out(dir.file("plan.tsv"));
  out.write(format_plan(plan));
  out.close();
  std::vector<LanguageSize> back = read_counts(dir.file("plan.tsv"), SizeUnit::tokens);
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back[i].lang, sizes[i].lang);
    EXPECT_EQ(back[i].records, sizes[i].records);
    EXPECT_EQ(back[i].units, sizes[i].units);
  }
  try {
    read_counts(dir.file("plan.tsv"), SizeUnit::bytes);  // no bytes column
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("plan.tsv:1: "), std::string::npos) << e.what();
  }
  OutputStream bad(dir.file("bad.tsv"));
  bad.write("#lang\tlines\nen\t12\nde\t1x\n");
  bad.close();
  try {
    read_counts(dir.file("bad.tsv"), SizeUnit::lines);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.tsv:3: '1x' is not a count"), std::string::npos) << e.what();
  }
}

// Copies per record for a language of `sizes` with the given target.
std::vector<uint64_t> select(const std::vector<uint64_t>& sizes, uint64_t target, uint64_t seed) {
  uint64_t total = std::accumulate(sizes.begin(), sizes.end(), uint64_t{0});
  RecordSelector selector(total, target, seed, 99);
  std::vector<uint64_t> copies;
  for (uint64_t s : sizes) copies.push_back(selector.copies(s));
  return copies;
}

TEST(RecordSelector, LinesAreExactDownAndUp) {
  for (uint64_t n : {1u, 2u, 7u, 100u, 1001u}) {
    for (uint64_t target : {uint64_t{0}, uint64_t{1}, n / 2, n - 1, n, n + 1, 3 * n, 3 * n + n / 3, 250 * n}) {
      std::vector<uint64_t> copies = select(std::vector<uint64_t>(n, 1), target, n * 31 + target);
      EXPECT_EQ(std::accumulate(copies.begin(), copies.end(), uint64_t{0}), target) << n << " -> " << target;
      uint64_t whole = target / n;
      for (uint64_t c : copies) EXPECT_TRUE(c == whole || c == whole + 1);
    }
  }
}

TEST(RecordSelector, EveryRecordHasTheSameChance) {
  const size_t n = 20;
  const uint64_t target = 5, trials = 20000;
  std::vector<uint64_t> chosen(n, 0);
  for (uint64_t seed = 0; seed < trials; ++seed) {
    std::vector<uint64_t> copies = select(std::vector<uint64_t>(n, 1), target, seed);
    for (size_t i = 0; i < n; ++i) chosen[i] += copies[i];
  }
  // Each record: Binomial(20000, 0.25), sd ≈ 61; 5 sd either side.
  for (size_t i = 0; i < n; ++i) EXPECT_NEAR(static_cast<double>(chosen[i]), trials * 0.25, 310.0) << "record " << i;
}

TEST(RecordSelector, WeightedEndsWithinOneRecordOfTheTarget) {
  Rng rng(3, 0);
  for (int round = 0; round < 300; ++round) {
    std::vector<uint64_t> sizes(1 + rng.below(500));
    for (auto& s : sizes) s = rng.below(60);  // zero-token records too
    uint64_t total = std::accumulate(sizes.begin(), sizes.end(), uint64_t{0});
    if (total == 0) continue;
    uint64_t target = rng.below(3 * total + 1);
    std::vector<uint64_t> copies = select(sizes, target, static_cast<uint64_t>(round));
    uint64_t written = 0;
    for (size_t i = 0; i < sizes.size(); ++i) written += copies[i] * sizes[i];
    uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
    EXPECT_LE(std::abs(static_cast<double>(written) - static_cast<double>(target)), static_cast<double>(largest))
        << "round " << round;
  }
}

TEST(RecordSelector, SeededAndDeterministic) {
  std::vector<uint64_t> ones(1000, 1);
  EXPECT_EQ(select(ones, 300, 5), select(ones, 300, 5));
  EXPECT_NE(select(ones, 300, 5), select(ones, 300, 6));
}

std::vector<std::string> shuffled(const std::vector<std::string>& records, size_t memory, uint64_t seed,
                                  uint64_t* runs = nullptr) {
  test::ScratchDir dir;
  ExternalShuffle shuffle(dir.file(""), memory, seed, 1);
  for (const std::string& r : records) shuffle.add(r);
  if (runs) *runs = shuffle.runs_spilled();
  OutputStream out(dir.file("out.txt"));
  shuffle.finish(out);
  out.close();
  std::string text = test::read_file(dir.file("out.txt"));
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

TEST(ExternalShuffle, IsAPermutationInMemoryAndSpilled) {
  std::vector<std::string> records;
  for (int i = 0; i < 50000; ++i) records.push_back("record " + std::to_string(i) + std::string(i % 37, 'x'));
  records.push_back("");  // an empty record survives too
  for (size_t memory : {size_t{64} << 20, size_t{100} << 10}) {
    uint64_t runs = 0;
    std::vector<std::string> out = shuffled(records, memory, 11, &runs);
    if (memory < (1 << 20)) {
      EXPECT_GT(runs, 10u);
    } else {
      EXPECT_EQ(runs, 0u);
    }
    EXPECT_NE(out, records);
    std::vector<std::string> a = out, b = records;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b) << "memory " << memory;
    EXPECT_EQ(out, shuffled(records, memory, 11));  // seeded
  }
}

TEST(ExternalShuffle, SpilledOrderIsUniform) {
  // 8 records of 100 bytes with a 250-byte budget: runs of 2, merged. Where does record 0 land?
  std::vector<std::string> records;
  for (int i = 0; i < 8; ++i) records.push_back(std::to_string(i) + std::string(99, 'a' + i));
  std::vector<int> position(8, 0);
  std::map<std::string, int> first_pairs;
  const int trials = 8000;
  for (int seed = 0; seed < trials; ++seed) {
    std::vector<std::string> out = shuffled(records, 250, static_cast<uint64_t>(seed));
    position[std::find(out.begin(), out.end(), records[0]) - out.begin()]++;
    first_pairs[out[0].substr(0, 1) + out[1].substr(0, 1)]++;
  }
  for (int p = 0; p < 8; ++p) EXPECT_NEAR(position[p], trials / 8.0, 150.0) << "position " << p;  // sd ≈ 30
  EXPECT_EQ(first_pairs.size(), 56u);  // every ordered pair of distinct records can open the stream
  for (auto& [pair, count] : first_pairs) EXPECT_NEAR(count, trials / 56.0, 75.0) << pair;  // sd ≈ 12
}

TEST(LanguageSampler, FrequenciesFollowTheSmoothedShares) {
  std::vector<double> sizes = {1e6, 5e4, 1e3, 0};
  LanguageSampler sampler({"en", "fi", "sw", "xx"}, sizes, 0.3, 42);
  std::vector<int> count(4, 0);
  const int batches = 200000;
  for (int b = 0; b < batches; ++b) count[sampler.pick(static_cast<uint64_t>(b))]++;
  for (size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(count[i] / static_cast<double>(batches), sampler.probabilities()[i], 0.005) << i;
  EXPECT_EQ(count[3], 0);
  EXPECT_EQ(sampler.pick(12345), sampler.pick(12345));
  LanguageSampler again({"en", "fi", "sw", "xx"}, sizes, 0.3, 42);
  for (uint64_t b = 0; b < 100; ++b) EXPECT_EQ(sampler.pick(b), again.pick(b));  // a resumed run agrees
}

TEST(Corpus, SuffixesAndSources) {
  EXPECT_EQ(file_suffix("data/de.txt.gz"), ".txt.gz");
  EXPECT_EQ(file_suffix("wiki.de.jsonl"), ".jsonl");
  EXPECT_EQ(file_suffix("/a.b/corpus"), "");
  EXPECT_EQ(file_suffix("x.zst"), ".zst");
  test::ScratchDir dir;
  std::filesystem::create_directories(dir.file("corpus"));
  for (const char* name : {"en.txt", "de.txt.gz", ".hidden", "fr.txt.tmp.123"}) {
    OutputStream out(dir.file("corpus/") + name);
    out.write("a line\n");
    out.close();
  }
  auto sources = resolve_sources({dir.file("corpus"), "yo=" + dir.file("corpus/en.txt"), "mixed.jsonl"});
  ASSERT_EQ(sources.size(), 4u);
  EXPECT_EQ(sources[0].lang, "de");
  EXPECT_EQ(sources[0].suffix, ".txt.gz");
  EXPECT_EQ(sources[1].lang, "en");
  EXPECT_EQ(sources[2].lang, "yo");
  EXPECT_EQ(sources[3].lang, "");
  EXPECT_THROW(resolve_sources({"e n=x"}), UsageError);
  EXPECT_THROW(resolve_sources({"en="}), UsageError);
}

TEST(Corpus, WhitespaceTokens) {
  EXPECT_EQ(count_whitespace_tokens(""), 0u);
  EXPECT_EQ(count_whitespace_tokens("   "), 0u);
  EXPECT_EQ(count_whitespace_tokens("a"), 1u);
  EXPECT_EQ(count_whitespace_tokens(" two\twords\r\n"), 2u);
  EXPECT_EQ(count_whitespace_tokens("ein\xc2\xa0Wort"), 2u);                       // U+00A0 no-break space
  EXPECT_EQ(count_whitespace_tokens("\xe6\x97\xa5\xe3\x80\x80\xe6\x9c\xac"), 2u);  // U+3000 ideographic space
  EXPECT_EQ(count_whitespace_tokens("a\xe2\x80\x8b"
                                    "b"),
            1u);  // U+200B zero width space is not
  EXPECT_EQ(count_whitespace_tokens("a\xe2\x80\x8a"
                                    "b\xe2\x80\xaf"
                                    "c"),
            3u);                                       // U+200A, U+202F
  EXPECT_EQ(count_whitespace_tokens("\xe2\x80"), 1u);  // a truncated sequence is a word
}

TEST(Corpus, ScansJsonlRecordsAndReportsBadOnes) {
  test::ScratchDir dir;
  OutputStream out(dir.file("mixed.jsonl"));
  out.write(
      "{\"lang\":\"de\",\"text\":\"ein zwei drei\",\"n\":7}\n"
      "\n"
      "{\"lang\":\"en\",\"text\":\"one\\ttwo\"}\n"
      "not json\n"
      "{\"text\":\"no language\"}\n"
      "{\"lang\":\"fr\",\"text\":\"\"}\n");
  out.close();
  for (unsigned threads : {1u, 3u}) {
    RecordScanOptions o;
    o.unit = SizeUnit::tokens;
    o.threads = threads;
    o.batch_bytes = 16;  // several batches
    std::vector<std::string> seen;
    std::vector<uint64_t> bad_lines;
    ScanCallbacks on;
    on.record = [&](const ScannedRecord& r) {
      seen.push_back(std::string(r.lang) + ":" + std::to_string(r.units) + "@" + std::to_string(r.line));
    };
    on.bad = [&](uint64_t line, std::string_view) { bad_lines.push_back(line); };
    uint64_t empty = scan_records({"", dir.file("mixed.jsonl"), ".jsonl", ""}, o, on);
    EXPECT_EQ(empty, 1u);
    EXPECT_EQ(seen, (std::vector<std::string>{"de:3@1", "en:2@3", "fr:0@6"}));
    EXPECT_EQ(bad_lines, (std::vector<uint64_t>{4, 5}));
    // The counting form: the same sizes per language, the same bad lines.
    std::map<std::string, std::pair<uint64_t, uint64_t>> totals;
    bad_lines.clear();
    ScanCallbacks count;
    count.totals = [&](std::string_view lang, uint64_t records, uint64_t units) {
      totals[std::string(lang)].first += records;
      totals[std::string(lang)].second += units;
    };
    count.bad = on.bad;
    scan_records({"", dir.file("mixed.jsonl"), ".jsonl", ""}, o, count);
    EXPECT_EQ(totals,
              (std::map<std::string, std::pair<uint64_t, uint64_t>>{{"de", {1, 3}}, {"en", {1, 2}}, {"fr", {1, 0}}}));
    EXPECT_EQ(bad_lines, (std::vector<uint64_t>{4, 5}));
  }
  RecordScanOptions counted;
  counted.unit = SizeUnit::tokens;
  counted.token_field = "n";
  std::vector<uint64_t> units, bad;
  ScanCallbacks on;
  on.record = [&](const ScannedRecord& r) { units.push_back(r.units); };
  on.bad = [&](uint64_t line, std::string_view) { bad.push_back(line); };
  scan_records({"de", dir.file("mixed.jsonl"), ".jsonl", ""}, counted, on);
  EXPECT_EQ(units, (std::vector<uint64_t>{7}));
  EXPECT_EQ(bad, (std::vector<uint64_t>{3, 4, 5, 6}));
  // A mixed stream must be JSONL.
  OutputStream text(dir.file("plain.txt"));
  text.write("just text\n");
  text.close();
  EXPECT_THROW(scan_records({"", dir.file("plain.txt"), ".txt", ""}, RecordScanOptions{}, on), Error);
}

}  // namespace
}  // namespace kglm::sample
