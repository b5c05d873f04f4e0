// The slot filling readers on hand-written records of each released layout (MultiATIS++'s TSV,
// MTOP's TSV with character spans and a tokens column, MASSIVE's bracketed annotations): words, BIO
// tags, intents, and bad records skipped as FILE:LINE.
#include "train/tasks/slot_readers.hpp"

#include <gtest/gtest.h>

#include "../../unit/test_paths.hpp"

namespace kglm::train::tasks {
namespace {

using ::kglm::test::ScratchDir;
using Strings = std::vector<std::string>;

TEST(SlotReaders, BracketedAnnotations) {
  const TaggedSentence s = parse_bracketed("wake me up at [time : nine am] on [date : friday]", false);
  EXPECT_EQ(s.words, (Strings{"wake", "me", "up", "at", "nine", "am", "on", "friday"}));
  EXPECT_EQ(s.tags, (Strings{"O", "O", "O", "O", "B-time", "I-time", "O", "B-date"}));
  const TaggedSentence z = parse_bracketed("[place_name : 横浜駅]までの終電", true);
  EXPECT_EQ(z.words, (Strings{"横", "浜", "駅", "ま", "で", "の", "終", "電"}));
  EXPECT_EQ(z.tags, (Strings{"B-place_name", "I-place_name", "I-place_name", "O", "O", "O", "O", "O"}));
  EXPECT_THROW(parse_bracketed("wake me [time : nine", false), Error);
  EXPECT_THROW(parse_bracketed("wake me ] up", false), Error);
  EXPECT_THROW(parse_bracketed("wake [time nine am]", false), Error);
  EXPECT_THROW(parse_bracketed("wake [time : ]", false), Error);
}

TEST(SlotReaders, MultiAtisTsv) {
  ScratchDir dir;
  const std::string path = dir.write("atis.tsv",
                                     "id\tutterance\tslot_labels\tintent\n"
                                     "1\tshow flights to boston\tO O O B-toloc.city_name\tatis_flight\n"
                                     "2\tlist fares\tO\tatis_airfare\n"
                                     "3\tfares to dallas\tO O B-toloc.city_name\tatis_airfare#atis_flight\n"
                                     "4\tslot_labels\tslot_labels\tintent\n");  // a second header (fuzzing)
  ErrorCounter errors(ErrorLimit{});
  const std::vector<SlotExample> e = read_slots(path, SlotFormat::multiatis, errors);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].sentence.words, (Strings{"show", "flights", "to", "boston"}));
  EXPECT_EQ(e[0].sentence.tags.back(), "B-toloc.city_name");
  EXPECT_EQ(e[1].intent, "atis_airfare#atis_flight");  // a multi-intent label is one label
  EXPECT_EQ(e[1].line, 4u);
  EXPECT_EQ(errors.count(), 2u);  // line 3: one tag for two words; line 5: no tag scheme's label
  EXPECT_THROW(read_slots(dir.write("noheader.tsv", "1\tshow\tO\tatis_flight\n"), SlotFormat::multiatis, errors),
               Error);
}

TEST(SlotReaders, MtopTsv) {
  ScratchDir dir;
  const std::string tokens =
      R"({"tokens": ["Set", "alarm", "for", "6", "am"], "tokenSpans": [{"start": 0, "length": 3}, )"
      R"({"start": 4, "length": 5}, {"start": 10, "length": 3}, {"start": 14, "length": 1}, {"start": 16, "length": 2}]})";
  const std::string path = dir.write(
      "train.txt", "1\tIN:CREATE_ALARM\t10:18:SL:DATE_TIME\tSet alarm for 6 am\talarm\ten_XX\t[IN:CREATE_ALARM ]\t" +
                       tokens + "\n" + "2\tIN:GET_ALARM\t\tSet alarm for 6 am\talarm\ten_XX\t[IN:GET_ALARM ]\t" +
                       tokens + "\n" + "3\tIN:GET_ALARM\t40:44:SL:DATE\tSet alarm\talarm\ten_XX\t[]\t" + tokens + "\n" +
                       "4\tIN:GET_ALARM\t\tSet alarm\n");
  ErrorCounter errors(ErrorLimit{});
  const std::vector<SlotExample> e = read_slots(path, SlotFormat::mtop, errors);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].sentence.words, (Strings{"Set", "alarm", "for", "6", "am"}));
  EXPECT_EQ(e[0].sentence.tags, (Strings{"O", "O", "B-DATE_TIME", "I-DATE_TIME", "I-DATE_TIME"}));
  EXPECT_EQ(e[0].intent, "IN:CREATE_ALARM");
  EXPECT_EQ(e[1].sentence.tags, (Strings(5, "O")));
  EXPECT_EQ(errors.count(), 2u);  // a slot over no token; 4 columns
}

TEST(SlotReaders, MassiveJsonLines) {
  ScratchDir dir;
  const std::string path = dir.write(
      "de-DE.jsonl",
      R"({"id": "1", "locale": "de-DE", "partition": "train", "intent": "alarm_set", "utt": "weck mich um neun", "annot_utt": "weck mich um [time : neun]"})"
      "\n"
      R"({"id": "2", "locale": "de-DE", "intent": "alarm_set", "annot_utt": "weck [time : neun"})"
      "\n"
      R"({"id": "3", "locale": "de-DE", "annot_utt": "weck mich"})"
      "\n");
  ErrorCounter errors(ErrorLimit{});
  const std::vector<SlotExample> e = read_slots(path, SlotFormat::massive, errors);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].sentence.tags, (Strings{"O", "O", "O", "B-time"}));
  EXPECT_EQ(e[0].sentence.lang, "de");
  EXPECT_EQ(e[0].id, "1");
  EXPECT_EQ(errors.count(), 2u);
}

}  // namespace
}  // namespace kglm::train::tasks
