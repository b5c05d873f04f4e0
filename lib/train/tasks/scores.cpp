#include "train/tasks/scores.hpp"

#include <algorithm>
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

Scores entity_scores(const std::vector<std::vector<std::string>>& gold,
                     const std::vector<std::vector<std::string>>& predicted) {
  if (gold.size() != predicted.size())
    throw Error("entity scores: " + std::to_string(gold.size()) + " gold and " + std::to_string(predicted.size()) +
                " predicted sentences");
  for (size_t s = 0; s < gold.size(); ++s)
    if (gold[s].size() != predicted[s].size())
      throw Error("entity scores: sentence " + std::to_string(s + 1) + " has " + std::to_string(gold[s].size()) +
                  " gold and " + std::to_string(predicted[s].size()) + " predicted tags");
  const std::vector<Entity> g = entities(gold), p = entities(predicted);
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
