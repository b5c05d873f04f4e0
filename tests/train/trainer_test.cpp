// Whole-word masking (the 15% budget, whole words, 80/10/10, specials untouched), the batch order
// (epochs are permutations, language-per-batch groups, resumed cursors) and the LR schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/error.hpp"
#include "nn/optimizer.hpp"
#include "train/batch_order.hpp"
#include "train/objectives/whole_word.hpp"
#include "train/token_batches.hpp"
#include "train/token_dataset.hpp"
#include "train/trainer_support.hpp"

using namespace kglm;
using namespace kglm::train;

namespace {

const tok::SpecialTokens kSpecial{0, 2, 1, 3, 99};  // bos, eos, pad, unk, mask
constexpr int32_t kVocab = 100;

// <s> w w w … </s> where every `word_len`-th token starts a word; ids 10, 11, … (non-special).
void make_sequence(size_t words, size_t word_len, std::vector<int32_t>& ids, std::vector<uint8_t>& flags) {
  ids = {kSpecial.bos};
  flags = {kSpecialToken};
  for (size_t w = 0; w < words; ++w)
    for (size_t k = 0; k < word_len; ++k) {
      ids.push_back(static_cast<int32_t>(10 + (w * word_len + k) % 80));
      flags.push_back(k == 0 ? kWordStart : 0);
    }
  ids.push_back(kSpecial.eos);
  flags.push_back(kSpecialToken);
}

Sequence as_sequence(const std::vector<int32_t>& ids, const std::vector<uint8_t>& flags) {
  Sequence seq;
  seq.ids = ids;
  seq.flags = flags;
  return seq;
}

TEST(WholeWordMasking, MasksWholeWordsWithinTheBudget) {
  WholeWordMasker masker({}, Vocabulary(kSpecial, kVocab));
  std::vector<int32_t> ids, out;
  std::vector<uint8_t> flags;
  for (size_t word_len : {1u, 2u, 3u}) {
    make_sequence(40, word_len, ids, flags);
    out.resize(ids.size());
    for (uint64_t seed = 0; seed < 200; ++seed) {
      Rng rng(seed, 1, 2);
      std::vector<MaskedToken> masked;
      masker.mask(as_sequence(ids, flags), rng, out, masked);
      const size_t maskable = ids.size() - 2;
      const auto budget = static_cast<size_t>(std::llround(0.15 * static_cast<double>(maskable)));
      // Words of equal length fill the budget up to less than one word.
      EXPECT_LE(masked.size(), budget);
      EXPECT_GT(masked.size() + word_len, budget);
      std::set<uint32_t> chosen;
      for (const MaskedToken& m : masked) {
        chosen.insert(m.position);
        EXPECT_EQ(m.target, ids[m.position]);
        EXPECT_EQ(flags[m.position] & kSpecialToken, 0);
      }
      EXPECT_EQ(chosen.size(), masked.size());
      EXPECT_TRUE(std::is_sorted(masked.begin(), masked.end(),
                                 [](const MaskedToken& a, const MaskedToken& b) { return a.position < b.position; }));
      // Whole words: a chosen token's word-mates are chosen too.
      for (uint32_t p : chosen) {
        uint32_t start = p;
        while (!(flags[start] & kWordStart)) --start;
        for (uint32_t k = start; k < start + word_len; ++k) EXPECT_TRUE(chosen.count(k)) << k;
      }
      // Unchosen tokens are unchanged; specials are never touched.
      for (size_t i = 0; i < ids.size(); ++i) {
        if (!chosen.count(static_cast<uint32_t>(i))) {
          EXPECT_EQ(out[i], ids[i]);
        }
      }
    }
  }
}

TEST(WholeWordMasking, EightyTenTenRule) {
  WholeWordMasker masker({}, Vocabulary(kSpecial, kVocab));
  std::vector<int32_t> ids, out;
  std::vector<uint8_t> flags;
  make_sequence(200, 1, ids, flags);
  out.resize(ids.size());
  size_t total = 0, as_mask = 0, kept = 0, random = 0;
  for (uint64_t r = 0; r < 2000; ++r) {
    Rng rng(42, r, 0);
    std::vector<MaskedToken> masked;
    masker.mask(as_sequence(ids, flags), rng, out, masked);
    for (const MaskedToken& m : masked) {
      ++total;
      int32_t v = out[m.position];
      // The decision recorded is the one made.
      EXPECT_EQ(m.term, LossTerm::mlm);
      if (m.replacement == Replacement::mask) {
        EXPECT_EQ(v, kSpecial.mask);
      } else if (m.replacement == Replacement::same) {
        EXPECT_EQ(v, m.target);
      } else {
        EXPECT_NE(v, kSpecial.mask);
      }
      if (v == kSpecial.mask) {
        ++as_mask;
      } else if (v == m.target) {
        ++kept;
      } else {
        ++random;
        EXPECT_TRUE(v != kSpecial.bos && v != kSpecial.eos && v != kSpecial.pad && v != kSpecial.unk);
      }
    }
  }
  ASSERT_EQ(total, 2000u * 30);  // round(0.15 · 200)
  // A random replacement equals the original with probability ~1/95: counted as kept.
  const double n = static_cast<double>(total);
  EXPECT_NEAR(as_mask / n, 0.8, 0.01);
  EXPECT_NEAR(random / n, 0.1 * 94 / 95, 0.01);
  EXPECT_NEAR(kept / n, 0.1 + 0.1 / 95, 0.01);
}

// KMLM's "h [mask] r [mask] t": the linking slots are inputs and never carry a loss, and a word
// never spans one.
TEST(WholeWordMasking, LinkSlotsAreNeverTargets) {
  WholeWordMasker masker({0.9, 0.8, 0.1}, Vocabulary(kSpecial, kVocab));
  std::vector<int32_t> ids, out;
  std::vector<uint8_t> flags;
  make_sequence(60, 1, ids, flags);
  for (size_t i = 3; i + 1 < ids.size(); i += 4) flags[i] |= kLinkSlot;
  out.resize(ids.size());
  size_t chosen = 0;
  for (uint64_t r = 0; r < 500; ++r) {
    Rng rng(5, r, 0);
    std::vector<MaskedToken> masked;
    masker.mask(as_sequence(ids, flags), rng, out, masked);
    for (const MaskedToken& m : masked) EXPECT_EQ(flags[m.position] & kLinkSlot, 0) << m.position;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (flags[i] & kLinkSlot) {
        EXPECT_EQ(out[i], ids[i]);
      }
    }
    chosen += masked.size();
  }
  EXPECT_GT(chosen, 0u);
}

TEST(WholeWordMasking, ShortSequencesMaskAtLeastOneTokenAndOnlySpecialsNone) {
  WholeWordMasker masker({}, Vocabulary(kSpecial, kVocab));
  std::vector<int32_t> ids, out;
  std::vector<uint8_t> flags;
  make_sequence(1, 1, ids, flags);
  out.resize(ids.size());
  Rng rng(1, 1, 1);
  std::vector<MaskedToken> masked;
  masker.mask(as_sequence(ids, flags), rng, out, masked);
  EXPECT_EQ(masked.size(), 1u);
  ids = {kSpecial.bos, kSpecial.eos};
  flags = {kSpecialToken, kSpecialToken};
  masked.clear();
  masker.mask(as_sequence(ids, flags), rng, out, masked);
  EXPECT_TRUE(masked.empty());
  EXPECT_THROW(WholeWordMasker({0.0, 0.8, 0.1}, Vocabulary(kSpecial, kVocab)), Error);
  EXPECT_THROW(WholeWordMasker({0.15, 0.8, 0.3}, Vocabulary(kSpecial, kVocab)), Error);
}

TEST(BatchOrder, EveryEpochIsAPermutationAndResumeContinuesExactly) {
  std::vector<uint32_t> all(103);
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = i * 2;
  BatchOrder order({all}, std::nullopt, 9);
  std::vector<uint32_t> seen;
  for (uint64_t b = 0; b < 103; ++b) order.next(b, 3, seen);  // 3 epochs exactly
  for (int e = 0; e < 3; ++e) {
    std::vector<uint32_t> epoch(seen.begin() + e * 103, seen.begin() + (e + 1) * 103);
    std::sort(epoch.begin(), epoch.end());
    EXPECT_EQ(epoch, all);
  }
  EXPECT_NE(std::vector<uint32_t>(seen.begin(), seen.begin() + 103),
            std::vector<uint32_t>(seen.begin() + 103, seen.begin() + 206));
  // Stop after 50 batches, restore the cursors into a new order: the rest is the same.
  BatchOrder first({all}, std::nullopt, 9);
  std::vector<uint32_t> head;
  for (uint64_t b = 0; b < 50; ++b) first.next(b, 3, head);
  BatchOrder resumed({all}, std::nullopt, 9);
  resumed.restore(first.cursors());
  std::vector<uint32_t> tail;
  for (uint64_t b = 50; b < 103; ++b) resumed.next(b, 3, tail);
  head.insert(head.end(), tail.begin(), tail.end());
  EXPECT_EQ(head, seen);
}

// --batch-tokens: every example once, within the budget (an over-long one alone), lengths sorted
// within and across batches, the batch order seeded, and the same batch count for any order.
TEST(TokenBudgetBatches, BucketsWithinTheBudgetInASeededOrder) {
  std::vector<int64_t> lengths(200);
  Rng lengths_rng(3, 0);
  for (int64_t& n : lengths) n = 5 + static_cast<int64_t>(lengths_rng.below(120));
  lengths[17] = 700;  // longer than the budget
  std::vector<uint32_t> order(lengths.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = (i * 37) % 200;
  Rng rng(11, 1);
  const auto batches = token_budget_batches(order, lengths, 512, rng);
  std::vector<uint32_t> seen;
  std::vector<int64_t> longest;
  for (const auto& b : batches) {
    int64_t tokens = 0;
    for (uint32_t i : b) tokens += lengths[i];
    EXPECT_TRUE(tokens <= 512 || b.size() == 1) << tokens;
    for (size_t k = 1; k < b.size(); ++k) EXPECT_GE(lengths[b[k - 1]], lengths[b[k]]);
    seen.insert(seen.end(), b.begin(), b.end());
    longest.push_back(lengths[b.front()]);
  }
  std::sort(seen.begin(), seen.end());
  for (uint32_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], i);
  EXPECT_FALSE(std::is_sorted(longest.rbegin(), longest.rend()));  // the batches are shuffled
  Rng again(11, 1), other(12, 1);
  EXPECT_EQ(token_budget_batches(order, lengths, 512, again), batches);
  std::vector<uint32_t> reversed(order.rbegin(), order.rend());
  EXPECT_EQ(token_budget_batches(reversed, lengths, 512, other).size(), batches.size());
  EXPECT_THROW(token_budget_batches(order, lengths, 0, rng), UsageError);
}

TEST(BatchOrder, LanguagePerBatchFollowsTheSampler) {
  std::vector<std::vector<uint32_t>> groups(3);
  for (uint32_t i = 0; i < 900; ++i) groups[i < 800 ? 0 : i < 890 ? 1 : 2].push_back(i);
  std::vector<double> sizes{800, 90, 10};
  sample::LanguageSampler sampler({"en", "de", "sw"}, sizes, 0.3, 5);
  BatchOrder order(groups, sampler, 5);
  std::map<size_t, size_t> batches;
  const size_t n = 20000;
  for (uint64_t b = 0; b < n; ++b) {
    std::vector<uint32_t> seqs;
    order.next(b, 4, seqs);
    size_t g = seqs[0] < 800 ? 0 : seqs[0] < 890 ? 1 : 2;
    for (uint32_t s : seqs) EXPECT_EQ(s < 800 ? 0u : s < 890 ? 1u : 2u, g);  // one language per batch
    EXPECT_EQ(g, sampler.pick(b));
    ++batches[g];
  }
  for (size_t g = 0; g < 3; ++g)
    EXPECT_NEAR(static_cast<double>(batches[g]) / n, sampler.probabilities()[g], 0.015) << g;
}

TEST(Schedule, LinearWarmupAndDecay) {
  nn::OptimizerOptions o;
  o.lr = 1.0;
  o.warmup_steps = 4;
  o.total_steps = 12;
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(o, 0), 0.0);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(o, 2), 0.5);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(o, 4), 1.0);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(o, 8), 0.5);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(o, 12), 0.0);
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(o, 20), 0.0);
  o.total_steps = 0;
  EXPECT_DOUBLE_EQ(nn::scheduled_lr(o, 100), 1.0);
}

}  // namespace

// --precision bf16 is refused on a GPU below sm_80 (V100: sm_70) in one line naming the GPU; fp16 and
// fp32 run there, and bf16 runs from sm_80 up. The GPU's compute capability decides, whatever the
// build targets (a V100 build JIT-compiles its PTX on newer GPUs).
TEST(Precision, Bf16NeedsAnAmpereGpuWhateverTheBuild) {
  try {
    kglm::train::require_precision_on_gpu("bf16", 70, "Tesla V100-SXM2-32GB");
    FAIL() << "bf16 accepted on sm_70";
  } catch (const kglm::Error& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "--precision bf16 needs an Ampere or newer GPU (sm_80+); Tesla V100-SXM2-32GB has sm_70: use --precision fp16");
  }
  EXPECT_THROW(kglm::train::require_precision_on_gpu("bf16", 75, "T4"), kglm::Error);
  for (int capability : {70, 75, 80, 90}) {
    EXPECT_NO_THROW(kglm::train::require_precision_on_gpu("fp16", capability, "gpu"));
    EXPECT_NO_THROW(kglm::train::require_precision_on_gpu("fp32", capability, "gpu"));
  }
  EXPECT_NO_THROW(kglm::train::require_precision_on_gpu("bf16", 80, "A100"));
  EXPECT_NO_THROW(kglm::train::require_precision_on_gpu("bf16", 90, "H100"));
}
