// The probe's parts with hand-worked expectations: cloze realisation of every markup kind, the
// three decoding methods on a scripted model, answer matching, fact files and macro averaging.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "gen/inflection_tables.hpp"
#include "probe/cloze_decoder.hpp"
#include "probe/cloze_text.hpp"
#include "probe/probe_facts.hpp"
#include "probe/probe_scores.hpp"
#include "temp_dir.hpp"
#include "test_paths.hpp"

namespace {

using namespace kglm::probe;
using kglm::ErrorCounter;
using kglm::gen::Gender;
using kglm::gen::parse_template;
using kglm::gen::TemplateGaps;

kglm::gen::TemplateEntity entity(std::string label, Gender g = Gender::unknown) {
  kglm::gen::TemplateEntity e;
  e.label = std::move(label);
  e.gender = g;
  return e;
}

ClozeText cloze(std::string_view tpl, std::string_view lang, std::string_view subject, Gender g = Gender::unknown,
                TemplateGaps* gaps = nullptr, std::string_view object = "OBJ") {
  return fill_cloze(parse_template(tpl), lang, entity(std::string(subject), g), entity(std::string(object)), nullptr,
                    gaps);
}

TEST(Cloze, PlainSlots) {
  const ClozeText c = cloze("[X] was born in [Y] .", "en", "Douglas Adams");
  EXPECT_EQ(c.prefix, "Douglas Adams was born in");
  EXPECT_EQ(c.suffix, ".");
  // The object first (vi P103), and text attached to the slots (ko).
  const ClozeText vi = cloze("[Y] là ngôn ngữ bản địa của [X] .", "vi", "Hồ Chí Minh");
  EXPECT_EQ(vi.prefix, "");
  EXPECT_EQ(vi.suffix, "là ngôn ngữ bản địa của Hồ Chí Minh .");
  EXPECT_EQ(cloze("[X] is [Y] citizen .", "en", "Ada").suffix, "citizen .");
  const ClozeText ko = cloze("[X]는 [Y]에서 태어났다.", "ko", "세종");
  EXPECT_EQ(ko.prefix, "세종는");
  EXPECT_EQ(ko.suffix, "에서 태어났다.");
}

TEST(Cloze, GenderAlternativesFollowTheSubjectFirstFormByDefault) {
  const std::string fr = "[X] est [né;X-Gender=MASC|née;X-Gender=FEM] [PREPLOC;Y] [Y] .";
  EXPECT_EQ(cloze(fr, "fr", "Marie Curie", Gender::feminine).prefix, "Marie Curie est née en");
  EXPECT_EQ(cloze(fr, "fr", "Victor Hugo", Gender::masculine).prefix, "Victor Hugo est né en");
  EXPECT_EQ(cloze(fr, "fr", "Sacha", Gender::unknown).prefix, "Sacha est né en");  // the ending rule: masculine
  const std::string he = "[X] [נולד;X-Gender=MASC|נולדה;X-Gender=FEM] ב[Y] .";
  EXPECT_EQ(cloze(he, "he", "דנה", Gender::unknown).prefix, "דנה נולד ב");  // X-FACTR's default: the first
  const std::string ru = "[X.Nom] [родился;X-Gender=MASC|родилась;X-Gender=FEM|родилось;X-Gender=NEUT] в [Y.Loc] .";
  TemplateGaps gaps;
  EXPECT_EQ(cloze(ru, "ru", "Анна", Gender::feminine, &gaps, "Москва").prefix, "Анна родилась в");
  EXPECT_EQ(gaps.uninflected, 1);  // [Y.Loc] without tables; [X.Nom] is the plain form
  EXPECT_EQ(cloze(ru, "ru", "Оно", Gender::neuter).prefix, "Оно родилось в");
}

TEST(Cloze, TheAnswerIsTheObjectAsTheSlotWantsIt) {
  kglm::test::ScratchDir scratch;
  std::ofstream(scratch.file("rus")) << "Москва\tМоскве\tN;ESS;SG\n";
  const auto tables = kglm::gen::InflectionTables::load_dir(scratch.file(""), {"ru"});
  TemplateGaps gaps;
  const ClozeText c =
      fill_cloze(parse_template("[X.Nom] живёт в [Y.Ess] ."), "ru", entity("Анна"), entity("Москва"), &tables, &gaps);
  EXPECT_EQ(c.prefix, "Анна живёт в");
  EXPECT_EQ(c.object, "Москве");
  EXPECT_EQ(gaps.inflected, 1);
  // The Turkish copula is part of the object's form: X-FACTR masks "OBJ'dir" whole.
  const ClozeText tr = cloze("[X] meslek olarak [Y;be] .", "tr", "Orhan Pamuk", Gender::unknown, nullptr, "yazar");
  EXPECT_EQ(tr.suffix, ".");
  EXPECT_EQ(tr.object, "yazar'dır");
}

TEST(Cloze, FunctionWordsWithoutDataAreCounted) {
  TemplateGaps gaps;
  EXPECT_EQ(cloze("Официальный язык [X.Gen] — [Y.Nom] .", "ru", "Франция", Gender::unknown, &gaps).prefix,
            "Официальный язык Франция —");
  EXPECT_EQ(gaps.uninflected, 1);
  // Greek's PREPDEF has no nominative: left out and counted; its DEF agrees with the slot's case.
  gaps = {};
  EXPECT_EQ(cloze("[DEF;X] [X] [PREPDEF;Y] [Y] .", "el", "Αθήνα", Gender::feminine, &gaps).prefix, "η Αθήνα");
  EXPECT_EQ(gaps.missing_function_words, 1);
  gaps = {};
  EXPECT_EQ(cloze("[X] [NOSUCH;Y] [Y] .", "fr", "Canada", Gender::unknown, &gaps).prefix, "Canada");
  EXPECT_EQ(gaps.missing_function_words, 1);
  // French: no article before a name that is not a country (not a gap), "de" before it.
  gaps = {};
  EXPECT_EQ(
      cloze("La langue officielle [PREPDEF;X] [X] est [ARTDEF;Y] [Y] .", "fr", "Canada", Gender::unknown, &gaps).prefix,
      "La langue officielle de Canada est");
  EXPECT_EQ(gaps.missing_function_words, 0);
  EXPECT_EQ(fill_cloze(parse_template("[X] est [ARTIND;Y] [Y] de profession ."), "fr",
                       entity("Zola", Gender::masculine), entity("romancière", Gender::feminine))
                .prefix,
            "Zola est une");
}

TEST(Cloze, TemplateWithoutObjectIsRefused) { EXPECT_THROW(parse_template("[X] was born ."), kglm::Error); }

// A scripted model for three masks at positions 1..3 of [0, m, m, m, 2]: the guess at slot s is
// token 10·(1 + filled) + s with log-probability base[s] − 0.1·filled, where filled counts the
// cloze's slots holding a token; and slot 2 guesses 40 (log-probability −0.3) when slot 0 holds 20.
class ScriptedFiller final : public MaskFiller {
 public:
  static constexpr int32_t kMask = 99;
  void fill(std::span<const FillRequest> requests, std::vector<std::vector<TokenGuess>>& out) override {
    ++passes;
    out.assign(requests.size(), {});
    for (size_t i = 0; i < requests.size(); ++i) {
      const std::vector<int32_t>& ids = *requests[i].ids;
      int filled = 0;
      for (size_t p = 1; p + 1 < ids.size(); ++p) filled += ids[p] != kMask;
      for (int32_t p : requests[i].positions) {
        const int s = p - 1;
        TokenGuess g{10 * (1 + filled) + s, kBase[s] - 0.1 * filled};
        if (s == 2 && ids[1] == 20) g = {40, -0.3};
        out[i].push_back(g);
      }
    }
  }
  int32_t mask_id() const override { return kMask; }
  int passes = 0;

 private:
  static constexpr double kBase[3] = {-1.0, -0.5, -2.0};
};

ClozeCandidate three_masks() {
  ClozeCandidate c;
  c.ids = {0, 5, 5, 5, 2};  // the decoder writes the masks itself
  c.first = 1;
  c.masks = 3;
  return c;
}

std::vector<int32_t> run(DecodeMethod method, int32_t max_iter, int* passes = nullptr,
                         std::vector<double>* log_probs = nullptr, int32_t* refinements = nullptr) {
  ScriptedFiller filler;
  std::vector<ClozeCandidate> candidates{three_masks()};
  decode(method, filler, candidates, max_iter);
  if (passes) *passes = filler.passes;
  if (log_probs) *log_probs = candidates[0].log_probs;
  if (refinements) *refinements = candidates[0].refinements;
  // The sequence holds the prediction too.
  EXPECT_EQ(std::vector<int32_t>(candidates[0].ids.begin() + 1, candidates[0].ids.end() - 1), candidates[0].tokens);
  return candidates[0].tokens;
}

TEST(Decode, IndependentFillsEveryMaskInOnePass) {
  int passes = 0;
  std::vector<double> lp;
  EXPECT_EQ(run(DecodeMethod::independent, 10, &passes, &lp), (std::vector<int32_t>{10, 11, 12}));
  EXPECT_EQ(passes, 1);
  EXPECT_EQ(lp, (std::vector<double>{-1.0, -0.5, -2.0}));
}

TEST(Decode, OrderFillsLeftToRight) {
  int passes = 0;
  std::vector<double> lp;
  EXPECT_EQ(run(DecodeMethod::order, 10, &passes, &lp), (std::vector<int32_t>{10, 21, 32}));
  EXPECT_EQ(passes, 3);
  EXPECT_NEAR(lp[1], -0.6, 1e-12);
  EXPECT_NEAR(lp[2], -2.2, 1e-12);
}

TEST(Decode, ConfidenceFillsTheMostProbableThenRefinesTheLeast) {
  // Pass 1 fills slot 1 (−0.5) with 11; pass 2 slot 0 (−1.1 against −2.1) with 20; pass 3 slot 2,
  // which now sees 20 in slot 0: 40 (−0.3). Without refinement that is the answer.
  int passes = 0;
  int32_t refinements = -1;
  EXPECT_EQ(run(DecodeMethod::confidence, 0, &passes, nullptr, &refinements), (std::vector<int32_t>{20, 11, 40}));
  EXPECT_EQ(passes, 3);
  EXPECT_EQ(refinements, 0);
  // Refinement masks the least probable, slot 0 (−1.1): with two slots filled it becomes 30
  // (−1.2), a change; slot 0 is again the least probable and stays 30: stop.
  std::vector<double> lp;
  EXPECT_EQ(run(DecodeMethod::confidence, 10, &passes, &lp, &refinements), (std::vector<int32_t>{30, 11, 40}));
  EXPECT_EQ(passes, 5);
  EXPECT_EQ(refinements, 1);
  EXPECT_NEAR(lp[0], -1.2, 1e-12);
  // --max-iter 1 stops after the first change without asking again.
  EXPECT_EQ(run(DecodeMethod::confidence, 1, &passes, nullptr, &refinements), (std::vector<int32_t>{30, 11, 40}));
  EXPECT_EQ(passes, 4);
}

TEST(Decode, CandidatesOfDifferentLengthsAdvanceTogether) {
  ScriptedFiller filler;
  ClozeCandidate one;
  one.ids = {0, 5, 2};
  one.first = 1;
  one.masks = 1;
  std::vector<ClozeCandidate> candidates{one, three_masks()};
  decode(DecodeMethod::order, filler, candidates, 10);
  EXPECT_EQ(filler.passes, 3);  // the one-mask cloze rides in the first pass
  EXPECT_EQ(candidates[0].tokens, std::vector<int32_t>{10});
  EXPECT_EQ(candidates[1].tokens, (std::vector<int32_t>{10, 21, 32}));
  EXPECT_DOUBLE_EQ(candidates[1].score(false), -1.0 - 0.6 - 2.2);
  EXPECT_DOUBLE_EQ(candidates[1].score(true), (-1.0 - 0.6 - 2.2) / 3);
}

TEST(Decode, MethodNames) {
  for (DecodeMethod m : {DecodeMethod::independent, DecodeMethod::order, DecodeMethod::confidence})
    EXPECT_EQ(parse_decode_method(decode_method_name(m)), m);
  EXPECT_THROW(parse_decode_method("beam"), kglm::UsageError);
}

TEST(Answers, CaseFoldedWithSpacesNormalised) {
  EXPECT_EQ(normalize_answer("  São   PAULO "), "são paulo");
  EXPECT_EQ(normalize_answer("МОСКВА"), normalize_answer("Москва"));
  EXPECT_EQ(normalize_answer("ÉCOLE\tNormale"), "école normale");
  EXPECT_EQ(normalize_answer("Ὀδυσσεύς"), normalize_answer("ὀδυσσεύς"));
  EXPECT_NE(normalize_answer("Paris"), normalize_answer("Pariss"));
  EXPECT_EQ(normalize_answer(" \t "), "");
}

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(FactFiles, BadLinesAreSkippedWithTheirPlace) {
  kglm::testing::TempDir dir;
  write(
      dir.path() / "P19.jsonl",
      R"({"uuid": "a", "predicate_id": "P19", "sub_uri": "Q1", "sub_label": "One", "obj_uri": "Q2", "obj_label": "Two"})"
      "\n"
      R"({"predicate_id": "P19", "sub_uri": "Q3", "sub_label": "Three", "obj_uri": "Q4"})"
      "\n"
      "not json\n"
      R"({"predicate_id": "P20", "sub_uri": "Q5", "sub_label": "x", "obj_uri": "Q6", "obj_label": "y"})"
      "\n");
  write(dir.path() / "P36.jsonl.txt", "ignored\n");
  ErrorCounter errors(kglm::ErrorLimit(10), 0);
  const auto facts = read_xfactr_facts((dir.path() / "P19.jsonl").string(), 19, errors);
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0].object_label, "Two");
  EXPECT_EQ(errors.count(), 3u);
  EXPECT_EQ(fact_file_relation("P1412.jsonl.gz"), 1412u);
  EXPECT_EQ(fact_file_relation("P01.jsonl"), 0u);
  EXPECT_EQ(fact_file_relation("notes.jsonl"), 0u);
  const auto files = fact_files(dir.path().string(), {});
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].first, 19u);
  EXPECT_THROW(fact_files(dir.path().string(), {36}), kglm::Error);  // unknown relation
  // A file not named after its relation: each line's predicate_id says it.
  write(dir.path() / "mixed.jsonl",
        R"({"predicate_id": "P20", "sub_uri": "Q5", "sub_label": "x", "obj_uri": "Q6", "obj_label": "y"})"
        "\n"
        R"({"sub_uri": "Q5", "sub_label": "x", "obj_uri": "Q6", "obj_label": "y"})"
        "\n");
  const auto single = fact_files((dir.path() / "mixed.jsonl").string(), {});
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].first, 0u);
  const auto mixed = read_xfactr_facts(single[0].second, 0, errors);
  ASSERT_EQ(mixed.size(), 1u);
  EXPECT_EQ(mixed[0].relation, 20u);
  EXPECT_EQ(errors.count(), 4u);
  EXPECT_EQ(parse_relation_list("P19,36,P19"), (std::vector<uint64_t>{19, 36}));
  EXPECT_THROW(parse_relation_list("P19,,P36"), kglm::UsageError);
  EXPECT_THROW(parse_relation_list("Q5"), kglm::UsageError);
}

TEST(FactFiles, Aliases) {
  kglm::testing::TempDir dir;
  write(dir.path() / "en.txt", "Q2\tBlue Marble\tEarth\nQ5\n#comment\nnot-a-qid\tx\n");
  ErrorCounter errors(kglm::ErrorLimit(10), 0);
  AliasTable table;
  table.load((dir.path() / "en.txt").string(), errors);
  ASSERT_NE(table.find("Q2"), nullptr);
  EXPECT_EQ(*table.find("Q2"), (std::vector<std::string>{"Blue Marble", "Earth"}));
  EXPECT_EQ(table.find("Q7"), nullptr);
  EXPECT_EQ(errors.count(), 1u);
}

TEST(Scores, MacroAverageOverRelationsLeavesOutEmptyKinds) {
  RelationScore a{"independent", "en", 19}, b{"independent", "en", 36};
  // P19: 4 facts, 3 single (2 right), 1 multi (right): 75%; P36: 2 single, 1 right: 50%.
  a.add(true, true), a.add(true, true), a.add(true, false), a.add(false, true);
  b.add(true, true), b.add(true, false);
  const MacroScore m = macro_average({a, b});
  EXPECT_DOUBLE_EQ(*m.all, (0.75 + 0.5) / 2);
  EXPECT_DOUBLE_EQ(*m.single, (2.0 / 3 + 0.5) / 2);
  EXPECT_DOUBLE_EQ(*m.multi, 1.0);  // P36 has no multi-token fact: not a zero
  EXPECT_EQ(m.facts, 6);
  EXPECT_FALSE(macro_average({}).all.has_value());
}

}  // namespace
