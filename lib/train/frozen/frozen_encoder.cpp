#include "train/frozen/frozen_encoder.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "nn/checkpoint.hpp"
#include "nn/convert.hpp"
#include "nn/elmo.hpp"
#include "nn/elmo_characters.hpp"
#include "nn/elmo_checkpoint.hpp"
#include "nn/elmo_options.hpp"
#include "nn/encoder.hpp"
#include "nn/model_config.hpp"
#include "nn/torch_checkpoint.hpp"
#include "tok/tokenizer.hpp"

namespace kglm::train::frozen {

namespace fs = std::filesystem;

namespace {

// Host F32 copy of an output.
nn::Tensor host_f32(const nn::Tensor& t) {
  nn::Tensor host = t.to(nn::Device::Cpu);
  return host.dtype() == nn::DType::F32 ? host : nn::to_f32(host);
}

class ElmoEncoder final : public FrozenEncoder {
 public:
  ElmoEncoder(const nn::ElmoModelFiles& files, nn::Device device)
      : options_(nn::read_elmo_options(files.options)), params_(device) {
    if (!options_.bidirectional) throw Error(files.options.string() + ": ELMo vectors need a bidirectional model");
    options_.dropout = 0;
    // The softmax is not used (nor in bilm-tf's weights.hdf5): one word keeps it small.
    model_.emplace(options_, 1, params_);
    params_.allocate(1, false);
    model_->initialize(0);
    nn::read_bilm_weights(files.weights, options_, false, params_);
    params_.refresh_compute();
    kind_ = "elmo";
    layers_ = options_.layers + 1;
    width_ = 2 * options_.projection;
  }

 protected:
  bool equal_lengths() const override { return true; }

  void encode_batch(std::span<const Words> sentences, std::span<const size_t> batch, const Take& take) override {
    const size_t n = sentences[batch.front()].size();
    if (n == 0) {
      for (size_t i : batch) take(i, nullptr);
      return;
    }
    const auto windows = static_cast<int64_t>(batch.size()), steps = static_cast<int64_t>(n + 2);
    const int64_t chars = options_.max_characters, p = options_.projection;
    const nn::Device device = params_.device();
    nn::ElmoBatch b;
    b.windows = windows, b.steps = steps;
    for (int d = 0; d < 2; ++d) {
      nn::Tensor characters = nn::Tensor::empty({steps * windows, chars}, nn::DType::I32);
      for (int64_t t = 0; t < steps; ++t)
        for (int64_t w = 0; w < windows; ++w) {
          const int64_t at = d == 0 ? t : steps - 1 - t;  // the backward model reads the sentence reversed
          const std::string_view word = at == 0           ? nn::kBeginSentence
                                        : at == steps - 1 ? nn::kEndSentence
                                                          : sentences[batch[static_cast<size_t>(w)]][at - 1];
          nn::elmo_character_ids(word, chars, 261, characters.data<int32_t>() + (t * windows + w) * chars);
        }
      b.streams[d].characters = characters.to(device);
      b.streams[d].targets = nn::Tensor::zeros({steps * windows}, nn::DType::I32, device);
    }
    model_->reset_state(windows);
    model_->forward(b, nn::DropoutContext{}, {nullptr, nullptr}, 0);
    std::vector<nn::Tensor> forward, backward;
    for (int64_t l = 0; l < layers_; ++l) {
      forward.push_back(host_f32(model_->layer_output(0, l)));
      backward.push_back(host_f32(model_->layer_output(l == 0 ? 0 : 1, l)));  // layer 0: the token vector twice
    }
    std::vector<float> all(static_cast<size_t>(layers_) * n * static_cast<size_t>(width_));
    for (int64_t w = 0; w < windows; ++w) {
      // Word i is step i + 1 forward, step n − i backward.
      for (int64_t l = 0; l < layers_; ++l)
        for (size_t i = 0; i < n; ++i) {
          const int64_t forward_row = static_cast<int64_t>(i + 1) * windows + w;
          const int64_t backward_row = l == 0 ? forward_row : static_cast<int64_t>(n - i) * windows + w;
          float* dst = all.data() + (static_cast<size_t>(l) * n + i) * static_cast<size_t>(width_);
          std::copy_n(forward[static_cast<size_t>(l)].data<float>() + forward_row * p, p, dst);
          std::copy_n(backward[static_cast<size_t>(l)].data<float>() + backward_row * p, p, dst + p);
        }
      take(batch[static_cast<size_t>(w)], all.data());
    }
  }

 private:
  nn::ElmoOptions options_;
  nn::ParameterStore params_;
  std::optional<nn::ElmoModel> model_;
};

class TransformerEncoder final : public FrozenEncoder {
 public:
  TransformerEncoder(const fs::path& dir, nn::Device device)
      : config_(nn::read_model_config(dir / "config.json")), tokenizer_(tok::load_tokenizer(dir)), params_(device) {
    if (tokenizer_->special().bos < 0 || tokenizer_->special().eos < 0)
      throw Error(dir.string() + ": the tokenizer has no [CLS]/<s> and [SEP]/</s> tokens");
    // The encoder alone: an MLM or task head in the file is left unread.
    encoder_.emplace(config_, params_);
    params_.allocate(1, false);
    nn::load_parameters(nn::open_model_weights(dir), params_, false);
    params_.refresh_compute();
    kind_ = config_.model_type();
    layers_ = config_.layers + 1;
    width_ = config_.hidden;
    const int64_t offset = config_.architecture == nn::Architecture::XlmRoberta ? config_.pad_token_id + 1 : 0;
    limit_ = config_.max_positions - offset;
  }

 protected:
  bool equal_lengths() const override { return false; }

  void encode_batch(std::span<const Words> sentences, std::span<const size_t> batch, const Take& take) override {
    const tok::SpecialTokens& special = tokenizer_->special();
    std::vector<std::vector<int32_t>> ids(batch.size());
    std::vector<std::vector<int32_t>> first(batch.size());  // each word's first token, -1 when cut
    tok::Encoding enc;
    for (size_t r = 0; r < batch.size(); ++r) {
      ids[r].push_back(special.bos);
      for (const std::string& word : sentences[batch[r]]) {
        tokenizer_->encode(word, enc);
        const size_t pieces = std::max<size_t>(enc.size(), 1);  // a word of no tokens stands as <unk>
        if (static_cast<int64_t>(ids[r].size() + pieces + 1) > limit_) {
          first[r].push_back(-1);
          ++cut_words_;
          continue;
        }
        first[r].push_back(static_cast<int32_t>(ids[r].size()));
        for (size_t k = 0; k < pieces; ++k) ids[r].push_back(enc.size() == 0 ? special.unk : enc.ids[k]);
      }
      ids[r].push_back(special.eos);
    }
    const nn::EncoderBatch packed = nn::pack_sequences(ids, {}, config_);
    encoder_->forward(packed, nn::DropoutContext{});
    std::vector<nn::Tensor> states;
    for (int64_t l = 0; l < layers_; ++l) states.push_back(host_f32(encoder_->hidden_state(static_cast<size_t>(l))));
    std::vector<float> all;
    const auto width = static_cast<size_t>(width_);
    for (size_t r = 0; r < batch.size(); ++r) {
      const size_t n = first[r].size();
      if (n == 0) {
        take(batch[r], nullptr);
        continue;
      }
      all.assign(static_cast<size_t>(layers_) * n * width, 0.0f);
      const auto offset = static_cast<int64_t>(packed.sequences.offsets[r]);
      for (int64_t l = 0; l < layers_; ++l)
        for (size_t i = 0; i < n; ++i)
          if (first[r][i] >= 0)
            std::copy_n(states[static_cast<size_t>(l)].data<float>() + (offset + first[r][i]) * width_, width_,
                        all.data() + (static_cast<size_t>(l) * n + i) * width);
      take(batch[r], all.data());
    }
  }

 private:
  nn::ModelConfig config_;
  std::unique_ptr<tok::Tokenizer> tokenizer_;
  nn::ParameterStore params_;
  std::optional<nn::Encoder> encoder_;
  int64_t limit_ = 0;
};

}  // namespace

void FrozenEncoder::encode(std::span<const Words> sentences, const Take& take) {
  // Longest first: batches of similar (ELMo: equal) lengths.
  std::vector<size_t> order(sentences.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sentences[a].size() > sentences[b].size(); });
  Progress progress("features", sentences.size());
  for (size_t first = 0; first < order.size();) {
    size_t count = 1;
    while (first + count < order.size() && count < static_cast<size_t>(batch_) &&
           (!equal_lengths() || sentences[order[first + count]].size() == sentences[order[first]].size()))
      ++count;
    encode_batch(sentences, std::span<const size_t>(order.data() + first, count), take);
    first += count;
    progress.update(first, first);
  }
  progress.finish();
}

std::unique_ptr<FrozenEncoder> open_frozen_encoder(const std::string& dir, nn::Device device, int64_t batch) {
  std::unique_ptr<FrozenEncoder> encoder;
  if (const std::optional<nn::ElmoModelFiles> elmo = nn::find_elmo_model(dir))
    encoder = std::make_unique<ElmoEncoder>(*elmo, device);
  else if (fs::exists(fs::path(dir) / "config.json"))
    encoder = std::make_unique<TransformerEncoder>(dir, device);
  else
    throw Error(dir + ": neither an ELMo model (options.json, weights.hdf5) nor an encoder (config.json)");
  encoder->batch_ = std::max<int64_t>(batch, 1);
  return encoder;
}

}  // namespace kglm::train::frozen
