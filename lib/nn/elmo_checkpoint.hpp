// ELMo's weights in bilm-tf's names and layouts — the datasets of weights.hdf5 that AllenNLP's Elmo,
// simple_elmo and bilm-tf read (TensorFlow's [in, out] matrices, the convolutions [1, w, e, F], one
// W_0 per LSTM cell over [input; h]) — converted to and from the ParameterStore of an ElmoModel:
//   char_embed [261, e]                               = char_embed
//   CNN/W_cnn_i [1, w, e, F], CNN/b_cnn_i [F]          → W_cnn_i [F, w·e] (transposed)
//   CNN_high_k/W_transform, W_carry [F, F]; b_… [F]     → W [2F, F] = [W_transformᵀ; W_carryᵀ], b
//   CNN_proj/W_proj [F, p], b_proj [p]                  → W_proj [p, F]
//   RNN_d/RNN/MultiRNNCell/Cell<l>/LSTMCell/W_0 [2p, 4c] → W_x, W_h [4c, p] (rows [0, p), [p, 2p), transposed)
//                                         B [4c], W_P_0 [c, p] → W_P_0 [p, c]
//   softmax/W [V, p], softmax/b [V] (not in bilm-tf's weights.hdf5: kglm keeps them for resuming)
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nn/elmo_options.hpp"
#include "nn/parameters.hpp"

namespace kglm::nn {

// A named bilm-tf tensor as a host F32 tensor of the given shape (the reader throws, naming it,
// when it is missing or of another shape).
using BilmTensorSource = std::function<Tensor(const std::string& name, const Shape& shape)>;

// Fills an ElmoModel's parameters (declared in `params`, for `options`) from bilm-tf tensors; the
// softmax too when `with_softmax`.
void import_bilm_tensors(const BilmTensorSource& source, const ElmoOptions& options, bool with_softmax,
                         ParameterStore& params);

// The parameters as bilm-tf tensors (host F32), in weights.hdf5's order; the softmax last when
// `with_softmax`. With `gradients`, their gradients in the same layouts (tests, diagnostics).
std::vector<std::pair<std::string, Tensor>> export_bilm_tensors(const ParameterStore& params,
                                                                const ElmoOptions& options, bool with_softmax,
                                                                bool gradients = false);

// weights.hdf5 (bilm-tf's datasets, float32; the softmax too when `with_softmax`), written
// atomically; read with every dataset's shape checked against the options.
void write_bilm_weights(const std::filesystem::path& hdf5, const ParameterStore& params, const ElmoOptions& options,
                        bool with_softmax);
void read_bilm_weights(const std::filesystem::path& hdf5, const ElmoOptions& options, bool with_softmax,
                       ParameterStore& params);

// A model directory as AllenNLP, simple_elmo and kglm lay it out: options.json and the weights,
// weights.hdf5 (kglm, bilm-tf), model.hdf5 (the NLPL archives simple_elmo reads) or the directory's
// one *.hdf5 (the public AllenNLP models' elmo_*_weights.hdf5).
struct ElmoModelFiles {
  std::filesystem::path options, weights;
};
// nullopt when `dir` has no options.json with ELMo's "lstm" and "char_cnn" (another kind of model);
// kglm::Error when it has but its weights cannot be told.
std::optional<ElmoModelFiles> find_elmo_model(const std::filesystem::path& dir);

}  // namespace kglm::nn
