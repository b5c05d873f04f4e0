// The scores fine-tuning reports, computed as the papers' evaluation scripts compute them, so that
// kglm's numbers can be put beside theirs: entity-level precision, recall and F1 with seqeval's
// default chunking (what XTREME, KMLM and EntityCS report for NER and slot filling), accuracy, and
// macro-F1 over labels (as scikit-learn's average="macro", for relation classification).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kglm::train::tasks {

// One entity of a tag sequence: its type and first and last positions (inclusive), counted over
// the sentences laid end to end with one O after each (so no entity crosses a sentence).
struct Entity {
  std::string type;
  size_t first = 0, last = 0;
  bool operator==(const Entity&) const = default;
  auto operator<=>(const Entity&) const = default;
};

// The entities of tagged sentences, by seqeval's default (non-strict) rules, which read IOB2, IOB1
// and BIOES alike: a tag is O, or P-TYPE with P one of B, I, E, S (a bare P has type "_"; the type
// is everything after the first hyphen). An entity starts at B or S, at I or E after O, E or S,
// and wherever the type changes; it ends before a B, S or O that follows B or I, after every E and
// S, and wherever the type changes. So I-PER after O starts an entity, and B-PER I-LOC is two.
// Throws kglm::Error naming the sentence and position of any other tag.
std::vector<Entity> entities(const std::vector<std::vector<std::string>>& sentences);

// seqeval's strict mode (mode="strict" with a scheme): tags are read by the scheme's own rules, an
// entity is kept only when it starts and ends as the scheme says (IOB2: B then I of its type; an I
// after O is no entity), and a prefix the scheme does not allow is an error. The type is what follows
// the prefix with its hyphens trimmed ("_" when none).
enum class TagScheme { iob1, ioe1, iob2, ioe2, iobes, bilou };
// "IOB1", "IOE1", "IOB2", "IOE2", "IOBES", "BILOU" (any case); throws Error naming the choices.
TagScheme parse_tag_scheme(const std::string& name);
std::vector<Entity> strict_entities(const std::vector<std::vector<std::string>>& sentences, TagScheme scheme);

struct Scores {
  int64_t correct = 0, predicted = 0, gold = 0;
  double precision = 0, recall = 0, f1 = 0;  // 0 where undefined (nothing predicted, no gold)
};

// Micro-averaged over every entity: a predicted entity is correct when one of the gold entities
// has its type, first and last position. The sentences must match in number and length.
// strict: seqeval's strict mode with that scheme; otherwise its default rules (entities above).
struct EntityRules {
  bool strict = false;
  TagScheme scheme = TagScheme::iob2;
};
// {} for "", else strict mode in the scheme named (parse_tag_scheme).
EntityRules entity_rules(const std::string& strict_scheme);
Scores entity_scores(const std::vector<std::vector<std::string>>& gold,
                     const std::vector<std::vector<std::string>>& predicted, EntityRules rules = {});

// The share of positions whose labels agree.
double accuracy(const std::vector<int32_t>& gold, const std::vector<int32_t>& predicted);

// The mean over the labels that occur in gold or predicted of each label's F1 (0 where undefined).
double macro_f1(const std::vector<int32_t>& gold, const std::vector<int32_t>& predicted);

}  // namespace kglm::train::tasks
