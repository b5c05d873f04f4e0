// EntityCS's entity-prediction objectives (Whitehouse et al. 2022, §2.2 and Table 2) on cs-gen
// entitycs sentences, whose entities are the record's entity spans (the <e>…</e> markers are
// already gone from the text pretrain prepare tokenizes):
//   WEP      each entity with p = 1: every subword <mask> 80%, every subword kept (and predicted) 20%,
//            never random (a random subword would make the model predict a wrong entity);
//   PEP_MRS  each entity subword with p = 1: <mask> 80%, random 10%, kept 10% (all predicted);
//   PEP_MS   <mask> 80%, kept and predicted 10%; the other 10% are not predicted (Table 2: 80/0/10);
//   PEP_M    <mask> 80%; the other 20% are not predicted;
//   +MLM     the same with p = 0.5 for entities, and every non-entity subword a candidate with
//            p = 0.15 and the 80/10/10 rule (the loss over all predictions counts as L_MLM).
// Link slots and special tokens are never candidates.
#pragma once

#include <string_view>

#include "train/objectives/masker.hpp"

namespace kglm::train {

enum class EntityStrategy : uint8_t { wep, pep_mrs, pep_ms, pep_m };

struct EntityPredictionOptions {
  EntityStrategy strategy = EntityStrategy::wep;
  bool with_mlm = false;
  double entity_probability() const { return with_mlm ? 0.5 : 1.0; }
  double non_entity_probability = 0.15;  // with_mlm only
  bool operator==(const EntityPredictionOptions&) const = default;
};

class EntityPredictionMasker : public Masker {
 public:
  EntityPredictionMasker(const EntityPredictionOptions& options, const Vocabulary& vocab);
  void mask(const Sequence& seq, Rng& rng, std::span<int32_t> out, std::vector<MaskedToken>& masked) const override;

 private:
  // Decides one entity subword of PEP; false when it is not predicted.
  bool partial(Rng& rng, std::span<int32_t> out, MaskedToken& m) const;

  EntityPredictionOptions options_;
  Vocabulary vocab_;
};

}  // namespace kglm::train
