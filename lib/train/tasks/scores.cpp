#include "train/tasks/scores.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/error.hpp"

namespace kglm::train::tasks {

namespace {

struct Tag {
  char prefix = 'O';  // O, B, I, E or S
  std::string type = "_";
};

Tag parse_tag(const std::string& tag, size_t sentence, size_t position) {
  if (tag == "O") return {};
  const bool prefixed = tag.size() >= 1 && (tag[0] == 'B' || tag[0] == 'I' || tag[0] == 'E' || tag[0] == 'S');
  if (!prefixed || (tag.size() > 1 && tag[1] != '-'))
    throw Error("sentence " + std::to_string(sentence + 1) + ", word " + std::to_string(position + 1) + ": tag \"" +
                tag + "\" is neither O nor B-, I-, E- or S- and a type");
  const std::string type = tag.size() > 2 ? tag.substr(2) : "";
  return {tag[0], type.empty() ? "_" : type};
}

bool inside(char p) { return p == 'B' || p == 'I'; }

// Between the previous tag and this one: does an entity end, does one start?
bool ends(const Tag& prev, const Tag& tag) {
  if (prev.prefix == 'E' || prev.prefix == 'S') return true;
  if (inside(prev.prefix) && (tag.prefix == 'B' || tag.prefix == 'S' || tag.prefix == 'O')) return true;
  return prev.prefix != 'O' && prev.type != tag.type;
}

bool starts(const Tag& prev, const Tag& tag) {
  if (tag.prefix == 'B' || tag.prefix == 'S') return true;
  if ((tag.prefix == 'I' || tag.prefix == 'E') && (prev.prefix == 'O' || prev.prefix == 'E' || prev.prefix == 'S'))
    return true;
  return tag.prefix != 'O' && prev.type != tag.type;
}

}  // namespace

std::vector<Entity> entities(const std::vector<std::vector<std::string>>& sentences) {
  std::vector<Entity> found;
  Tag prev;
  prev.type.clear();  // before the first tag: no type, so that a first tag of type "_" still starts
  size_t position = 0, first = 0;
  auto step = [&](const Tag& tag) {
    if (ends(prev, tag)) found.push_back({prev.type, first, position - 1});
    if (starts(prev, tag)) first = position;
    prev = tag;
    ++position;
  };
  for (size_t s = 0; s < sentences.size(); ++s) {
    for (size_t w = 0; w < sentences[s].size(); ++w) step(parse_tag(sentences[s][w], s, w));
    step(Tag{});  // the O after each sentence
  }
  return found;
}

namespace {

// Strict mode, written here after seqeval's scheme tables (seqeval/scheme.py): each scheme names the
// prefixes it allows and, as (previous prefixes, current prefixes, type condition) patterns, where a
// chunk starts, continues and ends.
enum Prefix : uint8_t { kI = 1, kO = 2, kB = 4, kE = 8, kS = 16, kU = 32, kL = 64, kAny = 127 };
enum class TypeCondition { same, different, any };
struct Pattern {
  uint8_t previous, current;
  TypeCondition type;
};
struct SchemeRules {
  const char* name;
  uint8_t allowed;
  std::vector<Pattern> start, inside, end;
};

using TC = TypeCondition;
const SchemeRules& rules_of(TagScheme scheme) {
  static const SchemeRules iob1{
      "IOB1",
      kI | kO | kB,
      {{kO, kI, TC::any}, {kI, kI, TC::different}, {kB, kI, TC::any}, {kI, kB, TC::same}, {kB, kB, TC::same}},
      {{kB, kI, TC::same}, {kI, kI, TC::same}},
      {{kI, kI, TC::different},
       {kI, kO, TC::any},
       {kI, kB, TC::any},
       {kB, kO, TC::any},
       {kB, kI, TC::different},
       {kB, kB, TC::same}}};
  static const SchemeRules ioe1{
      "IOE1",
      kI | kO | kE,
      {{kO, kI, TC::any}, {kI, kI, TC::different}, {kE, kI, TC::any}, {kE, kE, TC::same}},
      {{kI, kI, TC::same}, {kI, kE, TC::same}},
      {{kI, kI, TC::different}, {kI, kO, TC::any}, {kI, kE, TC::different}, {kE, kI, TC::same}, {kE, kE, TC::same}}};
  static const SchemeRules iob2{"IOB2",
                                kI | kO | kB,
                                {{kAny, kB, TC::any}},
                                {{kB, kI, TC::same}, {kI, kI, TC::same}},
                                {{kI, kO, TC::any},
                                 {kI, kI, TC::different},
                                 {kI, kB, TC::any},
                                 {kB, kO, TC::any},
                                 {kB, kI, TC::different},
                                 {kB, kB, TC::any}}};
  static const SchemeRules ioe2{"IOE2",
                                kI | kO | kE,
                                {{kO, kI, TC::any},
                                 {kO, kE, TC::any},
                                 {kE, kI, TC::any},
                                 {kE, kE, TC::any},
                                 {kI, kI, TC::different},
                                 {kI, kE, TC::different}},
                                {{kI, kE, TC::same}, {kI, kI, TC::same}},
                                {{kE, kAny, TC::any}}};
  static const SchemeRules iobes{"IOBES",
                                 kI | kO | kB | kE | kS,
                                 {{kAny, kB, TC::any}, {kAny, kS, TC::any}},
                                 {{kB, kI, TC::same}, {kB, kE, TC::same}, {kI, kI, TC::same}, {kI, kE, TC::same}},
                                 {{kS, kAny, TC::any}, {kE, kAny, TC::any}}};
  static const SchemeRules bilou{"BILOU",
                                 kB | kI | kL | kO | kU,
                                 {{kAny, kB, TC::any}, {kAny, kU, TC::any}},
                                 {{kB, kI, TC::same}, {kB, kL, TC::same}, {kI, kI, TC::same}, {kI, kL, TC::same}},
                                 {{kU, kAny, TC::any}, {kL, kAny, TC::any}}};
  switch (scheme) {
    case TagScheme::iob1:
      return iob1;
    case TagScheme::ioe1:
      return ioe1;
    case TagScheme::iob2:
      return iob2;
    case TagScheme::ioe2:
      return ioe2;
    case TagScheme::iobes:
      return iobes;
    case TagScheme::bilou:
      return bilou;
  }
  return iob2;
}

struct StrictTag {
  uint8_t prefix = kO;
  std::string type = "_";
};

StrictTag parse_strict_tag(const std::string& tag, const SchemeRules& rules, size_t sentence, size_t position) {
  static const std::string prefixes = "IOBESUL";
  const size_t p = tag.empty() ? std::string::npos : prefixes.find(tag[0]);
  StrictTag t;
  if (p != std::string::npos) t.prefix = static_cast<uint8_t>(1u << p);
  if (p == std::string::npos || !(t.prefix & rules.allowed))
    throw Error("sentence " + std::to_string(sentence + 1) + ", word " + std::to_string(position + 1) + ": tag \"" +
                tag + "\" has a prefix the " + rules.name + " scheme does not allow");
  const size_t first = tag.find_first_not_of('-', 1), last = tag.find_last_not_of('-');
  if (first != std::string::npos && last >= first) t.type = tag.substr(first, last - first + 1);
  return t;
}

bool matches(const std::vector<Pattern>& patterns, const StrictTag& previous, const StrictTag& current) {
  for (const Pattern& p : patterns) {
    if (!(p.previous & previous.prefix) || !(p.current & current.prefix)) continue;
    if (p.type == TC::any || (p.type == TC::same) == (previous.type == current.type)) return true;
  }
  return false;
}

}  // namespace

TagScheme parse_tag_scheme(const std::string& name) {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (TagScheme s :
       {TagScheme::iob1, TagScheme::ioe1, TagScheme::iob2, TagScheme::ioe2, TagScheme::iobes, TagScheme::bilou})
    if (upper == rules_of(s).name) return s;
  throw Error("unknown tag scheme \"" + name + "\" (IOB1, IOE1, IOB2, IOE2, IOBES or BILOU)");
}

EntityRules entity_rules(const std::string& strict_scheme) {
  if (strict_scheme.empty()) return {};
  return {true, parse_tag_scheme(strict_scheme)};
}

std::vector<Entity> strict_entities(const std::vector<std::vector<std::string>>& sentences, TagScheme scheme) {
  const SchemeRules& rules = rules_of(scheme);
  std::vector<Entity> found;
  size_t base = 0;  // positions as entities() counts them: one O after each sentence
  for (size_t s = 0; s < sentences.size(); ++s) {
    std::vector<StrictTag> tags;
    for (size_t w = 0; w < sentences[s].size(); ++w) tags.push_back(parse_strict_tag(sentences[s][w], rules, s, w));
    tags.emplace_back();  // the closing O
    const StrictTag outside;
    size_t i = 0;
    const StrictTag* previous = &outside;
    while (i < tags.size()) {
      if (matches(rules.start, *previous, tags[i])) {
        size_t end = i + 1;
        while (end < tags.size() && matches(rules.inside, tags[end - 1], tags[end])) ++end;
        if (end == tags.size()) end = tags.size() - 2;  // seqeval's fallback; the closing O never continues a chunk
        if (matches(rules.end, tags[end - 1], tags[end])) found.push_back({tags[i].type, base + i, base + end - 1});
        i = end;
      } else {
        ++i;
      }
      previous = &tags[i - 1];
    }
    base += sentences[s].size() + 1;
  }
  return found;
}

Scores entity_scores(const std::vector<std::vector<std::string>>& gold,
                     const std::vector<std::vector<std::string>>& predicted, EntityRules rules) {
  if (gold.size() != predicted.size())
    throw Error("entity scores: " + std::to_string(gold.size()) + " gold and " + std::to_string(predicted.size()) +
                " predicted sentences");
  for (size_t s = 0; s < gold.size(); ++s)
    if (gold[s].size() != predicted[s].size())
      throw Error("entity scores: sentence " + std::to_string(s + 1) + " has " + std::to_string(gold[s].size()) +
                  " gold and " + std::to_string(predicted[s].size()) + " predicted tags");
  const std::vector<Entity> g = rules.strict ? strict_entities(gold, rules.scheme) : entities(gold),
                            p = rules.strict ? strict_entities(predicted, rules.scheme) : entities(predicted);
  const std::set<Entity> gold_set(g.begin(), g.end()), predicted_set(p.begin(), p.end());
  Scores r;
  r.gold = static_cast<int64_t>(gold_set.size());
  r.predicted = static_cast<int64_t>(predicted_set.size());
  for (const Entity& e : predicted_set) r.correct += gold_set.count(e);
  r.precision = r.predicted > 0 ? static_cast<double>(r.correct) / static_cast<double>(r.predicted) : 0.0;
  r.recall = r.gold > 0 ? static_cast<double>(r.correct) / static_cast<double>(r.gold) : 0.0;
  r.f1 = r.precision + r.recall > 0 ? 2 * r.precision * r.recall / (r.precision + r.recall) : 0.0;
  return r;
}

namespace {

void check_lengths(const std::vector<int32_t>& gold, const std::vector<int32_t>& predicted, const char* what) {
  if (gold.size() != predicted.size())
    throw Error(std::string(what) + ": " + std::to_string(gold.size()) + " gold and " +
                std::to_string(predicted.size()) + " predicted labels");
}

}  // namespace

double accuracy(const std::vector<int32_t>& gold, const std::vector<int32_t>& predicted) {
  check_lengths(gold, predicted, "accuracy");
  if (gold.empty()) return 0.0;
  size_t same = 0;
  for (size_t i = 0; i < gold.size(); ++i) same += gold[i] == predicted[i];
  return static_cast<double>(same) / static_cast<double>(gold.size());
}

double macro_f1(const std::vector<int32_t>& gold, const std::vector<int32_t>& predicted) {
  check_lengths(gold, predicted, "macro-F1");
  struct Counts {
    int64_t tp = 0, fp = 0, fn = 0;
  };
  std::map<int32_t, Counts> by_label;
  for (size_t i = 0; i < gold.size(); ++i) {
    if (gold[i] == predicted[i]) {
      ++by_label[gold[i]].tp;
    } else {
      ++by_label[predicted[i]].fp;
      ++by_label[gold[i]].fn;
    }
  }
  if (by_label.empty()) return 0.0;
  double sum = 0;
  for (const auto& [label, c] : by_label) {
    const double p = c.tp + c.fp > 0 ? static_cast<double>(c.tp) / static_cast<double>(c.tp + c.fp) : 0.0;
    const double r = c.tp + c.fn > 0 ? static_cast<double>(c.tp) / static_cast<double>(c.tp + c.fn) : 0.0;
    sum += p + r > 0 ? 2 * p * r / (p + r) : 0.0;
  }
  return sum / static_cast<double>(by_label.size());
}

}  // namespace kglm::train::tasks
