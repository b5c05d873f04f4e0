#include "nn/elmo.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "nn/ops/activation.hpp"
#include "nn/ops/char_convolution.hpp"
#include "nn/ops/dropout.hpp"
#include "nn/ops/elementwise.hpp"
#include "nn/ops/embedding.hpp"
#include "nn/ops/highway.hpp"
#include "nn/ops/lstm.hpp"

namespace kglm::nn {

namespace {

constexpr int64_t kTrainingCharacters = 261;  // the embedding's rows: ids as they are (no mask row)

std::string cell_prefix(int direction, int64_t layer) {
  return "RNN_" + std::to_string(direction) + "/RNN/MultiRNNCell/Cell" + std::to_string(layer) + "/LSTMCell/";
}

// Dropout sites: each layer's input in each direction, and each direction's top output.
uint64_t input_site(int direction, int64_t layer) { return 1 + static_cast<uint64_t>(direction) * 64 + layer; }
uint64_t output_site(int direction) { return 1 + static_cast<uint64_t>(direction) * 64 + 63; }

// The full softmax's logits are made this many values at a time (a 100,000-word vocabulary would
// otherwise need [T·B, V] at once).
constexpr int64_t kLogitValues = int64_t{16} << 20;

}  // namespace

struct ElmoModel::Direction {
  int64_t rows = 0, windows = 0, steps = 0;
  bool dropped = false;
  // Character encoder.
  Tensor char_ids, embedded, pooled, argmax, activated, highway_out, token;
  std::vector<Tensor> highway_x, highway_pre;
  // LSTM layers: the (dropped) input, its mask, the state it started from, the saved activations,
  // the cell output and the layer output (residual included).
  std::vector<Tensor> input, input_mask, h0, c0, h, output;
  std::vector<LstmSaved> saved;
  std::vector<Tensor> state_h, state_c;  // carried to the next batch
  Tensor numbers;                        // I64 [rows]: the dropout numbers of the rows
  Tensor top_mask, dtop;
};

ElmoModel::ElmoModel(const ElmoOptions& options, int64_t vocabulary, ParameterStore& params)
    : options_(options), vocabulary_(vocabulary), params_(params) {
  options_.validate();
  if (vocabulary < 1) throw Error("ELMo: the vocabulary is empty");
  if (options_.projection >= options_.cell)
    throw Error("ELMo: projection_dim " + std::to_string(options_.projection) + " must be below the LSTM dim " +
                std::to_string(options_.cell) + " (an unprojected LSTM is not supported)");
  using Init = Parameter::Init;
  const int64_t e = options_.char_embedding, filters = options_.filter_total(), p = options_.projection,
                c = options_.cell;
  auto add = [&](const std::string& name, Shape shape, Init init, double init_std) {
    const size_t i = params.add(name, std::move(shape), init, false);
    params[i].init_std = init_std;
    return i;
  };
  char_embed_ = add("char_embed", {kTrainingCharacters, e}, Init::Uniform, 1.0);
  for (size_t i = 0; i < options_.filters.size(); ++i) {
    const ElmoFilter& f = options_.filters[i];
    const bool relu = options_.activation == "relu";
    conv_w_.push_back(add("CNN/W_cnn_" + std::to_string(i), {f.count, f.width * e}, relu ? Init::Uniform : Init::Normal,
                          relu ? 0.05 : std::sqrt(1.0 / static_cast<double>(f.width * e))));
    conv_b_.push_back(add("CNN/b_cnn_" + std::to_string(i), {f.count}, Init::Zeros, 0));
  }
  const double per_filter = std::sqrt(1.0 / static_cast<double>(filters));
  for (int64_t k = 0; k < options_.highways; ++k) {
    // [W_transform; W_carry] and [b_transform; b_carry]: the two products as one.
    highway_w_.push_back(add("CNN_high_" + std::to_string(k) + "/W", {2 * filters, filters}, Init::Normal, per_filter));
    highway_b_.push_back(add("CNN_high_" + std::to_string(k) + "/b", {2 * filters}, Init::Zeros, 0));
  }
  if (filters != p) {
    proj_w_ = add("CNN_proj/W_proj", {p, filters}, Init::Normal, per_filter);
    proj_b_ = add("CNN_proj/b_proj", {p}, Init::Zeros, 0);
  } else {
    proj_w_ = proj_b_ = kNoParameter;  // bilm-tf projects only to another width
  }
  const int directions = options_.bidirectional ? 2 : 1;
  // Glorot-uniform bounds over TensorFlow's shapes, [in + p, 4c] and [c, p].
  const double gates_bound = std::sqrt(6.0 / static_cast<double>(p + p + 4 * c));
  const double proj_bound = std::sqrt(6.0 / static_cast<double>(c + p));
  for (int d = 0; d < directions; ++d) {
    for (int64_t l = 0; l < options_.layers; ++l) {
      const std::string cell = cell_prefix(d, l);
      lstm_wx_[d].push_back(add(cell + "W_x", {4 * c, p}, Init::Uniform, gates_bound));
      lstm_wh_[d].push_back(add(cell + "W_h", {4 * c, p}, Init::Uniform, gates_bound));
      lstm_b_[d].push_back(add(cell + "B", {4 * c}, Init::Zeros, 0));
      lstm_proj_[d].push_back(add(cell + "W_P_0", {p, c}, Init::Uniform, proj_bound));
    }
    directions_[d] = std::make_unique<Direction>();
  }
  softmax_w_ = add("softmax/W", {vocabulary, p}, Init::Normal, 1.0 / std::sqrt(static_cast<double>(p)));
  softmax_b_ = add("softmax/b", {vocabulary}, Init::Zeros, 0);
}

ElmoModel::~ElmoModel() = default;

void ElmoModel::initialize(uint64_t seed) {
  params_.initialize(seed, 0.02);
  // The carry biases start at −2 (bilm-tf): the highways begin by passing their input through.
  const int64_t filters = options_.filter_total();
  Tensor minus_two = Tensor::empty({filters, 1});
  for (int64_t i = 0; i < filters; ++i) minus_two.data<float>()[i] = -2.0f;
  for (size_t b : highway_b_) params_[b].value.view({2 * filters, 1}).rows(filters, 2 * filters).copy_from(minus_two);
  params_.refresh_compute();
}

void ElmoModel::reset_state(int64_t windows) {
  const DType dtype = params_.compute_dtype(), wide = params_.values().dtype();
  for (auto& d : directions_) {
    if (!d) continue;
    d->state_h.assign(static_cast<size_t>(options_.layers), Tensor());
    d->state_c.assign(static_cast<size_t>(options_.layers), Tensor());
    for (int64_t l = 0; l < options_.layers; ++l) {
      d->state_h[l] = Tensor::zeros({windows, options_.projection}, dtype, params_.device());
      d->state_c[l] = Tensor::zeros({windows, options_.cell}, wide, params_.device());
    }
  }
}

std::vector<Tensor> ElmoModel::carried_state() const {
  std::vector<Tensor> state;
  for (const auto& d : directions_)
    if (d)
      for (size_t l = 0; l < d->state_h.size(); ++l) {
        state.push_back(d->state_h[l]);
        state.push_back(d->state_c[l]);
      }
  return state;
}

void ElmoModel::restore_state(const std::vector<Tensor>& state) {
  const int directions = options_.bidirectional ? 2 : 1;
  if (state.size() != static_cast<size_t>(2 * directions * options_.layers))
    throw Error("ELMo: the carried state has " + std::to_string(state.size()) + " tensors, the model " +
                std::to_string(2 * directions * options_.layers));
  const int64_t windows = state[0].shape().empty() ? 0 : state[0].dim(0);
  const DType dtype = params_.compute_dtype(), wide = params_.values().dtype();
  size_t i = 0;
  for (auto& d : directions_) {
    if (!d) continue;
    d->state_h.assign(static_cast<size_t>(options_.layers), Tensor());
    d->state_c.assign(static_cast<size_t>(options_.layers), Tensor());
    for (int64_t l = 0; l < options_.layers; ++l) {
      const Tensor& h = state[i++];
      const Tensor& c = state[i++];
      if (h.shape() != Shape{windows, options_.projection} || h.dtype() != dtype ||
          c.shape() != Shape{windows, options_.cell} || c.dtype() != wide || h.device() != params_.device() ||
          c.device() != params_.device())
        throw Error("ELMo: a carried state tensor has the wrong shape, dtype or device");
      d->state_h[l] = h;
      d->state_c[l] = c;
    }
  }
}

void ElmoModel::encode_characters(Direction& d, const Tensor& characters) const {
  const int64_t rows = d.rows, chars = options_.max_characters, e = options_.char_embedding;
  const int64_t filters = options_.filter_total();
  const DType dtype = params_.compute_dtype();
  const Device device = params_.device();
  d.char_ids = characters.view({rows * chars});
  d.embedded = Tensor::empty({rows * chars, e}, dtype, device);
  embedding_forward(d.char_ids, params_[char_embed_].compute, d.embedded);
  const Tensor x3 = d.embedded.view({rows, chars, e});
  d.pooled = Tensor::empty({rows, filters}, dtype, device);
  d.argmax = Tensor::empty({rows, filters}, DType::I32, device);
  int64_t first = 0;
  for (size_t i = 0; i < options_.filters.size(); ++i) {
    char_convolution_forward(x3, params_[conv_w_[i]].compute, params_[conv_b_[i]].compute, options_.filters[i].width,
                             first, d.pooled, d.argmax);
    first += options_.filters[i].count;
  }
  d.activated = Tensor::empty({rows, filters}, dtype, device);
  if (options_.activation == "relu") {
    relu_forward(d.pooled, d.activated);
  } else {
    tanh_forward(d.pooled, d.activated);
  }
  Tensor x = d.activated;
  d.highway_x.assign(highway_w_.size(), Tensor());
  d.highway_pre.assign(highway_w_.size(), Tensor());
  for (size_t k = 0; k < highway_w_.size(); ++k) {
    d.highway_x[k] = x;
    d.highway_pre[k] = Tensor::empty({rows, 2 * filters}, dtype, device);
    linear_forward(x, params_[highway_w_[k]].compute, params_[highway_b_[k]].compute, d.highway_pre[k]);
    Tensor y = Tensor::empty({rows, filters}, dtype, device);
    highway_forward(x, d.highway_pre[k], y);
    x = y;
  }
  d.highway_out = x;
  if (proj_w_ != kNoParameter) {
    d.token = Tensor::empty({rows, options_.projection}, dtype, device);
    linear_forward(x, params_[proj_w_].compute, params_[proj_b_].compute, d.token);
  } else {
    d.token = x;
  }
}

void ElmoModel::characters_backward(Direction& d, const Tensor& dtoken) {
  const int64_t rows = d.rows, filters = options_.filter_total();
  const DType dtype = params_.compute_dtype();
  const Device device = params_.device();
  Tensor dx = dtoken;
  if (proj_w_ != kNoParameter) {
    dx = Tensor::empty({rows, filters}, dtype, device);
    linear_backward(dtoken, d.highway_out, params_[proj_w_].compute, dx, params_[proj_w_].grad, params_[proj_b_].grad);
  }
  for (size_t k = highway_w_.size(); k-- > 0;) {
    Tensor dprev = Tensor::empty({rows, filters}, dtype, device),
           dpre = Tensor::empty({rows, 2 * filters}, dtype, device);
    highway_backward(dx, d.highway_x[k], d.highway_pre[k], dprev, dpre);
    linear_backward(dpre, d.highway_x[k], params_[highway_w_[k]].compute, dprev, params_[highway_w_[k]].grad,
                    params_[highway_b_[k]].grad, GradMode::Accumulate);
    dx = dprev;
  }
  Tensor dpooled = Tensor::empty({rows, filters}, dtype, device);
  if (options_.activation == "relu") {
    relu_backward(dx, d.activated, dpooled);
  } else {
    tanh_backward(dx, d.activated, dpooled);
  }
  const int64_t chars = options_.max_characters, e = options_.char_embedding;
  Tensor dembedded = Tensor::zeros({rows, chars, e}, dtype, device);
  const Tensor x3 = d.embedded.view({rows, chars, e});
  int64_t first = 0;
  for (size_t i = 0; i < options_.filters.size(); ++i) {
    char_convolution_backward(dpooled, x3, params_[conv_w_[i]].compute, d.argmax, options_.filters[i].width, first,
                              dembedded, params_[conv_w_[i]].grad, params_[conv_b_[i]].grad);
    first += options_.filters[i].count;
  }
  if (params_[char_embed_].grad.defined())
    embedding_backward(d.char_ids, dembedded.view({rows * chars, e}), params_[char_embed_].grad);
}

CrossEntropyResult ElmoModel::direction_forward(int index, const ElmoStream& stream, int64_t windows, int64_t steps,
                                                const DropoutContext& dropout, const SampledClasses* sample,
                                                double grad_scale) {
  Direction& d = *directions_[index];
  const int64_t rows = windows * steps, p = options_.projection;
  const std::string which = index == 0 ? "forward" : "backward";
  if (stream.characters.shape() != Shape{rows, options_.max_characters} || stream.characters.dtype() != DType::I32)
    throw Error("ELMo: the " + which + " characters are " + shape_string(stream.characters.shape()) +
                ", expected I32 [" + std::to_string(rows) + ", " + std::to_string(options_.max_characters) + "]");
  if (stream.targets.shape() != Shape{rows} || stream.targets.dtype() != DType::I32)
    throw Error("ELMo: the " + which + " targets must be I32 [" + std::to_string(rows) + "]");
  if (d.state_h.empty() || d.state_h[0].dim(0) != windows)
    throw Error("ELMo: the carried state is not for " + std::to_string(windows) + " windows (reset_state first)");
  const DType dtype = params_.compute_dtype();
  const Device device = params_.device();
  d.rows = rows, d.windows = windows, d.steps = steps;
  d.dropped = dropout.training && options_.dropout > 0;
  const auto rate = static_cast<float>(options_.dropout);
  encode_characters(d, stream.characters);
  if (d.dropped) {
    Tensor numbers = Tensor::empty({rows}, DType::I64);
    for (int64_t t = 0; t < steps; ++t)
      for (int64_t b = 0; b < windows; ++b)
        numbers.data<int64_t>()[t * windows + b] =
            static_cast<int64_t>(token_number(dropout.first_row + static_cast<uint64_t>(b), static_cast<uint64_t>(t)));
    d.numbers = numbers.to(device);
  }
  const auto layers = static_cast<size_t>(options_.layers);
  d.input.assign(layers, Tensor());
  d.input_mask.assign(layers, Tensor());
  d.h0.assign(layers, Tensor());
  d.c0.assign(layers, Tensor());
  d.h.assign(layers, Tensor());
  d.output.assign(layers, Tensor());
  d.saved.assign(layers, LstmSaved());
  const LstmShape shape{
      steps, windows, options_.cell, p, static_cast<float>(options_.cell_clip), static_cast<float>(options_.proj_clip),
      1.0f};
  Tensor x = d.token;
  for (size_t l = 0; l < layers; ++l) {
    Tensor in = x;
    if (d.dropped) {
      in = Tensor::empty({rows, p}, dtype, device);
      d.input_mask[l] = Tensor::empty({rows, p}, DType::U8, device);
      dropout_forward(x, rate, dropout.site_key(input_site(index, static_cast<int64_t>(l))), d.numbers, in,
                      d.input_mask[l]);
    }
    d.input[l] = in;
    Tensor gates_x = Tensor::empty({rows, 4 * options_.cell}, dtype, device);
    linear_forward(in, params_[lstm_wx_[index][l]].compute, params_[lstm_b_[index][l]].compute, gates_x);
    d.saved[l] = LstmSaved::allocate(shape, gates_x);
    d.h[l] = Tensor::empty({rows, p}, dtype, device);
    d.h0[l] = d.state_h[l];
    d.c0[l] = d.state_c[l];
    Tensor c_last = Tensor::empty(d.c0[l].shape(), d.c0[l].dtype(), device);
    lstm_forward(gates_x, params_[lstm_wh_[index][l]].compute, params_[lstm_proj_[index][l]].compute, d.h0[l], d.c0[l],
                 shape, d.h[l], d.saved[l], c_last);
    d.output[l] = d.h[l];
    if (l > 0 && options_.skip_connections) {
      d.output[l] = Tensor::empty({rows, p}, dtype, device);
      add(d.h[l], in, d.output[l]);
    }
    d.state_h[l] = d.h[l].rows(rows - windows, rows).clone();
    d.state_c[l] = c_last;
    x = d.output[l];
  }
  Tensor top = x;
  if (d.dropped) {
    top = Tensor::empty({rows, p}, dtype, device);
    d.top_mask = Tensor::empty({rows, p}, DType::U8, device);
    dropout_forward(x, rate, dropout.site_key(output_site(index)), d.numbers, top, d.top_mask);
  }
  // The softmax's parameter gradients are added here, its input's kept for backward().
  const bool training = grad_scale > 0;
  Parameter& w = params_[softmax_w_];
  Parameter& b = params_[softmax_b_];
  const DType wide = params_.values().dtype();
  Tensor dw = training && w.grad.defined() ? w.grad : Tensor::zeros(w.value.shape(), wide, device);
  Tensor db = training && b.grad.defined() ? b.grad : Tensor::zeros(b.value.shape(), wide, device);
  d.dtop = training ? Tensor::empty({rows, p}, dtype, device) : Tensor();
  if (sample)
    return sampled_softmax_loss(top, w.compute, b.compute, stream.targets, *sample, grad_scale, d.dtop, dw, db);
  CrossEntropyResult total;
  const int64_t chunk = std::max<int64_t>(1, kLogitValues / vocabulary_);
  for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const int64_t r1 = std::min(rows, r0 + chunk);
    const Tensor in = top.rows(r0, r1);
    Tensor logits = Tensor::empty({r1 - r0, vocabulary_}, dtype, device);
    linear_forward(in, w.compute, b.compute, logits);
    Tensor dlogits = training ? logits : Tensor();
    const CrossEntropyResult r = cross_entropy(logits, stream.targets.rows(r0, r1), dlogits, grad_scale);
    total.loss_sum += r.loss_sum, total.counted += r.counted, total.correct += r.correct;
    if (training) {
      Tensor dtop = d.dtop.rows(r0, r1);
      linear_backward(dlogits, in, w.compute, dtop, dw, db);
    }
  }
  return total;
}

ElmoLoss ElmoModel::forward(const ElmoBatch& batch, const DropoutContext& dropout,
                            const std::array<const SampledClasses*, 2>& samples, double grad_scale) {
  if (batch.windows < 1 || batch.steps < 1) throw Error("ELMo: a batch needs windows and steps");
  ElmoLoss loss;
  grad_scale_ = grad_scale;
  for (int d = 0; d < 2; ++d)
    if (directions_[d])
      loss.directions[d] =
          direction_forward(d, batch.streams[d], batch.windows, batch.steps, dropout, samples[d], grad_scale);
  return loss;
}

void ElmoModel::direction_backward(int index) {
  Direction& d = *directions_[index];
  const int64_t rows = d.rows, p = options_.projection;
  const DType dtype = params_.compute_dtype();
  const Device device = params_.device();
  const auto rate = static_cast<float>(options_.dropout);
  Tensor d_out = d.dtop;
  if (d.dropped) dropout_backward(d_out, d.top_mask, rate, d_out);
  const LstmShape shape{d.steps,
                        d.windows,
                        options_.cell,
                        p,
                        static_cast<float>(options_.cell_clip),
                        static_cast<float>(options_.proj_clip),
                        1.0f};
  for (size_t l = d.input.size(); l-- > 0;) {
    Tensor d_in = Tensor::empty({rows, p}, dtype, device);
    const bool residual = l > 0 && options_.skip_connections;
    if (residual) d_in.copy_from(d_out);
    Tensor dgates = Tensor::empty({rows, 4 * options_.cell}, dtype, device);
    lstm_backward(d_out, params_[lstm_wh_[index][l]].compute, params_[lstm_proj_[index][l]].compute, d.h0[l], d.c0[l],
                  d.h[l], d.saved[l], shape, dgates, params_[lstm_wh_[index][l]].grad,
                  params_[lstm_proj_[index][l]].grad);
    linear_backward(dgates, d.input[l], params_[lstm_wx_[index][l]].compute, d_in, params_[lstm_wx_[index][l]].grad,
                    params_[lstm_b_[index][l]].grad, residual ? GradMode::Accumulate : GradMode::Overwrite);
    if (d.dropped) dropout_backward(d_in, d.input_mask[l], rate, d_in);
    d_out = d_in;
  }
  characters_backward(d, d_out);
}

void ElmoModel::backward() {
  if (!(grad_scale_ > 0)) throw Error("ELMo: backward() needs a forward() with grad_scale > 0");
  for (int d = 0; d < 2; ++d)
    if (directions_[d]) direction_backward(d);
  grad_scale_ = 0;
}

const Tensor& ElmoModel::layer_output(int direction, int64_t layer) const {
  if (direction < 0 || direction > 1 || !directions_[direction] || layer < 0 || layer > options_.layers)
    throw Error("ELMo: no layer " + std::to_string(layer) + " in direction " + std::to_string(direction));
  const Direction& d = *directions_[direction];
  return layer == 0 ? d.token : d.output[static_cast<size_t>(layer - 1)];
}

}  // namespace kglm::nn
