// The heads of the frozen-feature tasks, over a batch of a treebank's sentences whose features
// x [layers, words, width] are gathered from its cache:
//  - PosHead (--task pos): the features' mix, one feed-forward layer, a linear classifier over
//    the tags; cross-entropy per word.
//  - ParserHead (--task parse, parser_head.hpp): Dozat & Manning's biaffine parser.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nn/parameters.hpp"
#include "train/frozen/feed_forward.hpp"
#include "train/frozen/treebank.hpp"

namespace kglm::train::frozen {

enum class FrozenTask : uint8_t { pos, parse };
// "pos" | "parse"; nullopt for another name.
std::optional<FrozenTask> parse_frozen_task(const std::string& name);
const char* frozen_task_name(FrozenTask task);

// The sizes of a head, as frozen.json keeps them.
struct HeadShape {
  int64_t layers = 1, width = 0;   // of the features
  int64_t tags = 0, deprels = 0;   // label counts
  int64_t mlp = 256;               // pos: the hidden layer
  int64_t arc = 500, label = 100;  // parse: the arc and label MLPs
  float dropout = 0.33f;
};

// Per word of a treebank (its flattened order): the predicted tag, head and relation ids.
struct WordPredictions {
  std::vector<int32_t> tags, heads, deprels;
};

class FrozenHead {
 public:
  virtual ~FrozenHead() = default;
  nn::ParameterStore& params() { return params_; }
  // A training batch: forward, loss and backward (gradients added to the parameters'); returns the
  // loss (each term the mean over the batch's words, summed) and the words counted.
  virtual double train_batch(const Treebank& t, std::span<const uint32_t> sentences, const nn::Tensor& x, uint64_t seed,
                             uint64_t step, int64_t& counted) = 0;
  // Writes the predictions of the batch's words into out (sized for the whole treebank).
  virtual void predict(const Treebank& t, std::span<const uint32_t> sentences, const nn::Tensor& x,
                       WordPredictions& out) = 0;
  virtual std::string describe() const { return mix_.describe(); }

 protected:
  explicit FrozenHead(nn::Device device, int64_t layers) : params_(device), mix_(params_, layers) {}
  nn::ParameterStore params_;
  FeatureMix mix_;
};

std::unique_ptr<FrozenHead> make_frozen_head(FrozenTask task, const HeadShape& shape, nn::Device device);

// The targets of the batch's words, in order (host I32 [words]); ids from `of`.
nn::Tensor word_targets(const Treebank& t, std::span<const uint32_t> sentences, const std::vector<int32_t>& of);

}  // namespace kglm::train::frozen
