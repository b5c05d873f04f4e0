// Which objective each kind of sequence is trained with (`pretrain --objective KIND=OBJ,...`) and
// the masker that applies it: one run may mix plain text, KMLM knowledge sentences, reasoning
// cycles and EntityCS sentences, even within one batch.
//
// Objectives: mlm (whole-word MLM, --mask-prob), knowledge (KMLM L_K: whole-word MLM on entity and
// relation tokens), reasoning (KMLM L_R, 3- and 4-cycle rules), and EntityCS's wep, pep-mrs,
// pep-ms, pep-m and their +mlm forms. Defaults: text and annotated → mlm; kmlm, kmlm-parallel,
// kmlm-alias → knowledge; reasoning-3, reasoning-4 → reasoning; entitycs → --entity-objective
// (default pep-ms+mlm, the EntityCS paper's best model).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "train/objectives/entity_prediction.hpp"
#include "train/objectives/masker.hpp"
#include "train/objectives/whole_word.hpp"

namespace kglm::train {

inline constexpr const char* kDefaultEntityObjective = "pep-ms+mlm";

struct Objective {
  enum class Kind : uint8_t { mlm, knowledge, reasoning, entity } kind = Kind::mlm;
  EntityPredictionOptions entity;  // kind == entity
  bool operator==(const Objective&) const = default;
};

// "mlm", "knowledge", "reasoning", "wep", "pep-ms+mlm", ...; parse throws UsageError naming the
// known ones.
std::string objective_name(const Objective& o);
Objective parse_objective(std::string_view name);

class ObjectiveTable {
 public:
  // The defaults, with EntityCS sentences trained by `entity_objective`.
  explicit ObjectiveTable(const Objective& entity_objective = parse_objective(kDefaultEntityObjective));
  // Applies "KIND=OBJ,KIND=OBJ" on top (KIND: a sequence kind name, or "reasoning" for both cycle
  // kinds, "kmlm-all" for the three KMLM kinds). Throws UsageError on an unknown name or an
  // objective that cannot apply to the kind (reasoning needs cycle samples).
  void assign(std::string_view spec);
  const Objective& operator[](SequenceKind k) const { return table_[static_cast<size_t>(k)]; }
  // "text=mlm,annotated=mlm,kmlm=knowledge,...": every kind, in kind order (kept in checkpoints).
  std::string to_string() const;

 private:
  std::array<Objective, kSequenceKindCount> table_;
};

// The table of `pretrain --entity-objective E --objective SPEC` ("" = the default for either).
ObjectiveTable make_objective_table(std::string_view entity_objective, std::string_view spec);

// Dispatches each sequence to its kind's masker.
class ObjectiveMasker : public Masker {
 public:
  ObjectiveMasker(const ObjectiveTable& table, const MaskingOptions& masking, const Vocabulary& vocab);
  void mask(const Sequence& seq, Rng& rng, std::span<int32_t> out, std::vector<MaskedToken>& masked) const override;
  const ObjectiveTable& table() const { return table_; }

 private:
  ObjectiveTable table_;
  std::array<std::unique_ptr<Masker>, kSequenceKindCount> by_kind_;
};

}  // namespace kglm::train
