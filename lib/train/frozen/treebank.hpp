// A CoNLL-U file as the frozen-feature tasks read it: its sentences, each word's gold tag (UPOS or
// XPOS), head and relation as ids, and the words' frozen features (feature_cache.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "train/frozen/feature_cache.hpp"
#include "train/tasks/conllu.hpp"
#include "train/tasks/task_data.hpp"

namespace kglm::train::frozen {

enum class TagColumn : uint8_t { upos, xpos };
// --tag-column for CoNLL-U: -1 or 3 (UPOS), 4 (XPOS); UsageError otherwise.
TagColumn conllu_tag_column(int column);

struct Treebank {
  std::string lang, path;
  std::vector<tasks::ConlluSentence> sentences;
  std::vector<int64_t> first;    // the first word of each sentence in the per-word arrays, then the total
  std::vector<int32_t> tags;     // the gold tag's id (nn::kIgnoreIndex when the labels lack it)
  std::vector<int32_t> heads;    // HEAD (kNoHead where unannotated)
  std::vector<int32_t> deprels;  // the DEPREL's id (nn::kIgnoreIndex when the labels lack it)
  std::unique_ptr<FeatureCache> features;

  size_t words() const { return static_cast<size_t>(first.back()); }
  const std::string& tag(size_t sentence, size_t word, TagColumn column) const;
};

// Reads the sentences of PATH (bad ones reported to errors and skipped).
Treebank read_treebank(const std::string& lang, const std::string& path, ErrorCounter& errors);

// Numbers the gold tags and relations with the label sets (ids, or kIgnoreIndex for unknown ones)
// and computes the features; unknown counts what the labels lacked.
void prepare_treebank(Treebank& t, const tasks::LabelSet& tags, const tasks::LabelSet& deprels, TagColumn column,
                      FrozenEncoder& encoder, int64_t layer, uint64_t& unknown);

}  // namespace kglm::train::frozen
