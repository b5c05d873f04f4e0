// The pre-training objectives (lib/train/objectives): KMLM knowledge and reasoning, EntityCS
// WEP/PEP and their +MLM forms, the per-kind objective table. Rules on hand-made sequences first;
// then the rates, over ≥ 1M masking decisions each, on real generator output: the token datasets
// tests/cli/objectives.sh builds from ../shared/fixtures and names in $KGLM_OBJECTIVE_DATA (the
// ObjectiveRates tests skip without it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "core/error.hpp"
#include "train/mlm_batch.hpp"
#include "train/objectives/entity_prediction.hpp"
#include "train/objectives/objective_table.hpp"
#include "train/objectives/reasoning.hpp"
#include "train/objectives/whole_word.hpp"

using namespace kglm;
using namespace kglm::train;

namespace {

const tok::SpecialTokens kSpecial{0, 2, 1, 3, 99};  // bos, eos, pad, unk, mask
const Vocabulary kVocab(kSpecial, 100);

// A sequence built from (kind of part, token count) pieces: 'e' entity, 'r' relation, 'l' link
// slot, 'o' other. Each piece but 'o' is its own span; every piece starts a word.
struct Built {
  std::vector<int32_t> ids;
  std::vector<uint8_t> flags;
  std::vector<int32_t> span;
  Sequence seq(SequenceKind kind) const {
    Sequence s;
    s.ids = ids;
    s.flags = flags;
    s.span = span;
    s.kind = kind;
    return s;
  }
};

Built build(const std::vector<std::pair<char, int>>& pieces) {
  Built b;
  b.ids.push_back(kSpecial.bos);
  b.flags.push_back(kSpecialToken);
  b.span.push_back(-1);
  int32_t next_span = 0, next_id = 10;
  for (auto [part, n] : pieces) {
    const uint8_t flag = part == 'e' ? kInEntity : part == 'r' ? kInRelation : part == 'l' ? kLinkSlot : 0;
    const int32_t span = part == 'o' ? -1 : next_span++;
    for (int k = 0; k < n; ++k) {
      b.ids.push_back(next_id++);
      b.flags.push_back(static_cast<uint8_t>(flag | (k == 0 ? kWordStart : 0)));
      b.span.push_back(span);
    }
  }
  b.ids.push_back(kSpecial.eos);
  b.flags.push_back(kSpecialToken);
  b.span.push_back(-1);
  return b;
}

// One sentence of kg-cycles text: head [mask] relation [mask] tail.
std::vector<std::pair<char, int>> sentences(int count) {
  std::vector<std::pair<char, int>> p;
  for (int i = 0; i < count; ++i) {
    for (auto piece : {std::pair<char, int>{'e', 2}, {'l', 3}, {'r', 2}, {'l', 3}, {'e', 1}}) p.push_back(piece);
    p.push_back({'o', 1});  // the full stop
  }
  return p;
}

std::map<int32_t, std::vector<uint32_t>> masked_by_span(const Sequence& seq, const std::vector<MaskedToken>& masked) {
  std::map<int32_t, std::vector<uint32_t>> by_span;
  for (const MaskedToken& m : masked) by_span[seq.span[m.position]].push_back(m.position);
  return by_span;
}

size_t span_size(const Sequence& seq, int32_t span) {
  return static_cast<size_t>(std::count(seq.span.begin(), seq.span.end(), span));
}

}  // namespace

TEST(Objectives, NamesRoundTripAndBadOnesAreUsageErrors) {
  for (const char* name : {"mlm", "knowledge", "reasoning", "wep", "pep-mrs", "pep-ms", "pep-m", "wep+mlm",
                           "pep-mrs+mlm", "pep-ms+mlm", "pep-m+mlm"})
    EXPECT_EQ(objective_name(parse_objective(name)), name);
  EXPECT_THROW(parse_objective("pep"), UsageError);
  EXPECT_THROW(parse_objective("mlm+mlm"), UsageError);
  ObjectiveTable table;
  EXPECT_EQ(table.to_string(),
            "text=mlm,annotated=mlm,kmlm=knowledge,kmlm-parallel=knowledge,kmlm-alias=knowledge,reasoning-3=reasoning,"
            "reasoning-4=reasoning,entitycs=pep-ms+mlm");
  table.assign("kmlm-all=mlm,entitycs=wep");
  EXPECT_EQ(objective_name(table[SequenceKind::kmlm_alias]), "mlm");
  EXPECT_EQ(objective_name(table[SequenceKind::entitycs]), "wep");
  ObjectiveTable again;
  again.assign(table.to_string());
  EXPECT_EQ(again.to_string(), table.to_string());
  EXPECT_THROW(table.assign("text=reasoning"), UsageError);  // no cycles to reason over
  EXPECT_THROW(table.assign("tweets=mlm"), UsageError);
  EXPECT_THROW(table.assign("text"), UsageError);
}

TEST(Objectives, ThreeCycleMasksExactlyOneWholeRelation) {
  const Built b = build(sentences(3));
  const Sequence seq = b.seq(SequenceKind::reasoning_3);
  ReasoningMasker masker({}, kVocab);
  std::vector<int32_t> out(seq.size());
  std::set<int32_t> relations_seen;
  for (uint64_t row = 0; row < 300; ++row) {
    std::vector<MaskedToken> masked;
    Rng rng(1, row);
    masker.mask(seq, rng, out, masked);
    const auto by_span = masked_by_span(seq, masked);
    ASSERT_EQ(by_span.size(), 1u);
    const auto& [span, positions] = *by_span.begin();
    EXPECT_TRUE(seq.flags[positions[0]] & kInRelation);
    EXPECT_EQ(positions.size(), span_size(seq, span));
    for (const MaskedToken& m : masked) {
      EXPECT_EQ(m.replacement, Replacement::mask);
      EXPECT_EQ(m.term, LossTerm::reasoning);
      EXPECT_EQ(out[m.position], kSpecial.mask);
    }
    relations_seen.insert(span);
  }
  EXPECT_EQ(relations_seen.size(), 3u);  // each of the three relations gets its turn
}

TEST(Objectives, FourCycleWholeSentenceKeepsItsRelation) {
  const Built b = build(sentences(5));
  const Sequence seq = b.seq(SequenceKind::reasoning_4);
  ReasoningMasker masker({}, kVocab);
  std::vector<int32_t> out(seq.size());
  int sentence_cases = 0;
  for (uint64_t row = 0; row < 500; ++row) {
    std::vector<MaskedToken> masked;
    Rng rng(2, row);
    masker.mask(seq, rng, out, masked);
    const auto by_span = masked_by_span(seq, masked);
    size_t relations = 0, entities = 0;
    for (const auto& [span, positions] : by_span) {
      EXPECT_EQ(positions.size(), span_size(seq, span));  // whole mentions
      (seq.flags[positions[0]] & kInRelation ? relations : entities) += 1;
    }
    if (relations == 1) {
      EXPECT_TRUE(entities == 1 || entities == 2);
      continue;
    }
    ++sentence_cases;
    ASSERT_EQ(relations, 0u);
    ASSERT_EQ(entities, 2u);
    // Spans of sentence k: 5k (head), 5k+1 link, 5k+2 relation, 5k+3 link, 5k+4 (tail).
    const int32_t head = by_span.begin()->first, tail = std::next(by_span.begin())->first;
    EXPECT_EQ(head % 5, 0);
    EXPECT_EQ(tail, head + 4);
  }
  EXPECT_GT(sentence_cases, 60);
  EXPECT_LT(sentence_cases, 140);
}

TEST(Objectives, NoObjectiveEverPredictsALinkSlotOrSpecialToken) {
  const Built b = build(sentences(4));
  ObjectiveTable table;
  for (const char* spec : {"reasoning-4=reasoning", "reasoning-4=mlm", "kmlm=knowledge", "entitycs=wep+mlm",
                           "entitycs=pep-mrs+mlm", "entitycs=pep-ms", "entitycs=pep-m+mlm"}) {
    table.assign(spec);
    ObjectiveMasker masker(table, {0.9, 0.8, 0.1}, kVocab);
    for (SequenceKind kind : {SequenceKind::reasoning_4, SequenceKind::kmlm, SequenceKind::entitycs}) {
      const Sequence seq = b.seq(kind);
      std::vector<int32_t> out(seq.size());
      for (uint64_t row = 0; row < 200; ++row) {
        std::vector<MaskedToken> masked;
        Rng rng(3, row);
        masker.mask(seq, rng, out, masked);
        for (size_t i = 0; i < seq.size(); ++i)
          if (seq.flags[i] & (kLinkSlot | kSpecialToken)) {
            ASSERT_EQ(out[i], seq.ids[i]) << spec;
          }
        for (const MaskedToken& m : masked) ASSERT_FALSE(seq.flags[m.position] & (kLinkSlot | kSpecialToken)) << spec;
      }
    }
  }
}

TEST(Objectives, KnowledgeMasksOnlyEntityAndRelationTokens) {
  const Built b = build({{'e', 3}, {'l', 2}, {'r', 2}, {'o', 4}, {'l', 2}, {'e', 2}});
  const Sequence seq = b.seq(SequenceKind::kmlm);
  WholeWordMasker masker({0.5, 0.8, 0.1}, kVocab, kInEntity | kInRelation, LossTerm::knowledge);
  std::vector<int32_t> out(seq.size());
  for (uint64_t row = 0; row < 200; ++row) {
    std::vector<MaskedToken> masked;
    Rng rng(4, row);
    masker.mask(seq, rng, out, masked);
    size_t n = 0;
    for (const MaskedToken& m : masked) {
      ASSERT_TRUE(seq.flags[m.position] & (kInEntity | kInRelation));
      ASSERT_EQ(m.term, LossTerm::knowledge);
      n++;
    }
    EXPECT_LE(n, 4u);  // round(0.5 · 7 candidates), whole words only
  }
}

TEST(Objectives, BatchCountsTermsAndTalliesCategories) {
  // Through the batch builder: terms per row and the per-kind, per-category tally.
  const Built reasoning = build(sentences(3)), text = build({{'o', 12}});
  ObjectiveTable table;
  ObjectiveMasker masker(table, {}, kVocab);
  std::vector<MaskedToken> masked;
  std::vector<int32_t> out(reasoning.ids.size());
  Rng rng(5, 0);
  masker.mask(reasoning.seq(SequenceKind::reasoning_3), rng, out, masked);
  MaskTally tally;
  for (const MaskedToken& m : masked) tally.add(reasoning.seq(SequenceKind::reasoning_3), m);
  const auto& counts = tally.counts[static_cast<size_t>(SequenceKind::reasoning_3)];
  EXPECT_EQ(counts[static_cast<size_t>(MaskCategory::relation)], 2u);
  EXPECT_EQ(counts[static_cast<size_t>(MaskCategory::entity)] + counts[static_cast<size_t>(MaskCategory::link_slot)] +
                counts[static_cast<size_t>(MaskCategory::other)],
            0u);
}

// ---- Rates on real data -------------------------------------------------------------------------

namespace {

int32_t g_unk = -1;  // the dataset's <unk> id, set by mask_rows

std::filesystem::path data_dir() {
  const char* dir = std::getenv("KGLM_OBJECTIVE_DATA");
  return dir ? dir : "";
}

// Counts of outcomes, and their shares.
struct Counter {
  std::map<std::string, uint64_t> n;
  uint64_t total = 0;
  void add(const std::string& outcome) {
    ++n[outcome];
    ++total;
  }
  double share(const std::string& outcome) const {
    auto it = n.find(outcome);
    return total && it != n.end() ? static_cast<double>(it->second) / static_cast<double>(total) : 0.0;
  }
};

constexpr double kTolerance = 0.005;
constexpr uint64_t kDecisions = 1'000'000;

// Masks rows of `data` (sequence row mod N, keyed like training rows) with `objective` applied to
// every kind the dataset has, until `enough` says so; `visit` sees each masked sequence.
template <typename Visit, typename Enough>
void mask_rows(const TokenDataset& data, const std::string& entity_objective, const std::string& spec, Visit visit,
               Enough enough) {
  g_unk = data.special().unk;
  const ObjectiveMasker masker(make_objective_table(entity_objective, spec), {},
                               Vocabulary(data.special(), data.vocab_size()));
  std::vector<int32_t> out;
  std::vector<MaskedToken> masked;
  for (uint64_t row = 0; !enough(); ++row) {
    const Sequence seq = data.sequence(row % data.size());
    out.resize(seq.size());
    masked.clear();
    Rng rng(7, row, kTrainStream);
    masker.mask(seq, rng, out, masked);
    visit(seq, out, masked);
  }
}

// Whether position i may carry a loss: not a link slot, not a special token (pretrain prepare
// flags bos, eos, pad and mask), not <unk> (nothing to learn from predicting it).
bool target(const Sequence& seq, size_t i) {
  return !(seq.flags[i] & (kLinkSlot | kSpecialToken)) && seq.ids[i] != g_unk;
}

// What happened at position i: "mask", "random", "same" (predicted) or "none" (no loss).
std::vector<std::string> outcomes(const Sequence& seq, const std::vector<MaskedToken>& masked) {
  std::vector<std::string> o(seq.size(), "none");
  for (const MaskedToken& m : masked) o[m.position] = replacement_name(m.replacement);
  return o;
}

}  // namespace

class ObjectiveRates : public ::testing::Test {
 protected:
  void SetUp() override {
    if (data_dir().empty()) GTEST_SKIP() << "KGLM_OBJECTIVE_DATA not set (tests/cli/objectives.sh sets it)";
  }
};

TEST_F(ObjectiveRates, WholeEntityPrediction) {
  const TokenDataset data = TokenDataset::open(data_dir() / "entitycs.h5");
  for (const bool with_mlm : {false, true}) {
    Counter entity, chosen, non_entity, non_entity_chosen;
    mask_rows(
        data, with_mlm ? "wep+mlm" : "wep", "",
        [&](const Sequence& seq, const std::vector<int32_t>&, const std::vector<MaskedToken>& masked) {
          const auto o = outcomes(seq, masked);
          std::map<int32_t, std::set<std::string>> per_entity;
          for (size_t i = 0; i < seq.size(); ++i) {
            if (!target(seq, i)) {
              ASSERT_EQ(o[i], "none");
              continue;
            }
            if (seq.flags[i] & kInEntity) {
              per_entity[seq.span[i]].insert(o[i]);
            } else {
              non_entity.add(o[i] == "none" ? "none" : "chosen");
              if (o[i] != "none") non_entity_chosen.add(o[i]);
            }
          }
          for (const auto& [span, seen] : per_entity) {
            ASSERT_EQ(seen.size(), 1u) << "an entity was masked partly";
            ASSERT_EQ(seen.count("random"), 0u) << "WEP never replaces with a random token";
            entity.add(*seen.begin() == "none" ? "none" : "chosen");
            if (*seen.begin() != "none") chosen.add(*seen.begin());
          }
        },
        [&] { return entity.total >= kDecisions; });
    EXPECT_NEAR(entity.share("chosen"), with_mlm ? 0.5 : 1.0, kTolerance);
    EXPECT_NEAR(chosen.share("mask"), 0.8, kTolerance);
    EXPECT_NEAR(chosen.share("same"), 0.2, kTolerance);
    if (with_mlm) {
      EXPECT_GE(non_entity.total, kDecisions);
      EXPECT_NEAR(non_entity.share("chosen"), 0.15, kTolerance);
      EXPECT_NEAR(non_entity_chosen.share("mask"), 0.8, kTolerance);
      EXPECT_NEAR(non_entity_chosen.share("random"), 0.1, kTolerance);
    } else {
      EXPECT_EQ(non_entity.share("chosen"), 0.0);
    }
  }
}

TEST_F(ObjectiveRates, PartialEntityPrediction) {
  // Per entity subword: shares of <mask>, random, kept-and-predicted, not predicted (Table 2).
  struct Case {
    const char* name;
    double mask, random, same, none;
  };
  const TokenDataset data = TokenDataset::open(data_dir() / "entitycs.h5");
  for (const Case& c : {Case{"pep-mrs", 0.8, 0.1, 0.1, 0.0}, Case{"pep-ms", 0.8, 0.0, 0.1, 0.1},
                        Case{"pep-m", 0.8, 0.0, 0.0, 0.2}, Case{"pep-mrs+mlm", 0.4, 0.05, 0.05, 0.5},
                        Case{"pep-ms+mlm", 0.4, 0.0, 0.05, 0.55}, Case{"pep-m+mlm", 0.4, 0.0, 0.0, 0.6}}) {
    Counter subword, non_entity;
    mask_rows(
        data, c.name, "",
        [&](const Sequence& seq, const std::vector<int32_t>&, const std::vector<MaskedToken>& masked) {
          const auto o = outcomes(seq, masked);
          for (size_t i = 0; i < seq.size(); ++i)
            if (target(seq, i)) (seq.flags[i] & kInEntity ? subword : non_entity).add(o[i]);
        },
        [&] { return subword.total >= kDecisions; });
    EXPECT_NEAR(subword.share("mask"), c.mask, kTolerance) << c.name;
    EXPECT_NEAR(subword.share("random"), c.random, kTolerance) << c.name;
    EXPECT_NEAR(subword.share("same"), c.same, kTolerance) << c.name;
    EXPECT_NEAR(subword.share("none"), c.none, kTolerance) << c.name;
    const bool with_mlm = std::string(c.name).ends_with("+mlm");
    EXPECT_NEAR(non_entity.share("none"), with_mlm ? 0.85 : 1.0, kTolerance) << c.name;
    if (with_mlm) {
      EXPECT_GE(non_entity.total, kDecisions);
      EXPECT_NEAR(non_entity.share("mask"), 0.15 * 0.8, kTolerance) << c.name;
      EXPECT_NEAR(non_entity.share("random"), 0.15 * 0.1, kTolerance) << c.name;
    }
  }
}

TEST_F(ObjectiveRates, Reasoning) {
  const TokenDataset data = TokenDataset::open(data_dir() / "reasoning.h5");
  Counter three, four, four_entities;
  uint64_t link_losses = 0;
  mask_rows(
      data, "", "",
      [&](const Sequence& seq, const std::vector<int32_t>&, const std::vector<MaskedToken>& masked) {
        std::map<int32_t, size_t> masked_spans;
        for (const MaskedToken& m : masked) {
          ++masked_spans[seq.span[m.position]];
          link_losses += (seq.flags[m.position] & kLinkSlot) != 0;
        }
        size_t relations = 0, entities = 0;
        for (const auto& [span, n] : masked_spans) {
          size_t whole = 0, relation = 0;
          for (size_t i = 0; i < seq.size(); ++i)
            if (seq.span[i] == span && target(seq, i)) {
              ++whole;
              relation += (seq.flags[i] & kInRelation) && !(seq.flags[i] & kInEntity);
            }
          ASSERT_EQ(n, whole) << "a mention was masked partly";
          (relation ? relations : entities) += 1;
        }
        if (seq.kind == SequenceKind::reasoning_3) {
          ASSERT_EQ(relations, 1u);
          ASSERT_EQ(entities, 0u);
          three.add("one relation");
        } else {
          four.add(relations == 1 ? "relation+entities" : "sentence");
          if (relations == 1) four_entities.add(std::to_string(entities));
          if (relations == 0) {
            ASSERT_EQ(entities, 2u);
          }
        }
      },
      [&] { return four.total >= kDecisions && three.total > 0; });
  EXPECT_EQ(link_losses, 0u);
  EXPECT_NEAR(four.share("relation+entities"), 0.8, kTolerance);
  EXPECT_NEAR(four.share("sentence"), 0.2, kTolerance);
  EXPECT_NEAR(four_entities.share("1"), 0.5, kTolerance);
  EXPECT_NEAR(four_entities.share("2"), 0.5, kTolerance);
}

TEST_F(ObjectiveRates, KnowledgeAndMlm) {
  const TokenDataset data = TokenDataset::open(data_dir() / "kmlm.h5");
  for (const char* spec : {"kmlm-all=knowledge", "kmlm-all=mlm"}) {
    const bool knowledge = std::string(spec).ends_with("knowledge");
    Counter chosen;
    uint64_t candidates = 0, masked_total = 0, outside = 0, links = 0;
    mask_rows(
        data, "", spec,
        [&](const Sequence& seq, const std::vector<int32_t>&, const std::vector<MaskedToken>& masked) {
          for (size_t i = 0; i < seq.size(); ++i)
            candidates += target(seq, i) && (!knowledge || (seq.flags[i] & (kInEntity | kInRelation)));
          for (const MaskedToken& m : masked) {
            chosen.add(replacement_name(m.replacement));
            ++masked_total;
            links += (seq.flags[m.position] & kLinkSlot) != 0;
            outside += knowledge && !(seq.flags[m.position] & (kInEntity | kInRelation));
            ASSERT_EQ(m.term, knowledge ? LossTerm::knowledge : LossTerm::mlm);
          }
        },
        [&] { return chosen.total >= kDecisions; });
    EXPECT_EQ(links, 0u) << spec;
    EXPECT_EQ(outside, 0u) << spec;
    EXPECT_NEAR(chosen.share("mask"), 0.8, kTolerance) << spec;
    EXPECT_NEAR(chosen.share("random"), 0.1, kTolerance) << spec;
    EXPECT_NEAR(chosen.share("same"), 0.1, kTolerance) << spec;
    // The whole-word budget: round(0.15 · candidates) per sequence, at least one; short KMLM
    // sentences round it up, so the share is above 15% but bounded.
    const double share = static_cast<double>(masked_total) / static_cast<double>(candidates);
    EXPECT_GT(share, 0.12) << spec;
    EXPECT_LT(share, 0.35) << spec;
  }
}
