// The neural verbaliser's parts: BLEU and chrF against values worked out by hand, the decoders on
// the reference T5 (tests/reference/data/t5-tiny: beam search with one beam is greedy decoding,
// sampling is seeded and independent of the batch, a sequence decodes alike alone and padded in a
// batch), and the records' reader (bad triples skipped with a count).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "nn/cuda/runtime.hpp"
#include "nn/t5_checkpoint.hpp"
#include "unit/test_paths.hpp"
#include "verbalize/decoding.hpp"
#include "verbalize/text_metrics.hpp"
#include "verbalize/verbalizer_records.hpp"

using namespace kglm;
using namespace kglm::verbalize;
namespace fs = std::filesystem;

namespace {

TEST(Bleu, TokenizesLike13a) {
  EXPECT_EQ(bleu_tokens("He was born in 1879, in Ulm (Germany)."),
            (std::vector<std::string>{"He", "was", "born", "in", "1879", ",", "in", "Ulm", "(", "Germany", ")", "."}));
  EXPECT_EQ(
      bleu_tokens("3.5 million, 1,000 people; 1939-1945 German-born"),
      (std::vector<std::string>{"3.5", "million", ",", "1,000", "people", ";", "1939", "-", "1945", "German-born"}));
  // 13a unescapes four HTML entities and drops "<skipped>"; words split on Unicode whitespace (no-break
  // space, ideographic space), as sacreBLEU's str.split() does.
  EXPECT_EQ(bleu_tokens("AT&amp;T<skipped> a\u00a0b\u3000c "),
            (std::vector<std::string>{"AT", "&", "T", "a", "b", "c"}));
}

// Two sentences worked out by hand. "the cat sat on the mat" against "the cat is on the mat":
// 1-grams 5/6 (the ×2, cat, on, mat), 2-grams 3/5 (the cat, on the, the mat), 3-grams 1/4 (on the
// mat), 4-grams 0/3; "a b c d e" against itself: 5/5, 4/4, 3/3, 2/2. Corpus: 10/11, 7/9, 4/7, 2/5,
// equal lengths (11), so BLEU = (10·7·4·2 / (11·9·7·5))^¼.
TEST(Bleu, CorpusScoreWorkedByHand) {
  BleuStats s;
  s.add("the cat sat on the mat", "the cat is on the mat");
  // No 4-gram matches yet: sacreBLEU's default "exp" smoothing counts the order as 1/(2·3).
  EXPECT_NEAR(s.score(), 100 * std::pow(5.0 / 6 * 3.0 / 5 * 1.0 / 4 * 1.0 / 6, 0.25), 1e-9);
  s.add("a b c d e", "a b c d e");
  EXPECT_EQ(s.matches, (std::array<int64_t, 4>{10, 7, 4, 2}));
  EXPECT_EQ(s.totals, (std::array<int64_t, 4>{11, 9, 7, 5}));
  EXPECT_NEAR(s.score(), 100 * std::pow(560.0 / 3465.0, 0.25), 1e-9);
  EXPECT_NEAR(s.score(), 63.4047, 1e-4);
  // A short hypothesis that matches everywhere pays the brevity penalty exp(1 − 6/4).
  BleuStats short_one;
  short_one.add("a b c d", "a b c d e f");
  EXPECT_NEAR(short_one.score(), 100 * std::exp(-0.5), 1e-9);
  BleuStats same;
  same.add("Douglas Adams was born in Cambridge.", "Douglas Adams was born in Cambridge.");
  EXPECT_NEAR(same.score(), 100, 1e-9);
}

// "ab" against "abc": 1-grams p 2/2, r 2/3; 2-grams p 1/1, r 1/2; longer orders: the hypothesis has
// none. P = 1, R = 7/12, F₂ = 5PR / (4P + R) = 35/55.
TEST(Chrf, ScoreWorkedByHand) {
  ChrfStats s;
  s.add("ab", "abc");
  EXPECT_NEAR(s.score(), 100 * 35.0 / 55.0, 1e-9);
  ChrfStats spaces;  // whitespace does not count
  spaces.add("a b  c", "abc");
  EXPECT_NEAR(spaces.score(), 100, 1e-9);
  ChrfStats none;
  none.add("xyz", "abc");
  EXPECT_EQ(none.score(), 0);
  ChrfStats short_reference;  // orders the reference lacks do not count the hypothesis's n-grams
  short_reference.add("abc", "a");
  EXPECT_EQ(short_reference.hypothesis[1], 0);
  EXPECT_NEAR(short_reference.score(), 100 * 5 * (1.0 / 3) / (4.0 / 3 + 1), 1e-9);
  ChrfStats unicode;  // characters, not bytes: "é" is one 1-gram
  unicode.add("é", "é");
  EXPECT_EQ(unicode.matches[0], 1);
  EXPECT_EQ(unicode.hypothesis[1], 0);
}

// --- decoding on the reference T5 ---------------------------------------------------------------

const fs::path kT5 = fs::path(kglm::test::source_dir()) / "tests/reference/data/t5-tiny";

struct Model {
  nn::T5Config config;
  nn::ParameterStore params;
  std::optional<nn::T5Model> model;
  explicit Model(nn::Device device = nn::Device::Cpu)
      : config(nn::read_t5_config(kT5 / "config.json")), params(device) {
    model.emplace(config, params);
    params.allocate(1, false);
    nn::load_t5_weights(kT5, params, config);
  }
};

// Random sources of different lengths, each ending with </s>.
std::vector<std::vector<int32_t>> sources(size_t n, uint64_t seed) {
  Rng rng(seed, 0);
  std::vector<std::vector<int32_t>> out;
  for (size_t i = 0; i < n; ++i) {
    std::vector<int32_t> s(3 + rng.below(8));
    for (int32_t& t : s) t = static_cast<int32_t>(2 + rng.below(62));
    s.back() = 1;
    out.push_back(s);
  }
  return out;
}

std::vector<std::vector<int32_t>> run(Model& m, const std::vector<std::vector<int32_t>>& src, DecodeOptions o,
                                      std::vector<uint64_t> keys = {}) {
  if (keys.empty())
    for (size_t i = 0; i < src.size(); ++i) keys.push_back(i);
  return decode(*m.model, make_source_batch(src), o, keys);
}

// Each decoding method with these settings (beams for beam search, seed for sampling).
std::vector<DecodeOptions> every_method(int64_t beams, int64_t max_len, uint64_t seed) {
  std::vector<DecodeOptions> out;
  for (DecodeMethod method : {DecodeMethod::Greedy, DecodeMethod::Beam, DecodeMethod::Sample}) {
    DecodeOptions o;
    o.method = method;
    o.beams = beams;
    o.max_len = max_len;
    o.seed = seed;
    out.push_back(o);
  }
  return out;
}

TEST(Decoding, OneBeamIsGreedy) {
  Model m;
  const auto src = sources(12, 1);
  DecodeOptions greedy;
  greedy.max_len = 12;
  DecodeOptions beam = greedy;
  beam.method = DecodeMethod::Beam;
  beam.beams = 1;
  const auto a = run(m, src, greedy), b = run(m, src, beam);
  EXPECT_EQ(a, b);
  size_t tokens = 0;
  for (const auto& s : a) tokens += s.size();
  EXPECT_GT(tokens, 12u) << "the outputs are (nearly) empty: the check proves little";
  // Wider beams give a sequence for every source, within the length limit, the same every time.
  beam.beams = 4;
  const auto c = run(m, src, beam);
  EXPECT_EQ(c, run(m, src, beam));
  for (const auto& s : c) EXPECT_LE(s.size(), 12u);
}

TEST(Decoding, ASequenceDecodesAloneAsInABatch) {
  Model m;
  const auto src = sources(6, 2);
  for (const DecodeOptions& o : every_method(3, 10, 9)) {
    const auto batch = run(m, src, o);
    for (size_t i = 0; i < src.size(); ++i)
      EXPECT_EQ(run(m, {src[i]}, o, {i})[0], batch[i]) << "method " << int(o.method) << " source " << i;
  }
}

TEST(Decoding, SamplingIsSeeded) {
  Model m;
  const auto src = sources(10, 3);
  DecodeOptions o;
  o.method = DecodeMethod::Sample;
  o.top_k = 20;
  o.temperature = 1.5;
  o.max_len = 10;
  o.seed = 4;
  const auto a = run(m, src, o);
  EXPECT_EQ(a, run(m, src, o));
  o.seed = 5;
  EXPECT_NE(a, run(m, src, o));
  // top-k 1 is greedy whatever the temperature.
  o.top_k = 1;
  DecodeOptions greedy;
  greedy.max_len = 10;
  EXPECT_EQ(run(m, src, o), run(m, src, greedy));
}

// Greedy, beam and sampled decoding on the GPU give the CPU's tokens (skipped without a GPU).
TEST(Decoding, CudaDecodesAsTheCpu) {
  if (!nn::cuda::available()) GTEST_SKIP() << nn::cuda::unavailable_reason();
  Model cpu, gpu(nn::Device::Cuda);
  const auto src = sources(16, 6);
  for (const DecodeOptions& o : every_method(4, 12, 2))
    EXPECT_EQ(run(gpu, src, o), run(cpu, src, o)) << "method " << int(o.method);
}

// --- records -------------------------------------------------------------------------------------

std::string write_temp(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("kglm-verbalize-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p) << text;
  return p.string();
}

TEST(Records, GenerationInputsSkipEmptySubgraphsAndMissingLabels) {
  const std::string path = write_temp(
      "inputs.jsonl", R"({"id":"a","triples":[["Ulm","country","Germany"]]})"
                      "\n"
                      R"({"id":"b","triples":[]})"
                      "\n"
                      R"({"id":"c","triples":[["Ulm","","Germany"]]})"
                      "\n"
                      R"({"id":"d","triples":[["Ulm","country"]]})"
                      "\n"
                      "not json\n"
                      R"({"id":"e","triples":[["X","r1","o1"],["X","o1 start time","1921"]],"sentence":"S."})"
                      "\n");
  ErrorCounter errors(ErrorLimit(100));
  Stats stats;
  const auto in = read_generation_inputs(path, errors, stats);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0].serialized, "Ulm country Germany");
  EXPECT_EQ(in[1].serialized, "X r1 o1, o1 start time 1921");
  EXPECT_EQ(in[1].reference, "S.");
  EXPECT_EQ(in[0].triples_json, R"([["Ulm","country","Germany"]])");
  EXPECT_EQ(stats.get("skipped_empty_subgraph"), 1);
  EXPECT_EQ(stats.get("skipped_missing_label"), 1);
  EXPECT_EQ(errors.count(), 2u);  // the two-member triple and the line that is not JSON
  fs::remove(path);
}

TEST(Records, TrainingPairsNeedBothSides) {
  const std::string path =
      write_temp("pairs.jsonl", R"({"serialized_triples":"Ulm country Germany","sentence":"Ulm is in Germany."})"
                                "\n"
                                R"({"serialized_triples":"","sentence":"x"})"
                                "\n"
                                R"({"sentence":"x"})"
                                "\n");
  ErrorCounter errors(ErrorLimit(100));
  const auto pairs = read_training_pairs(path, errors);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].target, "Ulm is in Germany.");
  EXPECT_EQ(errors.count(), 2u);
  fs::remove(path);
}

}  // namespace
