// Extractive QA: the SQuAD JSON reader (the fixtures' XQuAD, MLQA and TyDiQA-GoldP files read whole,
// bad questions reported with their place), the scores (hand-worked cases from the rules of SQuAD
// v1.1's and MLQA's evaluation scripts), the windows of run_qa (targets on the fixtures' real
// answers, the shared stride) and the decoding of the best span.
#include <gtest/gtest.h>

#include <filesystem>

#include "../../unit/test_paths.hpp"
#include "nn/model_config.hpp"
#include "tok/tokenizer.hpp"
#include "train/tasks/qa_scores.hpp"
#include "train/tasks/qa_windows.hpp"
#include "train/tasks/squad_reader.hpp"

namespace kglm::train::tasks {
namespace {

using test::ScratchDir;

std::string squad(QaRules r, const std::string& lang, const std::string& text) {
  return normalize_answer(text, r, lang);
}

TEST(QaScores, SquadNormalisationLowersDropsAsciiPunctuationArticlesAndSpaces) {
  const QaRules s = QaRules::squad;
  EXPECT_EQ(squad(s, "en", "The  Quick, brown fox!"), "quick brown fox");
  EXPECT_EQ(squad(s, "en", "another theory"), "another theory");  // articles only as whole words
  EXPECT_EQ(squad(s, "en", "A an THE a."), "");
  EXPECT_EQ(squad(s, "en", "state-of-the-art U.S."), "stateoftheart us");  // punctuation goes, no space put
  EXPECT_EQ(squad(s, "en", "«Paris»"), "«paris»");                         // not in string.punctuation
  EXPECT_EQ(squad(s, "en", "Über die Brücke"), "über die brücke");         // English articles only
  EXPECT_EQ(squad(s, "en", "x\u00a0y\u2003z\u200bw"), "x y z\u200bw");     // split() at White_Space only
  EXPECT_EQ(squad(s, "en", "\u0130stanbul"), "i\u0307stanbul");            // Python's full lower-casing
  EXPECT_EQ(squad(s, "en", "the_cat a1 an"), "thecat a1");                 // '_' is punctuation; "a1" is one word
}

TEST(QaScores, MlqaNormalisationDependsOnTheLanguage) {
  const QaRules m = QaRules::mlqa;
  EXPECT_EQ(squad(m, "de", "«Der Hund» des Mannes"), "hund mannes");
  EXPECT_EQ(squad(m, "de", "Die Einen"), "");
  EXPECT_EQ(squad(m, "es", "La casa, los perros"), "casa perros");
  EXPECT_EQ(squad(m, "vi", "cái bàn của tôi"), "bàn tôi");
  EXPECT_EQ(squad(m, "hi", "the भारत।"), "the भारत");  // no Hindi articles; । is punctuation (Po)
  EXPECT_EQ(squad(m, "en", "The “quoted” one"), "quoted one");
  // Arabic: every ال becomes a space, at a word's start or not.
  EXPECT_EQ(squad(m, "ar", "الكتاب قال"), "كتاب ق");
  // Chinese: each character of U+4E00–U+9FA5 a token, the rest split at white space.
  EXPECT_EQ(answer_tokens("北京大学abc def，２０１０年", m, "zh"),
            (std::vector<std::string>{"北", "京", "大", "学", "abc", "def２０１０", "年"}));  // ， (Po) is gone first
  EXPECT_EQ(squad(m, "el", "Η Αθήνα."), "η αθήνα");  // not one of MLQA's languages: no articles
}

TEST(QaScores, ExactMatchAndF1AsTheScriptsCountThem) {
  const QaRules s = QaRules::squad;
  EXPECT_EQ(answer_exact_match("the Cat.", "cat", s, "en"), 1.0);
  EXPECT_EQ(answer_exact_match("black cat", "cat", s, "en"), 0.0);
  EXPECT_NEAR(answer_f1("x b c", "b c d", s, "en"), 2.0 / 3, 1e-12);
  EXPECT_NEAR(answer_f1("cat cat", "cat", s, "en"), 2.0 / 3, 1e-12);  // shared tokens as a multiset
  EXPECT_EQ(answer_f1("dog", "cat", s, "en"), 0.0);
  EXPECT_EQ(answer_f1("", "cat", s, "en"), 0.0);
  // Both empty after normalisation: the same string (EM 1), but no shared token (F1 0), as v1.1.
  EXPECT_EQ(answer_exact_match("the", "a", s, "en"), 1.0);
  EXPECT_EQ(answer_f1("the", "a", s, "en"), 0.0);
  EXPECT_NEAR(answer_f1("北京大学", "北京", QaRules::mlqa, "zh"), 2 * 0.5 * 1 / 1.5, 1e-12);
  // The best over the gold answers; a question without gold is not scored; en by SQuAD's rules.
  const QaScores q =
      score_answers({"Paris", "«Berlin»", "x"}, {{"London", "paris"}, {"Berlin"}, {}}, {"en", "en", "en"});
  EXPECT_EQ(q.questions, 2);
  EXPECT_NEAR(q.exact_match, 0.5, 1e-12);
  const QaScores d = score_answers({"«Berlin»"}, {{"Berlin"}}, {"de"});
  EXPECT_EQ(d.exact_match, 1.0);
  EXPECT_EQ(qa_rules_for("en"), QaRules::squad);
  EXPECT_EQ(qa_rules_for(""), QaRules::squad);
  EXPECT_EQ(qa_rules_for("de"), QaRules::mlqa);
}

TEST(SquadReader, CodePointOffsets) {
  EXPECT_EQ(code_point_offset("aéb", 0), 0);
  EXPECT_EQ(code_point_offset("aéb", 2), 3);
  EXPECT_EQ(code_point_offset("aéb", 3), 4);
  EXPECT_EQ(code_point_offset("aéb", 4), -1);
  EXPECT_EQ(code_point_offset("北京", 1), 3);
}

TEST(SquadReader, ReportsBadQuestionsWithTheirPlaceAndKeepsTheRest) {
  ScratchDir dir;
  const std::string path = dir.write("q.json", R"({"version": "1.1", "data": [{"title": "T", "paragraphs": [
    {"context": "Zoë lives in Köln.", "qas": [
      {"id": "ok", "question": "Where?", "answers": [{"text": "Köln", "answer_start": 13}]},
      {"id": "far", "question": "Where?", "answers": [{"text": "Köln", "answer_start": 40}]},
      {"id": "wrong", "question": "Where?", "answers": [{"text": "Köln", "answer_start": 12}]},
      {"id": "noq", "answers": []},
      {"id": "open", "question": "Who?"}]},
    {"qas": []}]}]})");
  ErrorCounter errors(ErrorLimit{});
  const std::vector<QaExample> q = read_squad(path, errors);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].id, "ok");
  EXPECT_EQ(q[0].answers[0].begin, 14u);  // ë is two bytes
  EXPECT_EQ(q[0].context->substr(q[0].answers[0].begin, q[0].answers[0].end - q[0].answers[0].begin), "Köln");
  EXPECT_TRUE(q[1].answers.empty());  // no "answers": a question to answer
  EXPECT_EQ(errors.count(), 4u);
  EXPECT_THROW(read_squad(dir.write("none.json", R"({"version": "1.1", "data": []})"), errors), Error);
  EXPECT_THROW(read_squad(dir.write("other.json", R"({"rows": [1, 2]})"), errors), Error);
  EXPECT_THROW(read_squad(dir.write("text.txt", "question? answer\n"), errors), Error);
  EXPECT_THROW(read_squad(dir.write("broken.json", R"({"data": [)"), errors), Error);
}

// Predictions are {id: answer}: repeated ids are renamed (the first keeps its id, a name in use is
// skipped), or refused with --strict.
TEST(SquadReader, RepeatedIdsAreRenamedOrRefused) {
  ScratchDir dir;
  const std::string path = dir.write("repeats.json", R"({"data": [{"paragraphs": [{"context": "abc", "qas": [
      {"id": "q", "question": "1?"}, {"id": "q", "question": "2?"}, {"id": "q-2", "question": "3?"},
      {"id": "q", "question": "4?"}, {"id": "r", "question": "5?"}]}]}]})");
  ErrorCounter errors(ErrorLimit{});
  const std::vector<QaExample> q = read_squad(path, errors);
  std::vector<std::string> ids;
  for (const QaExample& e : q) ids.push_back(e.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"q", "q-3", "q-2", "q-4", "r"}));
  try {
    read_squad(path, errors, true);
    ADD_FAILURE() << "repeated ids accepted with strict";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("question id 'q' repeats (5 questions, 3 distinct ids)"), std::string::npos)
        << e.what();
  }
}

struct QaFixture {
  const char* path;
  size_t questions;
};

TEST(SquadReader, ReadsTheFixturesWhole) {
  for (const QaFixture& f :
       {QaFixture{"xquad/xquad.en.json", 1190}, QaFixture{"xquad/xquad.de.json", 1190},
        QaFixture{"xquad/xquad.el.json", 1190}, QaFixture{"mlqa/dev-context-en-question-en.json", 1148},
        QaFixture{"mlqa/dev-context-de-question-de.json", 512},
        QaFixture{"tydiqa/tydiqa.goldp.en.train.first500.json", 500}}) {
    const std::string path = test::fixture(f.path);
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
    ErrorCounter errors(ErrorLimit{});
    const std::vector<QaExample> q = read_squad(path, errors);
    EXPECT_EQ(q.size(), f.questions) << f.path;
    EXPECT_EQ(errors.count(), 0u) << f.path;
    for (const QaExample& e : q) {
      ASSERT_FALSE(e.answers.empty()) << f.path << " " << e.id;
      for (const QaAnswer& a : e.answers) EXPECT_EQ(e.context->substr(a.begin, a.end - a.begin), a.text);
    }
  }
}

// Every window of every XQuAD question, in three languages, with small windows (many per context):
// a window that holds the first answer points at the tokens that cover it, exactly; the others at
// the first token; consecutive windows share --doc-stride tokens; the last one reaches the end.
TEST(QaWindows, TargetsCoverTheAnswersOfTheFixtures) {
  const std::string spm = test::fixture("tokenizer/spm-test-vocab1000.model");
  if (!std::filesystem::exists(spm)) GTEST_SKIP() << spm << " not found";
  const auto tokenizer = tok::load_tokenizer(spm);
  const nn::ModelConfig config = nn::default_config(nn::Architecture::XlmRoberta, tokenizer->vocab_size());
  for (const char* lang : {"en", "de", "el"}) {
    const std::string path = test::fixture(std::string("xquad/xquad.") + lang + ".json");
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
    ErrorCounter errors(ErrorLimit{});
    const std::vector<QaExample> q = read_squad(path, errors);
    const QaWindowOptions options{24, 20};
    std::vector<EncodedExample> windows;
    EncodeReport report;
    for (size_t i = 0; i < q.size(); ++i)
      encode_qa_windows(q[i], static_cast<uint32_t>(i), *tokenizer, config, 96, options, windows, report);
    EXPECT_GT(windows.size(), 2 * q.size()) << lang;
    std::vector<int> answered(q.size(), 0);
    for (size_t k = 0; k < windows.size(); ++k) {
      const EncodedExample& w = windows[k];
      const QaExample& e = q[w.example];
      ASSERT_LE(w.ids.size(), 96u);
      const QaAnswer& a = e.answers.front();
      const auto cf = static_cast<size_t>(w.context_first);
      if (w.start_position == 0) {
        EXPECT_EQ(w.end_position, 0);
        EXPECT_FALSE(w.span_begin.front() <= a.begin && w.span_end.back() >= a.end);
        continue;
      }
      ++answered[w.example];
      const size_t s = static_cast<size_t>(w.start_position) - cf, t = static_cast<size_t>(w.end_position) - cf;
      ASSERT_LE(s, t);
      ASSERT_LT(t, w.span_begin.size());
      EXPECT_LE(w.span_begin[s], a.begin) << e.id;  // the start token covers the answer's start
      EXPECT_TRUE(s + 1 == w.span_begin.size() || w.span_begin[s + 1] > a.begin) << e.id;
      EXPECT_GE(w.span_end[t], a.end) << e.id;  // the end token covers its end
      EXPECT_TRUE(t == 0 || w.span_end[t - 1] < a.end) << e.id;
      if (k + 1 < windows.size() && windows[k + 1].example == w.example) {
        const EncodedExample& next = windows[k + 1];
        const size_t n = w.span_begin.size();
        EXPECT_EQ(next.span_begin.front(), w.span_begin[n - static_cast<size_t>(options.doc_stride)]);
      }
    }
    // Windows that share 24 tokens hold every answer of at most 25 tokens whole: an answer no window
    // holds is longer (counted alone, give or take the tokens at its edges).
    size_t unanswered = 0;
    tok::Encoding alone;
    for (size_t i = 0; i < q.size(); ++i) {
      if (answered[i] > 0) continue;
      ++unanswered;
      tokenizer->encode(q[i].answers.front().text, alone);
      EXPECT_GT(alone.size(), 23u) << lang << " " << q[i].id;
    }
    EXPECT_LT(unanswered, q.size() / 20) << lang;
    EXPECT_GT(report.questions_cut, 0u);  // some questions are longer than 20 tokens
  }
}

TEST(QaWindows, RefusesWindowsThatCannotAdvance) {
  const std::string spm = test::fixture("tokenizer/spm-test-vocab1000.model");
  if (!std::filesystem::exists(spm)) GTEST_SKIP() << spm << " not found";
  const auto tokenizer = tok::load_tokenizer(spm);
  const nn::ModelConfig config = nn::default_config(nn::Architecture::XlmRoberta, tokenizer->vocab_size());
  QaExample e;
  e.question = "Who?";
  e.context = std::make_shared<const std::string>("A short context.");
  std::vector<EncodedExample> out;
  EncodeReport report;
  EXPECT_THROW(encode_qa_windows(e, 0, *tokenizer, config, 40, {128, 64}, out, report), UsageError);
}

TEST(QaDecoding, TheBestValidSpanOverEveryWindow) {
  // Two windows of ten tokens, the context at tokens 4–8 of each (bytes 0–40 and 20–60 of the context).
  EncodedExample a, b;
  a.ids.assign(10, 5);
  b.ids.assign(10, 5);
  a.context_first = b.context_first = 4;
  for (uint32_t t = 0; t < 5; ++t) {
    a.span_begin.push_back(10 * t);
    a.span_end.push_back(10 * t + 8);
    b.span_begin.push_back(20 + 10 * t);
    b.span_end.push_back(20 + 10 * t + 8);
  }
  std::vector<float> low(10, -10.0f);
  WindowScores wa{&a, low, low}, wb{&b, low, low};
  wa.start[1] = 9;  // the question's tokens: never an answer
  wa.end[1] = 9;
  wa.start[6] = 3;
  wa.end[5] = 5;  // before the start: invalid
  wa.end[8] = 2;
  QaDecodeOptions options;
  AnswerSpan s = best_answer_span({wa}, options);
  ASSERT_TRUE(s.found);
  EXPECT_EQ(s.begin, 20u);  // token 6 is the context's third
  EXPECT_EQ(s.end, 48u);
  EXPECT_DOUBLE_EQ(s.score, 5.0);
  options.max_answer_len = 2;  // tokens 6–8 are three: the best pair left is 4–5 (−10 + 5)
  s = best_answer_span({wa}, options);
  EXPECT_EQ(s.begin, 0u);
  EXPECT_EQ(s.end, 18u);
  EXPECT_DOUBLE_EQ(s.score, -5.0);
  options.max_answer_len = 30;
  wb.start[4] = 4;
  wb.end[4] = 4;  // the second window's best is better
  s = best_answer_span({wa, wb}, options);
  EXPECT_EQ(s.begin, 20u);
  EXPECT_EQ(s.end, 28u);
  EXPECT_DOUBLE_EQ(s.score, 8.0);
  options.n_best = 1;  // only each window's top start and top end: window a has none valid
  EXPECT_FALSE(best_answer_span({wa}, options).found);
}

}  // namespace
}  // namespace kglm::train::tasks
