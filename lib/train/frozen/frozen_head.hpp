// The heads of the frozen-feature tasks, over a batch of examples whose features
// x [layers, words, width] are gathered from the cache (frozen_data.hpp):
//  - PosHead (--task pos, pos_head.cpp): the features' mix, one feed-forward layer, a linear
//    classifier over the tags; cross-entropy per word.
//  - ParserHead (--task parse, parser_head.cpp): Dozat & Manning's biaffine parser.
//  - EsimHead (--task nli, esim_head.cpp): Chen et al.'s ESIM over sentence pairs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nn/parameters.hpp"
#include "train/frozen/feed_forward.hpp"
#include "train/frozen/frozen_data.hpp"

namespace kglm::train::frozen {

enum class FrozenTask : uint8_t { pos, parse, nli };
// "pos" | "parse" | "nli"; nullopt for another name.
std::optional<FrozenTask> parse_frozen_task(const std::string& name);
const char* frozen_task_name(FrozenTask task);

// The sizes of a head, as frozen.json keeps them.
struct HeadShape {
  int64_t layers = 1, width = 0;   // of the features
  int64_t tags = 0, deprels = 0;   // label counts (tags: the PoS tags, or the NLI labels)
  int64_t mlp = 256;               // pos: the hidden layer; nli: ESIM's every hidden size
  int64_t arc = 500, label = 100;  // parse: the arc and label MLPs
  float dropout = 0.33f;
};

// Per word of a treebank (its flattened order): the predicted tag, head and relation ids; per
// pair (nli): the predicted label's id.
struct Predictions {
  std::vector<int32_t> tags, heads, deprels, labels;
};

class FrozenHead {
 public:
  virtual ~FrozenHead() = default;
  nn::ParameterStore& params() { return params_; }
  // A training batch of examples: forward, loss and backward (gradients added to the parameters');
  // returns the loss (each term the mean over the batch's words or pairs, summed) and their count.
  virtual double train_batch(const FrozenData& t, std::span<const uint32_t> examples, const nn::Tensor& x,
                             uint64_t seed, uint64_t step, int64_t& counted) = 0;
  // Writes the predictions of the batch's examples into out (sized for the whole data).
  virtual void predict(const FrozenData& t, std::span<const uint32_t> examples, const nn::Tensor& x,
                       Predictions& out) = 0;
  virtual std::string describe() const { return mix_.describe(); }

 protected:
  explicit FrozenHead(nn::Device device, int64_t layers) : params_(device), mix_(params_, layers) {}
  nn::ParameterStore params_;
  FeatureMix mix_;
};

std::unique_ptr<FrozenHead> make_frozen_head(FrozenTask task, const HeadShape& shape, nn::Device device);

// The targets of the batch's words, in order (host I32 [words]); ids from `of`.
nn::Tensor word_targets(const FrozenData& t, std::span<const uint32_t> sentences, const std::vector<int32_t>& of);

}  // namespace kglm::train::frozen
