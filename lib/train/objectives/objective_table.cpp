#include "train/objectives/objective_table.hpp"

#include "core/error.hpp"
#include "train/objectives/reasoning.hpp"

namespace kglm::train {

namespace {

constexpr std::array<std::pair<const char*, EntityStrategy>, 4> kEntityStrategies = {
    {{"wep", EntityStrategy::wep},
     {"pep-mrs", EntityStrategy::pep_mrs},
     {"pep-ms", EntityStrategy::pep_ms},
     {"pep-m", EntityStrategy::pep_m}}};

constexpr const char* kKnownObjectives =
    "mlm, knowledge, reasoning, wep, pep-mrs, pep-ms, pep-m, wep+mlm, pep-mrs+mlm, pep-ms+mlm, pep-m+mlm";

bool is_reasoning(SequenceKind k) { return k == SequenceKind::reasoning_3 || k == SequenceKind::reasoning_4; }

}  // namespace

std::string objective_name(const Objective& o) {
  switch (o.kind) {
    case Objective::Kind::mlm:
      return "mlm";
    case Objective::Kind::knowledge:
      return "knowledge";
    case Objective::Kind::reasoning:
      return "reasoning";
    case Objective::Kind::entity:
      break;
  }
  std::string name;
  for (const auto& [n, s] : kEntityStrategies)
    if (s == o.entity.strategy) name = n;
  return o.entity.with_mlm ? name + "+mlm" : name;
}

Objective parse_objective(std::string_view name) {
  Objective o;
  if (name == "mlm") return o;
  if (name == "knowledge") {
    o.kind = Objective::Kind::knowledge;
    return o;
  }
  if (name == "reasoning") {
    o.kind = Objective::Kind::reasoning;
    return o;
  }
  std::string_view base = name;
  if (base.ends_with("+mlm")) {
    o.entity.with_mlm = true;
    base.remove_suffix(4);
  }
  for (const auto& [n, s] : kEntityStrategies)
    if (base == n) {
      o.kind = Objective::Kind::entity;
      o.entity.strategy = s;
      return o;
    }
  throw UsageError("unknown objective '" + std::string(name) + "' (known: " + kKnownObjectives + ")");
}

ObjectiveTable::ObjectiveTable(const Objective& entity_objective) {
  for (uint8_t k = 0; k < kSequenceKindCount; ++k) {
    const auto kind = static_cast<SequenceKind>(k);
    Objective& o = table_[k];
    switch (kind) {
      case SequenceKind::text:
      case SequenceKind::annotated:
        break;
      case SequenceKind::kmlm:
      case SequenceKind::kmlm_parallel:
      case SequenceKind::kmlm_alias:
        o.kind = Objective::Kind::knowledge;
        break;
      case SequenceKind::reasoning_3:
      case SequenceKind::reasoning_4:
        o.kind = Objective::Kind::reasoning;
        break;
      case SequenceKind::entitycs:
        o = entity_objective;
        break;
    }
  }
}

void ObjectiveTable::assign(std::string_view spec) {
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw UsageError("--objective: '" + std::string(item) + "' is not KIND=OBJECTIVE");
    const std::string_view kind_name = item.substr(0, eq);
    const Objective objective = parse_objective(item.substr(eq + 1));
    bool matched = false;
    for (uint8_t k = 0; k < kSequenceKindCount; ++k) {
      const auto kind = static_cast<SequenceKind>(k);
      const bool group =
          (kind_name == "reasoning" && is_reasoning(kind)) ||
          (kind_name == "kmlm-all" &&
           (kind == SequenceKind::kmlm || kind == SequenceKind::kmlm_parallel || kind == SequenceKind::kmlm_alias));
      if (!group && kind_name != sequence_kind_name(kind)) continue;
      if (objective.kind == Objective::Kind::reasoning && !is_reasoning(kind))
        throw UsageError("--objective: reasoning needs kg-cycles samples (reasoning-3, reasoning-4), not " +
                         std::string(sequence_kind_name(kind)) + " sequences");
      table_[k] = objective;
      matched = true;
    }
    if (!matched) {
      std::string known;
      for (uint8_t k = 0; k < kSequenceKindCount; ++k)
        known += std::string(k ? ", " : "") + sequence_kind_name(static_cast<SequenceKind>(k));
      throw UsageError("--objective: unknown sequence kind '" + std::string(kind_name) + "' (known: " + known +
                       ", and the groups reasoning, kmlm-all)");
    }
  }
}

std::string ObjectiveTable::to_string() const {
  std::string s;
  for (uint8_t k = 0; k < kSequenceKindCount; ++k)
    s += std::string(k ? "," : "") + sequence_kind_name(static_cast<SequenceKind>(k)) + "=" + objective_name(table_[k]);
  return s;
}

ObjectiveTable make_objective_table(std::string_view entity_objective, std::string_view spec) {
  ObjectiveTable table(parse_objective(entity_objective.empty() ? kDefaultEntityObjective : entity_objective));
  table.assign(spec);
  return table;
}

ObjectiveMasker::ObjectiveMasker(const ObjectiveTable& table, const MaskingOptions& masking, const Vocabulary& vocab)
    : table_(table) {
  for (uint8_t k = 0; k < kSequenceKindCount; ++k) {
    const Objective& o = table_[static_cast<SequenceKind>(k)];
    switch (o.kind) {
      case Objective::Kind::mlm:
        by_kind_[k] = std::make_unique<WholeWordMasker>(masking, vocab);
        break;
      case Objective::Kind::knowledge:
        by_kind_[k] = std::make_unique<WholeWordMasker>(masking, vocab, kInEntity | kInRelation, LossTerm::knowledge);
        break;
      case Objective::Kind::reasoning:
        by_kind_[k] = std::make_unique<ReasoningMasker>(ReasoningOptions{}, vocab);
        break;
      case Objective::Kind::entity:
        by_kind_[k] = std::make_unique<EntityPredictionMasker>(o.entity, vocab);
        break;
    }
  }
}

void ObjectiveMasker::mask(const Sequence& seq, Rng& rng, std::span<int32_t> out,
                           std::vector<MaskedToken>& masked) const {
  by_kind_[static_cast<size_t>(seq.kind)]->mask(seq, rng, out, masked);
}

}  // namespace kglm::train
