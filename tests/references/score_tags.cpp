// kglm's scorers on tag and label sequences from a file, for the seqeval and scikit-learn
// comparisons (seqeval_check.py): the test drives kglm's own functions, not a copy of them.
//   score_tags entities [--strict SCHEME] FILE   FILE: one sentence a line, "GOLD<TAB>PREDICTED", tags
//                                                 separated by spaces, a line "#" after each corpus;
//                                                 prints "correct predicted gold P R F1" per corpus, or
//                                                 "error MESSAGE" where kglm refuses its tags
//   score_tags labels FILE                        FILE: "GOLD PREDICTED" integers a line, "#" after each
//                                                 corpus; prints "accuracy macro-F1" per corpus
//   score_tags answers LANG FILE                  FILE: "PREDICTION<TAB>GOLD" a line; prints the QA
//                                                 "exact-match F1" of each line by LANG's rules
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "train/tasks/qa_scores.hpp"
#include "train/tasks/scores.hpp"

using namespace kglm::train::tasks;

namespace {

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Calls score(lines) for each corpus of the file (its lines up to a line "#").
template <class Score>
void each_corpus(const std::string& path, Score score) {
  std::ifstream in(path);
  if (!in) throw kglm::Error("cannot read " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (line != "#") {
      lines.push_back(line);
      continue;
    }
    try {
      score(lines);
    } catch (const kglm::Error& e) {
      std::printf("error %s\n", e.what());
    }
    lines.clear();
  }
}

int entities_main(const std::string& path, const EntityRules& rules) {
  each_corpus(path, [&](const std::vector<std::string>& lines) {
    std::vector<std::vector<std::string>> gold, predicted;
    for (const std::string& line : lines) {
      const size_t tab = line.find('\t');
      gold.push_back(words(line.substr(0, tab)));
      predicted.push_back(words(tab == std::string::npos ? "" : line.substr(tab + 1)));
    }
    const Scores s = entity_scores(gold, predicted, rules);
    std::printf("%lld %lld %lld %.17g %.17g %.17g\n", static_cast<long long>(s.correct),
                static_cast<long long>(s.predicted), static_cast<long long>(s.gold), s.precision, s.recall, s.f1);
  });
  return 0;
}

int labels_main(const std::string& path) {
  each_corpus(path, [](const std::vector<std::string>& lines) {
    std::vector<int32_t> gold, predicted;
    for (const std::string& line : lines) {
      std::istringstream in(line);
      int32_t g = 0, p = 0;
      in >> g >> p;
      gold.push_back(g);
      predicted.push_back(p);
    }
    std::printf("%.17g %.17g\n", accuracy(gold, predicted), macro_f1(gold, predicted));
  });
  return 0;
}

int answers_main(const std::string& lang, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw kglm::Error("cannot read " + path);
  const QaRules rules = qa_rules_for(lang);
  for (std::string line; std::getline(in, line);) {
    const size_t tab = line.find('\t');
    const std::string prediction = line.substr(0, tab), gold = tab == std::string::npos ? "" : line.substr(tab + 1);
    std::printf("%.17g %.17g\n", answer_exact_match(prediction, gold, rules, lang),
                answer_f1(prediction, gold, rules, lang));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 2 && args[0] == "labels") return labels_main(args[1]);
    if (args.size() == 3 && args[0] == "answers") return answers_main(args[1], args[2]);
    if (args.size() == 2 && args[0] == "entities") return entities_main(args[1], {});
    if (args.size() == 4 && args[0] == "entities" && args[1] == "--strict")
      return entities_main(args[3], {true, parse_tag_scheme(args[2])});
    std::cerr << "usage: score_tags entities [--strict SCHEME] FILE | score_tags labels FILE | score_tags answers LANG "
                 "FILE\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "score_tags: " << e.what() << "\n";
    return 1;
  }
}
