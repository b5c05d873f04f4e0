#include "train/frozen/treebank.hpp"

#include "nn/ops/cross_entropy.hpp"

namespace kglm::train::frozen {

TagColumn conllu_tag_column(int column) {
  if (column == -1 || column == 3) return TagColumn::upos;
  if (column == 4) return TagColumn::xpos;
  throw UsageError("--tag-column for CoNLL-U is 3 (UPOS, the default) or 4 (XPOS), not " + std::to_string(column));
}

const std::string& Treebank::tag(size_t sentence, size_t word, TagColumn column) const {
  const tasks::ConlluWord& w = sentences[sentence].words[word];
  return column == TagColumn::upos ? w.upos : w.xpos;
}

Treebank read_treebank(const std::string& lang, const std::string& path, ErrorCounter& errors) {
  Treebank t;
  t.lang = lang;
  t.path = path;
  t.sentences = tasks::read_conllu(path, errors);
  t.first.reserve(t.sentences.size() + 1);
  t.first.push_back(0);
  for (const tasks::ConlluSentence& s : t.sentences)
    t.first.push_back(t.first.back() + static_cast<int64_t>(s.words.size()));
  return t;
}

void prepare_treebank(Treebank& t, const tasks::LabelSet& tags, const tasks::LabelSet& deprels, TagColumn column,
                      FrozenEncoder& encoder, int64_t layer, uint64_t& unknown) {
  t.tags.clear(), t.heads.clear(), t.deprels.clear();
  std::vector<Words> words;
  words.reserve(t.sentences.size());
  auto id = [&](const tasks::LabelSet& labels, const std::string& name) {
    if (labels.size() == 0) return nn::kIgnoreIndex;
    const int32_t i = labels.id(name);
    if (i < 0) ++unknown;
    return i < 0 ? nn::kIgnoreIndex : i;
  };
  for (size_t s = 0; s < t.sentences.size(); ++s) {
    Words& w = words.emplace_back();
    for (size_t i = 0; i < t.sentences[s].words.size(); ++i) {
      const tasks::ConlluWord& word = t.sentences[s].words[i];
      w.push_back(word.form);
      t.tags.push_back(id(tags, t.tag(s, i, column)));
      t.heads.push_back(word.head);
      t.deprels.push_back(word.head == tasks::kNoHead ? nn::kIgnoreIndex : id(deprels, word.deprel));
    }
  }
  t.features = std::make_unique<FeatureCache>(encoder, words, layer);
}

}  // namespace kglm::train::frozen
