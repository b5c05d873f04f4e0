// The fine-tuning scores on hand-worked cases: seqeval's chunking (IOB2, IOB1, BIOES, I- after O,
// type changes, sentence ends), micro entity F1 (seqeval's documented example, F1 = 0 without
// predictions), accuracy, and scikit-learn's macro-F1.
#include "train/tasks/scores.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace kglm::train::tasks {
namespace {

using Sentences = std::vector<std::vector<std::string>>;
using Entities = std::vector<Entity>;

TEST(Entities, Iob2) {
  EXPECT_EQ(entities({{"B-PER", "I-PER", "O", "B-LOC"}}), (Entities{{"PER", 0, 1}, {"LOC", 3, 3}}));
  EXPECT_EQ(entities({{"B-PER", "B-PER", "I-PER"}}), (Entities{{"PER", 0, 0}, {"PER", 1, 2}}));
}

TEST(Entities, IAfterOStartsAnEntity) {
  EXPECT_EQ(entities({{"O", "I-PER", "I-PER", "O"}}), (Entities{{"PER", 1, 2}}));
  EXPECT_EQ(entities({{"I-MISC"}}), (Entities{{"MISC", 0, 0}}));
}

TEST(Entities, ATypeChangeEndsOneAndStartsAnother) {
  EXPECT_EQ(entities({{"B-PER", "I-LOC", "I-LOC"}}), (Entities{{"PER", 0, 0}, {"LOC", 1, 2}}));
  EXPECT_EQ(entities({{"I-PER", "I-ORG"}}), (Entities{{"PER", 0, 0}, {"ORG", 1, 1}}));
}

TEST(Entities, Iob1AndBioes) {
  // IOB1: I- continues, B- only between two entities of one type.
  EXPECT_EQ(entities({{"I-PER", "I-PER", "B-PER", "O"}}), (Entities{{"PER", 0, 1}, {"PER", 2, 2}}));
  EXPECT_EQ(entities({{"S-LOC", "B-PER", "E-PER", "O", "B-ORG", "I-ORG", "E-ORG"}}),
            (Entities{{"LOC", 0, 0}, {"PER", 1, 2}, {"ORG", 4, 6}}));
  // After E an I starts anew; after S an E does.
  EXPECT_EQ(entities({{"B-PER", "E-PER", "I-PER"}}), (Entities{{"PER", 0, 1}, {"PER", 2, 2}}));
  EXPECT_EQ(entities({{"S-PER", "E-PER"}}), (Entities{{"PER", 0, 0}, {"PER", 1, 1}}));
}

TEST(Entities, SentencesEndEntitiesAndCountOnePositionMore) {
  EXPECT_EQ(entities({{"B-PER"}, {"I-PER", "O"}, {"B-LOC"}}), (Entities{{"PER", 0, 0}, {"PER", 2, 2}, {"LOC", 5, 5}}));
}

TEST(Entities, TypesAndBadTags) {
  EXPECT_EQ(entities({{"B", "I", "O", "B-ORG-X"}}), (Entities{{"_", 0, 1}, {"ORG-X", 3, 3}}));
  for (const char* bad : {"PER", "X-PER", "BPER", "o", ""}) {
    try {
      entities({{"O"}, {"O", bad}});
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("sentence 2, word 2"), std::string::npos) << e.what();
    }
  }
}

TEST(EntityScores, SeqevalsExampleAndTheEmptyCases) {
  const Sentences gold = {{"O", "O", "O", "B-MISC", "I-MISC", "I-MISC", "O"}, {"B-PER", "I-PER", "O"}};
  const Sentences predicted = {{"O", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"}, {"B-PER", "I-PER", "O"}};
  Scores s = entity_scores(gold, predicted);
  EXPECT_EQ(s.correct, 1);
  EXPECT_EQ(s.predicted, 2);
  EXPECT_EQ(s.gold, 2);
  EXPECT_DOUBLE_EQ(s.f1, 0.5);
  // Nothing predicted: precision, recall and F1 are 0, not NaN.
  s = entity_scores(gold, {{"O", "O", "O", "O", "O", "O", "O"}, {"O", "O", "O"}});
  EXPECT_EQ(s.predicted, 0);
  EXPECT_EQ(s.f1, 0.0);
  EXPECT_EQ(s.precision, 0.0);
  // One of two found, one wrong type: p = 1/2, r = 1/2.
  s = entity_scores({{"B-PER", "O", "B-LOC"}}, {{"B-PER", "O", "B-ORG"}});
  EXPECT_DOUBLE_EQ(s.precision, 0.5);
  EXPECT_DOUBLE_EQ(s.recall, 0.5);
  // p = 1, r = 1/3: F1 = 2 · 1/3 / (4/3) = 0.5.
  s = entity_scores({{"B-PER", "B-LOC", "B-ORG"}}, {{"B-PER", "O", "O"}});
  EXPECT_DOUBLE_EQ(s.f1, 0.5);
  EXPECT_THROW(entity_scores(gold, {{"O"}}), Error);
  EXPECT_THROW(entity_scores({{"O", "O"}}, {{"O"}}), Error);
}

// seqeval's strict mode (reference_seqeval compares it with seqeval on thousands of sequences).
TEST(StrictEntities, EachSchemeByItsOwnRules) {
  // IOB2: I- after O is no entity, and a type change inside a chunk ends it without starting one.
  EXPECT_EQ(strict_entities({{"O", "I-PER", "B-LOC", "I-LOC", "I-PER"}}, TagScheme::iob2), (Entities{{"LOC", 2, 3}}));
  // IOBES: a chunk must close with E or S.
  EXPECT_EQ(strict_entities({{"B-PER", "E-PER", "B-LOC", "I-LOC", "O", "S-ORG"}}, TagScheme::iobes),
            (Entities{{"PER", 0, 1}, {"ORG", 5, 5}}));
  // IOE2: E closes, an I run without its E is nothing.
  EXPECT_EQ(strict_entities({{"I-PER", "E-PER", "I-LOC", "O"}}, TagScheme::ioe2), (Entities{{"PER", 0, 1}}));
  // IOB1: I starts, B only after a chunk of the same type; positions count one O after each sentence.
  EXPECT_EQ(strict_entities({{"I-PER"}, {"I-PER", "B-PER"}}, TagScheme::iob1),
            (Entities{{"PER", 0, 0}, {"PER", 2, 2}, {"PER", 3, 3}}));
  EXPECT_EQ(strict_entities({{"U-PER", "B-LOC", "L-LOC"}}, TagScheme::bilou), (Entities{{"PER", 0, 0}, {"LOC", 1, 2}}));
  try {
    strict_entities({{"O"}, {"B-PER", "E-PER"}}, TagScheme::iob2);
    ADD_FAILURE() << "E- read as IOB2";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sentence 2, word 2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_tag_scheme("iobes"), TagScheme::iobes);
  EXPECT_THROW(parse_tag_scheme("BIO"), Error);
  const Scores s = entity_scores({{"B-PER", "I-PER"}}, {{"I-PER", "I-PER"}}, entity_rules("IOB2"));
  EXPECT_EQ(s.predicted, 0);
  EXPECT_EQ(entity_scores({{"B-PER", "I-PER"}}, {{"I-PER", "I-PER"}}).f1, 1.0);  // default mode
}

TEST(ClassScores, AccuracyAndMacroF1) {
  EXPECT_DOUBLE_EQ(accuracy({1, 2, 3, 3}, {1, 2, 0, 3}), 0.75);
  EXPECT_EQ(accuracy({}, {}), 0.0);
  // Labels 0, 1, 2: F1 of 0 is 2/3 (p 1, r 1/2), of 1 is 1, of 2 is 0 (predicted, never gold).
  EXPECT_DOUBLE_EQ(macro_f1({0, 0, 1}, {0, 2, 1}), (2.0 / 3 + 1 + 0) / 3);
  EXPECT_DOUBLE_EQ(macro_f1({5, 5}, {5, 5}), 1.0);
  EXPECT_THROW(macro_f1({1}, {}), Error);
}

}  // namespace
}  // namespace kglm::train::tasks
