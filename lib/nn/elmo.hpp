// ELMo (Peters et al. 2018) as bilm-tf trains it: a character encoder (character embeddings, the
// convolutions of the options with their max over positions, an activation, highway layers, a
// projection) feeding, in each direction, n_layers projected LSTMs (nn/ops/lstm.hpp) with residual
// connections into every layer but the first, and one softmax over the words shared by both
// directions. The two directions are independent stacks that read their own token streams (the
// backward one reads the text reversed); their losses are averaged by the caller.
//
// Batches are B windows of T tokens, rows step-major (row t·B + b is window b's token t), with no
// padding: the LSTM state is carried from one batch to the next (truncated back-propagation), as
// bilm-tf does. Dropout (the options' rate) drops each layer's input — the residual adds the dropped
// input — and the top layer's output; its draws are numbered by (window number, step), so they do
// not depend on the thread count or on how windows are split over data-parallel ranks.
//
// Parameters are named as bilm-tf's weights.hdf5 names them, in linear's [out, in] layout; where
// one of its tensors is split (an LSTM's W_0 into W_x and W_h) or two are fused (a highway's
// transform and carry, one product), the checkpoint code converts.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "nn/elmo_options.hpp"
#include "nn/encoder.hpp"
#include "nn/ops/cross_entropy.hpp"
#include "nn/ops/sampled_softmax.hpp"
#include "nn/parameters.hpp"

namespace kglm::nn {

// One direction's input: characters I32 [T·B, max_characters] (training ids, nn/elmo_characters.hpp)
// and targets I32 [T·B], the vocabulary id of the token each position predicts (the next one in
// the stream this direction reads).
struct ElmoStream {
  Tensor characters, targets;
};

struct ElmoBatch {
  int64_t windows = 0, steps = 0;
  std::array<ElmoStream, 2> streams;  // forward, backward
};

// Each direction's loss totals (summed over its T·B positions).
struct ElmoLoss {
  std::array<CrossEntropyResult, 2> directions;
};

class ElmoModel {
 public:
  // Declares the parameters in `params`: a softmax over `vocabulary` words.
  ElmoModel(const ElmoOptions& options, int64_t vocabulary, ParameterStore& params);
  ~ElmoModel();
  ElmoModel(const ElmoModel&) = delete;
  ElmoModel& operator=(const ElmoModel&) = delete;

  // bilm-tf's initialisers: characters U(±1); convolutions U(±0.05) (ReLU) or N(0, 1/(w·e)) (tanh);
  // highways and the projection N(0, 1/width), carry biases −2; LSTM weights Glorot-uniform over
  // TensorFlow's [in + projection, 4·cell] and [cell, projection]; the softmax N(0, 1/projection).
  void initialize(uint64_t seed);

  // Zeroes the carried LSTM state for `windows` windows (the start of training or of a new stream).
  void reset_state(int64_t windows);
  // The carried state, for checkpoints and to set training's aside while evaluating: per direction
  // and layer, h [windows, projection] (compute dtype) then c [windows, cell] (wide dtype). The
  // tensors are never written in place, so the handles stay valid as the model runs on.
  std::vector<Tensor> carried_state() const;
  // Takes state as carried_state() gives it (the same shapes and dtypes, on the model's device).
  void restore_state(const std::vector<Tensor>& state);

  // Both directions over a batch, from the carried state, which it then advances. With
  // samples[d] the direction's loss is the sampled softmax over those classes, else the full
  // softmax. With grad_scale > 0 the gradients of grad_scale × each direction's summed loss are
  // kept for backward().
  ElmoLoss forward(const ElmoBatch& batch, const DropoutContext& dropout,
                   const std::array<const SampledClasses*, 2>& samples, double grad_scale);
  // Accumulates every trainable parameter's gradient of the last forward(grad_scale > 0).
  void backward();

  // After forward(): direction d's layer outputs [T·B, projection], layer 0 the character
  // encoder's token vectors, 1… the LSTM layers (residual included, before any dropout).
  const Tensor& layer_output(int direction, int64_t layer) const;

  const ElmoOptions& options() const { return options_; }
  int64_t vocabulary() const { return vocabulary_; }

 private:
  struct Direction;
  ElmoOptions options_;
  int64_t vocabulary_;
  ParameterStore& params_;
  static constexpr size_t kNoParameter = SIZE_MAX;  // proj_w_/proj_b_ when the encoder has no projection
  size_t char_embed_ = 0, proj_w_ = 0, proj_b_ = 0, softmax_w_ = 0, softmax_b_ = 0;
  std::vector<size_t> conv_w_, conv_b_, highway_w_, highway_b_;
  // [direction][layer]
  std::array<std::vector<size_t>, 2> lstm_wx_, lstm_wh_, lstm_b_, lstm_proj_;
  std::array<std::unique_ptr<Direction>, 2> directions_;
  double grad_scale_ = 0;

  void encode_characters(Direction& d, const Tensor& characters) const;
  void characters_backward(Direction& d, const Tensor& dtoken);
  CrossEntropyResult direction_forward(int index, const ElmoStream& stream, int64_t windows, int64_t steps,
                                       const DropoutContext& dropout, const SampledClasses* sample, double grad_scale);
  void direction_backward(int index);
};

}  // namespace kglm::nn
