#include "train/frozen/frozen_data.hpp"

#include "nn/ops/cross_entropy.hpp"
#include "text/word_splitter.hpp"
#include "train/tasks/example_readers.hpp"

namespace kglm::train::frozen {

TagColumn conllu_tag_column(int column) {
  if (column == -1 || column == 3) return TagColumn::upos;
  if (column == 4) return TagColumn::xpos;
  throw UsageError("--tag-column for CoNLL-U is 3 (UPOS, the default) or 4 (XPOS), not " + std::to_string(column));
}

const std::string& FrozenData::tag(size_t sentence, size_t word, TagColumn column) const {
  const tasks::ConlluWord& w = sentences[sentence].words[word];
  return column == TagColumn::upos ? w.upos : w.xpos;
}

std::vector<uint32_t> FrozenData::feature_sentences(std::span<const uint32_t> examples) const {
  if (!is_pairs()) return {examples.begin(), examples.end()};
  std::vector<uint32_t> out;
  out.reserve(2 * examples.size());
  for (uint32_t e : examples) out.insert(out.end(), {2 * e, 2 * e + 1});
  return out;
}

namespace {

// Numbers a label: its id, or kIgnoreIndex (counted in unknown) when the labels lack it; with no
// labels at all, kIgnoreIndex.
int32_t label_id(const tasks::LabelSet& labels, const std::string& name, uint64_t& unknown) {
  if (labels.size() == 0) return nn::kIgnoreIndex;
  const int32_t i = labels.id(name);
  if (i < 0) ++unknown;
  return i < 0 ? nn::kIgnoreIndex : i;
}

void set_first(FrozenData& t, std::span<const Words> sentences) {
  t.first.assign(1, 0);
  t.first.reserve(sentences.size() + 1);
  for (const Words& w : sentences) t.first.push_back(t.first.back() + static_cast<int64_t>(w.size()));
}

}  // namespace

FrozenData read_treebank(const std::string& lang, const std::string& path, ErrorCounter& errors) {
  FrozenData t;
  t.lang = lang;
  t.path = path;
  t.sentences = tasks::read_conllu(path, errors);
  t.first.reserve(t.sentences.size() + 1);
  t.first.push_back(0);
  for (const tasks::ConlluSentence& s : t.sentences)
    t.first.push_back(t.first.back() + static_cast<int64_t>(s.words.size()));
  return t;
}

void prepare_treebank(FrozenData& t, const tasks::LabelSet& tags, const tasks::LabelSet& deprels, TagColumn column,
                      FrozenEncoder& encoder, int64_t layer, uint64_t& unknown) {
  t.tags.clear(), t.heads.clear(), t.deprels.clear();
  std::vector<Words> words;
  words.reserve(t.sentences.size());
  for (size_t s = 0; s < t.sentences.size(); ++s) {
    Words& w = words.emplace_back();
    for (size_t i = 0; i < t.sentences[s].words.size(); ++i) {
      const tasks::ConlluWord& word = t.sentences[s].words[i];
      w.push_back(word.form);
      t.tags.push_back(label_id(tags, t.tag(s, i, column), unknown));
      t.heads.push_back(word.head);
      t.deprels.push_back(word.head == tasks::kNoHead ? nn::kIgnoreIndex : label_id(deprels, word.deprel, unknown));
    }
  }
  t.features = std::make_unique<FeatureCache>(encoder, words, layer);
}

FrozenData read_pairs(const std::string& lang, const std::string& path, const tasks::TsvColumns& columns,
                      ErrorCounter& errors) {
  FrozenData t;
  t.lang = lang;
  t.path = path;
  text::WordSplitter splitter(lang.empty() ? "en" : lang);
  std::vector<text::WordSpan> spans;
  auto split = [&](const std::string& text, Words& out) {
    splitter.split(text, spans);
    for (const text::WordSpan& s : spans) out.push_back(text.substr(s.begin, s.end - s.begin));
  };
  for (tasks::SentenceExample& e : tasks::read_sentence_tsv(path, columns, errors)) {
    Words premise, hypothesis;
    split(e.text, premise);
    split(e.pair, hypothesis);
    if (premise.empty() || hypothesis.empty()) {
      errors.record(path, e.line, "a sentence of the pair has no words");
      continue;
    }
    t.pair_words.push_back(std::move(premise));
    t.pair_words.push_back(std::move(hypothesis));
    t.pairs.push_back(std::move(e));
  }
  if (t.pairs.empty()) throw Error(path + ": no sentence pair with words on both sides");
  set_first(t, t.pair_words);
  return t;
}

void prepare_pairs(FrozenData& t, const tasks::LabelSet& labels, FrozenEncoder& encoder, int64_t layer,
                   uint64_t& unknown) {
  t.labels.clear();
  for (const tasks::SentenceExample& e : t.pairs) t.labels.push_back(label_id(labels, e.label, unknown));
  t.features = std::make_unique<FeatureCache>(encoder, t.pair_words, layer);
}

}  // namespace kglm::train::frozen
