// The data of a frozen-feature task as its head reads it, with the frozen features of every
// sentence (feature_cache.hpp):
//  - pos, parse: a CoNLL-U file's sentences, each word's gold tag (UPOS or XPOS), head and relation;
//  - nli: a TSV file's sentence pairs (the TSV that `finetune --task sequence` reads), each split
//    into words (ICU word breaks for the pair's language) and labelled; pair i's premise and
//    hypothesis are sentences 2i and 2i + 1 of the features.
// An example is a sentence (pos, parse) or a pair (nli); batches are lists of examples.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "train/frozen/feature_cache.hpp"
#include "train/tasks/conllu.hpp"
#include "train/tasks/task_data.hpp"

namespace kglm::train::frozen {

enum class TagColumn : uint8_t { upos, xpos };
// --tag-column for CoNLL-U: -1 or 3 (UPOS), 4 (XPOS); UsageError otherwise.
TagColumn conllu_tag_column(int column);

struct FrozenData {
  std::string lang, path;
  std::vector<tasks::ConlluSentence> sentences;  // pos, parse
  std::vector<tasks::SentenceExample> pairs;     // nli: text = premise, pair = hypothesis
  std::vector<Words> pair_words;                 // nli: 2 per pair
  std::vector<int64_t> first;    // the first word of each features' sentence in the per-word arrays, then the total
  std::vector<int32_t> tags;     // the gold tag's id (nn::kIgnoreIndex when the labels lack it)
  std::vector<int32_t> heads;    // HEAD (kNoHead where unannotated)
  std::vector<int32_t> deprels;  // the DEPREL's id (nn::kIgnoreIndex when the labels lack it)
  std::vector<int32_t> labels;   // nli: the gold label's id per pair (nn::kIgnoreIndex when unknown)
  std::unique_ptr<FeatureCache> features;

  bool is_pairs() const { return !pairs.empty(); }
  size_t examples() const { return is_pairs() ? pairs.size() : sentences.size(); }
  size_t words() const { return static_cast<size_t>(first.back()); }
  const std::string& tag(size_t sentence, size_t word, TagColumn column) const;
  // The features' sentences of the examples, in order (a pair: its premise, then its hypothesis).
  std::vector<uint32_t> feature_sentences(std::span<const uint32_t> examples) const;
};

// Reads the sentences of a CoNLL-U file (bad ones reported to errors and skipped).
FrozenData read_treebank(const std::string& lang, const std::string& path, ErrorCounter& errors);

// Numbers the gold tags and relations with the label sets (ids, or kIgnoreIndex for unknown ones)
// and computes the features; unknown counts what the labels lacked.
void prepare_treebank(FrozenData& t, const tasks::LabelSet& tags, const tasks::LabelSet& deprels, TagColumn column,
                      FrozenEncoder& encoder, int64_t layer, uint64_t& unknown);

// Reads the labelled pairs of a TSV file; a pair with a side of no words is reported and skipped.
FrozenData read_pairs(const std::string& lang, const std::string& path, const tasks::TsvColumns& columns,
                      ErrorCounter& errors);

// Numbers the pairs' labels and computes the features of both sides.
void prepare_pairs(FrozenData& t, const tasks::LabelSet& labels, FrozenEncoder& encoder, int64_t layer,
                   uint64_t& unknown);

}  // namespace kglm::train::frozen
