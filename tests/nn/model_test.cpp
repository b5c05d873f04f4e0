// Parity of the encoder, heads, checkpoints, optimizer and the T5 encoder-decoder with the PyTorch
// reference in tests/reference/ (plain torch.nn models with Hugging Face tensor names, run in float64):
// activations, losses, logits and every parameter gradient within 1e-4 relative error, on the CPU
// and (fp32, skipped without a GPU) on CUDA.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "nn/checkpoint.hpp"
#include "nn/config_json.hpp"
#include "nn/convert.hpp"
#include "nn/cuda/runtime.hpp"
#include "nn/heads.hpp"
#include "nn/loss_scaler.hpp"
#include "nn/ops/elementwise.hpp"
#include "nn/optimizer.hpp"
#include "nn/t5.hpp"
#include "nn/t5_checkpoint.hpp"
#include "train/loss_terms.hpp"
#include "unit/test_paths.hpp"

using namespace kglm;
using namespace kglm::nn;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(kglm::test::source_dir()) / "tests/reference/data";
constexpr double kTolerance = 1e-4;

// The largest error seen by the running test, printed at its end (for the record, not a check).
double worst_error = 0;
struct PrintWorst : ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override { worst_error = 0; }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (worst_error > 0) std::printf("  %s: largest relative error %.2e\n", info.name(), worst_error);
  }
};
const bool kPrintWorstRegistered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new PrintWorst);
  return true;
}();

// max|a − b| / max|b| over the tensor (the reference's own scale), or max|a| when b is all zero.
double relative_error(const Tensor& actual_anywhere, const Tensor& expected_anywhere) {
  const Tensor actual = actual_anywhere.to(Device::Cpu), expected = expected_anywhere.to(Device::Cpu);
  EXPECT_EQ(actual.shape(), expected.shape());
  if (actual.shape() != expected.shape()) return INFINITY;
  const float* a = actual.data<float>();
  const float* b = expected.data<float>();
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  const double error = scale > 0 ? diff / scale : diff;
  worst_error = std::max(worst_error, error);
  return error;
}

// The reference's padded batch, and kglm's packed batch of its real tokens.
struct Inputs {
  int64_t batch = 0, seq = 0;
  Tensor ids, mask, types;  // I32 [B·T], as the reference padded them
  Tensor labels;            // I32 [B·T], −100 except at masked positions
  EncoderBatch packed;
  std::vector<int32_t> packed_row;  // [B·T]: the packed row of each position, -1 for padding
  int32_t row(int64_t i) const { return packed_row[static_cast<size_t>(i)]; }
  // Rows [B·T, X] of a padded reference tensor at the real tokens, in packed order.
  Tensor real_rows(const Tensor& padded) const {
    const int64_t width = padded.numel() / (batch * seq);
    Tensor flat = padded.view({batch * seq, width}), out = Tensor::empty({packed.tokens(), width}, padded.dtype());
    for (int64_t i = 0; i < batch * seq; ++i)
      if (row(i) >= 0) out.rows(row(i), row(i) + 1).copy_from(flat.rows(i, i + 1));
    return out;
  }
};

// Sequences [first, first + count) of the reference's batch.
Inputs slice_inputs(const Inputs& all, int64_t first, int64_t count, const ModelConfig& config) {
  Inputs in = all;
  const int64_t t = all.seq;
  in.batch = count;
  in.ids = all.ids.rows(first * t, (first + count) * t).clone();
  in.mask = all.mask.rows(first * t, (first + count) * t).clone();
  in.types = all.types.rows(first * t, (first + count) * t).clone();
  in.labels = all.labels.rows(first * t, (first + count) * t).clone();
  in.packed = pack_padded(in.ids, in.mask, in.types, count, t, config, &in.packed_row);
  return in;
}

Inputs read_inputs(const SafetensorsFile& f, const ModelConfig& config) {
  Inputs in;
  Tensor ids = f.read_i32("input_ids");
  in.batch = ids.dim(0);
  in.seq = ids.dim(1);
  const int64_t n = ids.numel();
  in.ids = ids.view({n});
  in.mask = f.read_i32("attention_mask").view({n});
  in.types = f.read_i32("token_type_ids").view({n});
  in.labels = f.read_i32("labels").view({n});
  in.packed = pack_padded(in.ids, in.mask, in.types, in.batch, in.seq, config, &in.packed_row);
  return in;
}

// Every gradient of the store against grad.<HF name> of the reference file.
void expect_gradients(const ParameterStore& params, const SafetensorsFile& ref, size_t expected_count) {
  size_t compared = 0;
  for (const Parameter& p : params.all()) {
    for (const HfTensorName& hf : p.hf_names) {
      const std::string key = "grad." + hf.name;
      if (!ref.find(key)) continue;
      Tensor g = p.grad.rows(hf.row_begin, hf.row_end);
      EXPECT_LE(relative_error(g, ref.read_f32(key)), kTolerance) << hf.name;
      ++compared;
    }
  }
  EXPECT_EQ(compared, expected_count);
}

size_t count_prefixed(const SafetensorsFile& f, std::string_view prefix) {
  return static_cast<size_t>(std::count_if(f.entries().begin(), f.entries().end(), [&](const SafetensorsEntry& e) {
    return std::string_view(e.name).substr(0, prefix.size()) == prefix;
  }));
}

// The reference's encoder and MLM head with its weights.
struct LoadedMlm {
  ModelConfig config;
  ParameterStore params;
  std::optional<Encoder> encoder;
  std::optional<MlmHead> head;
  LoadedMlm(const fs::path& dir, Device device) : config(read_model_config(dir / "config.json")), params(device) {
    encoder.emplace(config, params);
    head.emplace(config, params, encoder->word_embeddings());
    params.allocate();
    load_parameters(SafetensorsFile::open(dir / "model.safetensors"), params, false);
  }
};

// (reference model, device)
class ReferenceCase : public ::testing::TestWithParam<std::tuple<std::string, Device>> {
 protected:
  void SetUp() override {
    if (device() == Device::Cuda && !cuda::available()) GTEST_SKIP() << cuda::unavailable_reason();
  }
  fs::path dir() const { return kData / std::get<0>(GetParam()); }
  Device device() const { return std::get<1>(GetParam()); }
};

TEST_P(ReferenceCase, MaskedLanguageModelMatchesPyTorch) {
  ModelConfig config = read_model_config(dir() / "config.json");
  ParameterStore params(device());
  Encoder encoder(config, params);
  MlmHead head(config, params, encoder.word_embeddings());
  params.allocate();
  LoadReport report = load_parameters(SafetensorsFile::open(dir() / "model.safetensors"), params, false);
  EXPECT_TRUE(report.unexpected.empty());

  auto ref = SafetensorsFile::open(dir() / "mlm.safetensors");
  Inputs in = read_inputs(ref, config);
  const Tensor& hidden = encoder.forward(in.packed, DropoutContext{});
  const int64_t h = config.hidden;
  for (int64_t l = 0; l <= config.layers; ++l) {
    Tensor expected = ref.read_f32("hidden_states." + std::to_string(l));
    EXPECT_LE(relative_error(encoder.hidden_state(static_cast<size_t>(l)),
                             in.real_rows(expected.view({in.batch * in.seq, h}))),
              kTolerance)
        << "hidden state " << l;
  }
  // The head runs on the masked rows only.
  std::vector<int32_t> rows, targets;
  const int32_t* labels = in.labels.data<int32_t>();
  for (int64_t i = 0; i < in.labels.numel(); ++i)
    if (labels[i] != kIgnoreIndex) {
      rows.push_back(in.row(i));
      targets.push_back(labels[i]);
    }
  const auto m = static_cast<int64_t>(rows.size());
  ASSERT_GT(m, 0);
  const Tensor row_tensor = Tensor::from<int32_t>({m}, rows), target_tensor = Tensor::from<int32_t>({m}, targets);
  // The logits of a forward without gradient (a training forward writes the gradient over them),
  // then the training forward, whose loss must be the same.
  const CrossEntropyResult eval = head.forward(hidden, row_tensor, target_tensor, false, 1.0);
  EXPECT_LE(relative_error(head.logits(), ref.read_f32("mlm_logits")), kTolerance);
  CrossEntropyResult ce = head.forward(hidden, row_tensor, target_tensor, true, 1.0 / static_cast<double>(m));
  EXPECT_EQ(ce.counted, m);
  EXPECT_EQ(ce.loss_sum, eval.loss_sum);
  const double loss = ce.loss_sum / static_cast<double>(m);
  const double ref_loss = ref.read_f32("loss").data<float>()[0];
  EXPECT_LE(std::fabs(loss - ref_loss) / std::fabs(ref_loss), kTolerance) << loss << " vs " << ref_loss;

  Tensor dhidden = Tensor::zeros(hidden.shape(), DType::F32, hidden.device());
  head.backward(dhidden);
  encoder.backward(dhidden);
  expect_gradients(params, ref, count_prefixed(ref, "grad."));
}

// Classification heads: the encoder from model.safetensors, the head's weights from the reference.
template <class Head>
void check_classification(const fs::path& dir, Device device, const std::string& file, int64_t labels) {
  ModelConfig config = read_model_config(dir / "config.json");
  ParameterStore params(device);
  Encoder encoder(config, params);
  Head head(config, params, labels);
  params.allocate();
  auto ref = SafetensorsFile::open(dir / file);
  LoadReport encoder_report = load_parameters(SafetensorsFile::open(dir / "model.safetensors"), params, true);
  LoadReport head_report = load_parameters(ref, params, true);
  for (const std::string& name : encoder_report.missing)  // what the MLM file lacks, the head file has
    EXPECT_EQ(std::count(head_report.missing.begin(), head_report.missing.end(), name), 0) << name;

  Inputs in = read_inputs(SafetensorsFile::open(dir / "mlm.safetensors"), config);
  const Tensor& hidden = encoder.forward(in.packed, DropoutContext{});
  Tensor targets = ref.read_i32("labels");
  Tensor ref_logits = ref.read_f32("logits");
  CrossEntropyResult ce;
  if constexpr (std::is_same_v<Head, SequenceClassificationHead>) {
    head.forward(hidden, in.packed.sequences, DropoutContext{});
    ce = head.loss(targets, true, 1.0 / 3);
  } else {
    // Every real token's row, in packed order; the reference's labels and logits at them.
    std::vector<int32_t> rows(static_cast<size_t>(in.packed.tokens()));
    std::iota(rows.begin(), rows.end(), 0);
    const Tensor row_tensor = Tensor::from<int32_t>({in.packed.tokens()}, rows);
    targets = in.real_rows(targets.view({targets.numel()})).view({in.packed.tokens()});
    ref_logits = in.real_rows(ref_logits.view({in.batch * in.seq, labels}));
    int64_t counted = 0;
    for (int64_t i = 0; i < targets.numel(); ++i) counted += targets.data<int32_t>()[i] != kIgnoreIndex;
    head.forward(hidden, row_tensor, Tensor(), DropoutContext{});
    ce = head.loss(targets, true, 1.0 / static_cast<double>(counted));
  }
  EXPECT_LE(relative_error(head.logits(), ref_logits.view({head.logits().dim(0), labels})), kTolerance);
  const double loss = ce.loss_sum / static_cast<double>(ce.counted);
  const double ref_loss = ref.read_f32("loss").data<float>()[0];
  EXPECT_LE(std::fabs(loss - ref_loss) / std::fabs(ref_loss), kTolerance);
  Tensor dhidden = Tensor::zeros(hidden.shape(), DType::F32, hidden.device());
  head.backward(dhidden);
  encoder.backward(dhidden);
  expect_gradients(params, ref, count_prefixed(ref, "grad."));
}

TEST_P(ReferenceCase, SequenceClassificationMatchesPyTorch) {
  check_classification<SequenceClassificationHead>(dir(), device(), "seqcls.safetensors", 3);
}

TEST_P(ReferenceCase, TokenClassificationMatchesPyTorch) {
  check_classification<TokenClassificationHead>(dir(), device(), "tokcls.safetensors", 5);
}

// Gradient accumulation: two micro-batches (rows {0, 1} and {2}) with the loss scaled by the total
// masked count give the gradients of the whole batch.
TEST_P(ReferenceCase, AccumulatedMicroBatchesGiveTheBatchGradient) {
  LoadedMlm model(dir(), device());
  Encoder& encoder = *model.encoder;
  MlmHead& head = *model.head;
  ParameterStore& params = model.params;
  auto ref = SafetensorsFile::open(dir() / "mlm.safetensors");
  Inputs in = read_inputs(ref, model.config);
  const int32_t* labels = in.labels.data<int32_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < in.labels.numel(); ++i) total += labels[i] != kIgnoreIndex;
  auto micro = [&](int64_t first, int64_t count) {
    const Inputs part = slice_inputs(in, first, count, model.config);
    std::vector<int32_t> rows, targets;
    for (int64_t i = 0; i < part.labels.numel(); ++i)
      if (part.labels.data<int32_t>()[i] != kIgnoreIndex) {
        rows.push_back(part.row(i));
        targets.push_back(part.labels.data<int32_t>()[i]);
      }
    const auto m = static_cast<int64_t>(rows.size());
    const Tensor& hidden = encoder.forward(part.packed, DropoutContext{});
    CrossEntropyResult ce = head.forward(hidden, Tensor::from<int32_t>({m}, rows), Tensor::from<int32_t>({m}, targets),
                                         true, 1.0 / static_cast<double>(total));
    Tensor dhidden = Tensor::zeros(hidden.shape(), DType::F32, hidden.device());
    head.backward(dhidden);
    encoder.backward(dhidden);
    return ce.loss_sum;
  };
  const double loss = (micro(0, 2) + micro(2, 1)) / static_cast<double>(total);
  const double ref_loss = ref.read_f32("loss").data<float>()[0];
  EXPECT_LE(std::fabs(loss - ref_loss) / std::fabs(ref_loss), kTolerance);
  expect_gradients(params, ref, count_prefixed(ref, "grad."));
}

// KMLM's L = L_MLM + α(L_K + L_R) through the trainer's LossTerms and one weighted head call,
// against the reference's combined loss (the labelled rows take the terms in turn; α = 0.3).
TEST_P(ReferenceCase, KmlmCombinedLossMatchesPyTorch) {
  LoadedMlm model(dir(), device());
  Encoder& encoder = *model.encoder;
  MlmHead& head = *model.head;
  ParameterStore& params = model.params;
  Inputs in = read_inputs(SafetensorsFile::open(dir() / "mlm.safetensors"), model.config);
  auto ref = SafetensorsFile::open(dir() / "kmlm.safetensors");
  const Tensor terms_in = ref.read_i32("terms");
  std::vector<int32_t> rows, targets;
  std::vector<train::LossTerm> terms;
  std::array<int64_t, train::kLossTermCount> counts{};
  for (int64_t i = 0; i < in.labels.numel(); ++i)
    if (in.labels.data<int32_t>()[i] != kIgnoreIndex) {
      rows.push_back(in.row(i));
      targets.push_back(in.labels.data<int32_t>()[i]);
      terms.push_back(static_cast<train::LossTerm>(terms_in.data<int32_t>()[i]));
      ++counts[static_cast<size_t>(terms.back())];
    }
  const auto m = static_cast<int64_t>(rows.size());
  train::LossTerms loss(counts, 0.3);
  Tensor row_losses = Tensor::empty({m}, DType::F64);
  const Tensor& hidden = encoder.forward(in.packed, DropoutContext{});
  head.forward(hidden, Tensor::from<int32_t>({m}, rows), Tensor::from<int32_t>({m}, targets), true, 1.0,
               loss.row_weights(terms), &row_losses);
  loss.add(terms, row_losses);
  auto expect_close = [&](double value, const std::string& key) {
    const double want = ref.read_f32(key).data<float>()[0];
    EXPECT_LE(std::fabs(value - want) / std::fabs(want), kTolerance) << key << ": " << value << " vs " << want;
  };
  expect_close(loss.total(), "loss");
  expect_close(loss.mean(train::LossTerm::mlm), "loss.mlm");
  expect_close(loss.mean(train::LossTerm::knowledge), "loss.knowledge");
  expect_close(loss.mean(train::LossTerm::reasoning), "loss.reasoning");
  Tensor dhidden = Tensor::zeros(hidden.shape(), DType::F32, hidden.device());
  head.backward(dhidden);
  encoder.backward(dhidden);
  expect_gradients(params, ref, count_prefixed(ref, "grad."));
}

// --train-layers: with the embeddings and layer 0 frozen, the trained parameters get exactly the
// reference's gradients and the frozen ones none at all.
TEST_P(ReferenceCase, FrozenParametersGetNoGradientAndTheOthersTheFullOne) {
  LoadedMlm model(dir(), device());
  model.encoder->freeze_below(1, false);
  Inputs in = read_inputs(SafetensorsFile::open(dir() / "mlm.safetensors"), model.config);
  auto ref = SafetensorsFile::open(dir() / "mlm.safetensors");
  std::vector<int32_t> rows, targets;
  for (int64_t i = 0; i < in.labels.numel(); ++i)
    if (in.labels.data<int32_t>()[i] != kIgnoreIndex) {
      rows.push_back(in.row(i));
      targets.push_back(in.labels.data<int32_t>()[i]);
    }
  const auto m = static_cast<int64_t>(rows.size());
  const Tensor& hidden = model.encoder->forward(in.packed, DropoutContext{});
  model.head->forward(hidden, Tensor::from<int32_t>({m}, rows), Tensor::from<int32_t>({m}, targets), true,
                      1.0 / static_cast<double>(m));
  Tensor dhidden = Tensor::zeros(hidden.shape(), DType::F32, hidden.device());
  model.head->backward(dhidden);
  model.encoder->backward(dhidden);
  size_t frozen = 0, trained = 0;
  for (const Parameter& p : model.params.all()) {
    const bool below =
        p.name.find(".encoder.layer.0.") != std::string::npos || p.name.find(".embeddings.") != std::string::npos;
    EXPECT_EQ(p.trainable, !below) << p.name;
    if (!p.trainable) {
      EXPECT_FALSE(p.grad.defined()) << p.name;
      ++frozen;
      continue;
    }
    for (const HfTensorName& hf : p.hf_names) {
      EXPECT_LE(relative_error(p.grad.rows(hf.row_begin, hf.row_end), ref.read_f32("grad." + hf.name)), kTolerance)
          << hf.name;
      ++trained;
    }
  }
  EXPECT_EQ(frozen, 5u + 12u);  // the embeddings (word, position, type, LayerNorm) and layer 0
  EXPECT_GT(trained, 12u);
  AdamW optimizer(model.params, OptimizerOptions{});
  EXPECT_LT(optimizer.exp_avg().numel(), model.params.count());
  EXPECT_GE(optimizer.exp_avg().numel(), model.params.trainable_count());
}

INSTANTIATE_TEST_SUITE_P(Reference, ReferenceCase,
                         ::testing::Combine(::testing::Values("xlmr-tiny", "bert-tiny"),
                                            ::testing::Values(Device::Cpu, Device::Cuda)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, Device>>& info) {
                           std::string name =
                               std::get<0>(info.param) + "_" + std::string(device_name(std::get<1>(info.param)));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

ParameterStore& mlm_params(const ModelConfig& config, ParameterStore& params) {
  Encoder encoder(config, params);
  MlmHead head(config, params, encoder.word_embeddings());
  params.allocate();
  return params;
}

TEST(Checkpoint, LegacyNamesAndStoredTiedDecoderLoadTheSameWeights) {
  ModelConfig config = read_model_config(kData / "bert-tiny/config.json");
  ParameterStore current, legacy;
  mlm_params(config, current);
  mlm_params(config, legacy);
  load_parameters(SafetensorsFile::open(kData / "bert-tiny/model.safetensors"), current, false);
  LoadReport r = load_parameters(SafetensorsFile::open(kData / "bert-tiny-legacy/model.safetensors"), legacy, false);
  EXPECT_TRUE(r.unexpected.empty());
  ASSERT_EQ(current.values().nbytes(), legacy.values().nbytes());
  EXPECT_EQ(std::memcmp(current.values().raw(), legacy.values().raw(), current.values().nbytes()), 0);
}

TEST(Checkpoint, ModelDirectoryRoundTripsExactly) {
  ModelConfig config = read_model_config(kData / "xlmr-tiny/config.json");
  ParameterStore a, b;
  mlm_params(config, a);
  mlm_params(config, b);
  a.initialize(7, 0.5);
  fs::path dir = fs::temp_directory_path() / ("kglm-ckpt-" + std::to_string(::getpid()));
  write_model_dir(dir, a, DType::F32, {{"format", "pt"}}, [&](const fs::path& tmp) {
    write_model_config(tmp / "config.json", config, "XLMRobertaForMaskedLM");
  });
  EXPECT_FALSE(fs::exists(dir.string() + ".tmp." + std::to_string(::getpid())));
  ModelConfig reread = read_model_config(dir / "config.json");
  EXPECT_EQ(reread.hidden, config.hidden);
  EXPECT_EQ(reread.layer_norm_eps, config.layer_norm_eps);
  EXPECT_EQ(reread.max_positions, config.max_positions);
  auto file = SafetensorsFile::open(dir / "model.safetensors");
  EXPECT_EQ(file.find("lm_head.decoder.weight"), nullptr);  // tied: not stored, as HF does
  EXPECT_NE(file.find("roberta.encoder.layer.1.attention.self.value.weight"), nullptr);
  load_parameters(file, b, false);
  EXPECT_EQ(std::memcmp(a.values().raw(), b.values().raw(), a.values().nbytes()), 0);
  // A tensor of the wrong shape is rejected with its name.
  ModelConfig other = config;
  other.intermediate = 48;
  ParameterStore c;
  mlm_params(other, c);
  try {
    load_parameters(file, c, false);
    ADD_FAILURE() << "shape mismatch accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("intermediate.dense.weight"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

// Config numbers are float tokens in their shortest form: transformers 5 refuses an int where its
// config class declares a float (T5Config's initializer_factor: 1), and a float dropout of 0.1f
// reads 0.1 as Hugging Face writes it, not the 0.10000000149011612 of its widened double.
TEST(ConfigJson, NumbersAreShortestFloatTokens) {
  ConfigJsonWriter out;
  out.number("whole", 1.0);
  out.number("dropout", 0.1f);
  out.number("eps", 1e-6);
  out.number("half", 0.5);
  out.number("big", 1e300);
  const std::string text = out.object(0);
  EXPECT_NE(text.find("\"whole\": 1.0"), std::string::npos) << text;
  EXPECT_NE(text.find("\"dropout\": 0.1,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"eps\": 1e-06"), std::string::npos) << text;
  EXPECT_NE(text.find("\"half\": 0.5"), std::string::npos) << text;
  EXPECT_NE(text.find("\"big\": 1e+300"), std::string::npos) << text;
}

// Issue 59, items 8–10: a damaged checkpoint is refused naming what is wrong, before a model is built.
TEST(Checkpoint, ImpossibleSizesInConfigJsonAreRefusedNamingTheField) {
  const std::string original = [] {
    std::ifstream in(kData / "xlmr-tiny/config.json");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  const fs::path dir = fs::temp_directory_path() / ("kglm-config-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(kData / "xlmr-tiny/model.safetensors", dir / "model.safetensors");
  // Each size far over its bound (2^40), then num_hidden_layers above what the weights hold.
  const std::vector<std::pair<std::string, std::string>> cases = {{"vocab_size", "1099511627776"},
                                                                  {"hidden_size", "1099511627776"},
                                                                  {"num_hidden_layers", "1099511627776"},
                                                                  {"num_attention_heads", "1099511627776"},
                                                                  {"intermediate_size", "1099511627776"},
                                                                  {"max_position_embeddings", "1099511627776"},
                                                                  {"type_vocab_size", "1099511627776"},
                                                                  {"num_hidden_layers", "3"},
                                                                  {"vocab_size", "121"}};
  for (const auto& [field, value] : cases) {
    std::string text = original;
    const size_t at = text.find("\"" + field + "\": ");
    ASSERT_NE(at, std::string::npos) << field;
    const size_t begin = at + field.size() + 4, end = text.find(',', begin);
    text.replace(begin, end - begin, value);
    std::ofstream(dir / "config.json") << text;
    try {
      read_model_config(dir / "config.json");
      ADD_FAILURE() << field << " " << value << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

TEST(Checkpoint, MissingEncoderTensorsAndNonFiniteWeightsAreRefused) {
  LoadReport report;
  report.missing = {"classifier.weight", "roberta.pooler.dense.weight"};  // heads may start random
  EXPECT_NO_THROW(require_encoder_tensors(report, "roberta.", "ckpt"));
  report.missing.push_back("roberta.encoder.layer.2.output.dense.weight");
  try {
    require_encoder_tensors(report, "roberta.", "ckpt");
    ADD_FAILURE() << "a missing encoder tensor accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("roberta.encoder.layer.2.output.dense.weight"), std::string::npos);
  }
  Tensor t = Tensor::zeros({2, 3});
  EXPECT_NO_THROW(require_finite(t, "ckpt", "w"));
  for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    t.data<float>()[4] = bad;
    try {
      require_finite(t, "ckpt", "w");
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("tensor 'w' holds"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("element 4 of 6"), std::string::npos) << e.what();
    }
  }
}

class OptimizerOn : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override {
    if (GetParam() == Device::Cuda && !cuda::available()) GTEST_SKIP() << cuda::unavailable_reason();
  }
};

TEST_P(OptimizerOn, ClippingScheduleAndAdamWMatchTorch) {
  auto ref = SafetensorsFile::open(kData / "optim/adamw.safetensors");
  ParameterStore params(GetParam());
  params.add("p0", {4, 3}, Parameter::Init::Zeros, true);
  params.add("p1", {5}, Parameter::Init::Zeros, true);
  params.allocate();
  params.get("p0").value.copy_from(ref.read_f32("init.p0"));
  params.get("p1").value.copy_from(ref.read_f32("init.p1"));
  OptimizerOptions options;
  options.lr = 1e-2;
  options.weight_decay = 0.01;
  options.max_grad_norm = 1.0;
  options.warmup_steps = 2;
  options.total_steps = 6;
  AdamW adamw(params, options);
  for (int step = 0; step < 6; ++step) {
    const std::string s = std::to_string(step);
    params.get("p0").grad.copy_from(ref.read_f32("grad." + s + ".p0"));
    params.get("p1").grad.copy_from(ref.read_f32("grad." + s + ".p1"));
    StepReport r = adamw.step();
    params.zero_grads();
    EXPECT_NEAR(r.lr, ref.read("lr." + s).data<double>()[0], 1e-12) << s;
    EXPECT_NEAR(r.grad_norm, ref.read("norm." + s).data<double>()[0], 1e-4) << s;
    EXPECT_LE(relative_error(params.get("p0").value, ref.read_f32("after." + s + ".p0")), 1e-5) << s;
    EXPECT_LE(relative_error(params.get("p1").value, ref.read_f32("after." + s + ".p1")), 1e-5) << s;
  }
}

// ZeRO-1: three AdamWs over thirds of the flat parameters, given the whole gradient's norm, update
// exactly what one AdamW over everything updates, and their moments add up to its moments.
TEST_P(OptimizerOn, ShardsUpdateLikeOneOptimizer) {
  auto make = [&](ParameterStore& params) {
    params.add("p0", {4, 3}, Parameter::Init::Normal, true);
    params.add("frozen", {7}, Parameter::Init::Normal, true);
    params.add("p1", {21}, Parameter::Init::Normal, false);
    params.allocate(3);
    params.freeze(1);
    params.initialize(5, 0.5);
  };
  ParameterStore whole_params(GetParam()), shard_params(GetParam());
  make(whole_params);
  make(shard_params);
  ASSERT_EQ(shard_params.count() % 48, 0);  // equal shards of whole 16-element blocks
  OptimizerOptions options;
  options.lr = 1e-2;
  options.max_grad_norm = 0.5;
  AdamW whole(whole_params, options);
  const int64_t third = shard_params.count() / 3;
  std::vector<std::unique_ptr<AdamW>> shards;
  for (int64_t k = 0; k < 3; ++k)
    shards.push_back(std::make_unique<AdamW>(shard_params, options, ParameterRange{k * third, (k + 1) * third}));
  for (int step = 0; step < 3; ++step) {
    Tensor grads = Tensor::empty({whole_params.count()});
    for (int64_t i = 0; i < grads.numel(); ++i) grads.data<float>()[i] = std::sin(0.37f * static_cast<float>(i + step));
    for (const Parameter& p : whole_params.all())
      if (!p.trainable) grads.rows(p.offset, p.offset + p.value.numel()).zero();  // no op writes them
    whole_params.grads().copy_from(grads);
    const StepReport expected = whole.step();
    double squares = 0;
    for (int64_t k = 0; k < 3; ++k) {
      shards[k]->gradients().copy_from(grads.rows(k * third, (k + 1) * third));
      squares += shards[k]->local_sum_of_squares();
    }
    for (auto& shard : shards) {
      const StepReport got = shard->step(1.0, squares);
      EXPECT_NEAR(got.grad_norm, expected.grad_norm, 1e-6 * expected.grad_norm) << step;
      EXPECT_LT(got.clip_scale, 1.0);
    }
    EXPECT_LE(relative_error(shard_params.values(), whole_params.values()), 1e-6) << step;
  }
  Tensor m = Tensor::zeros({whole.full_state_size()}, DType::F32, GetParam());
  for (auto& shard : shards) {
    auto [part, unused] = shard->full_moments();
    add(m, part, m);
  }
  EXPECT_LE(relative_error(m, whole.exp_avg()), 1e-6);
  // Restoring from the full layout gives each shard its part.
  AdamW restored(shard_params, options, ParameterRange{third, 2 * third});
  restored.restore(whole.exp_avg(), whole.exp_avg_sq(), 3);
  EXPECT_LE(relative_error(restored.exp_avg(), shards[1]->exp_avg()), 1e-6);
  EXPECT_THROW(AdamW(shard_params, options, ParameterRange{2 * third, third}), Error);
}

INSTANTIATE_TEST_SUITE_P(Devices, OptimizerOn, ::testing::Values(Device::Cpu, Device::Cuda),
                         [](const ::testing::TestParamInfo<Device>& info) {
                           return std::string(device_name(info.param));
                         });

// Mixed precision's parameters: F32 master values, a BF16 compute copy that initialisation,
// loading and every optimizer step refresh, F32 gradients.
TEST(Parameters, ComputeCopyFollowsTheMasterValues) {
  ParameterStore params(Device::Cpu, DType::BF16);
  params.add("w", {3, 5}, Parameter::Init::Normal, true);
  params.add("b", {5}, Parameter::Init::Zeros, false);
  params.allocate();
  params.initialize(3, 0.5);
  auto expect_rounded = [&](const char* when) {
    const Parameter& w = params.get("w");
    ASSERT_EQ(w.compute.dtype(), DType::BF16);
    ASSERT_EQ(w.grad.dtype(), DType::F32);
    for (int64_t i = 0; i < w.value.numel(); ++i)
      EXPECT_EQ(static_cast<const uint16_t*>(w.compute.raw())[i], f32_to_bf16(w.value.data<float>()[i])) << when;
  };
  expect_rounded("after initialize");
  params.get("w").grad.copy_from(Tensor::from<float>({3, 5}, std::vector<float>(15, 0.25f)));
  AdamW adamw(params, OptimizerOptions{});
  adamw.step();
  expect_rounded("after a step");
  ParameterStore f32;
  f32.add("w", {2}, Parameter::Init::Ones, true);
  f32.allocate();
  EXPECT_EQ(f32.get("w").compute.raw(), f32.get("w").value.raw());  // F32: the values themselves
  EXPECT_THROW(ParameterStore(Device::Cpu, DType::I32), Error);
}

// fp16 loss scaling: S from 2^16, halved on overflow (the step skipped: no update, no moments),
// doubled after 2000 clean steps; gradients of S·loss give the update of the loss itself.
TEST(LossScaling, ScheduleAndSkippedSteps) {
  LossScaler scaler(true);
  EXPECT_EQ(scaler.scale(), 65536.0);
  EXPECT_TRUE(scaler.update(true));
  EXPECT_EQ(scaler.scale(), 32768.0);
  for (int i = 0; i < 1999; ++i) EXPECT_FALSE(scaler.update(false));
  EXPECT_TRUE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 65536.0);
  EXPECT_EQ(scaler.clean_steps(), 0);
  LossScaler fixed;
  EXPECT_FALSE(fixed.update(true));
  EXPECT_EQ(fixed.scale(), 1.0);
  EXPECT_THROW(scaler.restore(0.5, 0), Error);

  auto make = [](ParameterStore& p) {
    p.add("w", {4}, Parameter::Init::Ones, true);
    p.allocate();
    p.initialize(1, 0.02);
  };
  ParameterStore plain, scaled;
  make(plain);
  make(scaled);
  const std::vector<float> g = {0.5f, -0.25f, 2.0f, 0.125f};  // powers of two: S·g is exact
  std::vector<float> gs;
  for (float v : g) gs.push_back(v * 1024.0f);
  AdamW a(plain, OptimizerOptions{}), b(scaled, OptimizerOptions{});
  plain.get("w").grad.copy_from(Tensor::from<float>({4}, g));
  scaled.get("w").grad.copy_from(Tensor::from<float>({4}, gs));
  const StepReport ra = a.step(), rb = b.step(1024.0);
  EXPECT_EQ(ra.grad_norm, rb.grad_norm);
  EXPECT_EQ(std::memcmp(plain.values().raw(), scaled.values().raw(), plain.values().nbytes()), 0);
  scaled.get("w").grad.copy_from(Tensor::from<float>({4}, {INFINITY, 0, 0, 0}));
  const Tensor before = scaled.values().clone(), m_before = b.exp_avg().clone();
  const StepReport overflow = b.step(1024.0);
  EXPECT_TRUE(overflow.skipped);
  EXPECT_EQ(b.steps_done(), 1);
  EXPECT_EQ(std::memcmp(before.raw(), scaled.values().raw(), before.nbytes()), 0);
  EXPECT_EQ(std::memcmp(m_before.raw(), b.exp_avg().raw(), m_before.nbytes()), 0);
  plain.get("w").grad.copy_from(Tensor::from<float>({4}, {INFINITY, 0, 0, 0}));
  EXPECT_THROW(a.step(), Error);  // at scale 1 (fp32, bf16) a non-finite norm is a divergence
}

}  // namespace

namespace kglm::nn {
namespace {

// The batch builder's position ids: RoBERTa numbers the real tokens from pad + 1 and gives padding
// pad; BERT counts 0, 1, …; a sequence past the model's positions is refused.
TEST(PositionIds, RobertaAndBertNumbering) {
  ModelConfig roberta = default_config(Architecture::XlmRoberta, 100);
  const auto pad = static_cast<int32_t>(roberta.pad_token_id);
  Tensor ids = Tensor::from<int32_t>({8}, {5, 6, pad, pad, 7, pad, 8, pad});
  Tensor pos = position_ids(ids, 2, 4, roberta);
  const std::vector<int32_t> want{pad + 1, pad + 2, pad, pad, pad + 1, pad, pad + 2, pad};
  EXPECT_EQ(std::vector<int32_t>(pos.data<int32_t>(), pos.data<int32_t>() + 8), want);
  ModelConfig bert = default_config(Architecture::Bert, 100);
  Tensor bpos = position_ids(ids, 2, 4, bert);
  EXPECT_EQ(std::vector<int32_t>(bpos.data<int32_t>(), bpos.data<int32_t>() + 8),
            (std::vector<int32_t>{0, 1, 2, 3, 0, 1, 2, 3}));
  bert.max_positions = 3;
  EXPECT_THROW(position_ids(ids, 2, 4, bert), Error);
}

}  // namespace
}  // namespace kglm::nn

// --- T5 (tests/reference/make_t5_fixtures.py) ------------------------------------------------------

namespace {

// The reference's T5 model with its weights, on `device`.
struct LoadedT5 {
  T5Config config;
  ParameterStore params;
  std::optional<T5Model> model;
  // dropout >= 0 replaces the reference's dropout_rate.
  explicit LoadedT5(const fs::path& dir, Device device = Device::Cpu, float dropout = -1)
      : config(read_t5_config(dir / "config.json")), params(device) {
    if (dropout >= 0) config.dropout = dropout;
    model.emplace(config, params);
    params.allocate();
    load_t5_weights(dir, params, config);
  }
};

// The reference's padded batch (sources right-padded, targets padded with ignored labels) as
// kglm's packed batch of its real tokens; with whole_targets, every target keeps all its positions
// (the padded ones' labels ignored), as a decode that runs them all sees them.
struct T5Inputs {
  int64_t batch = 0, source_len = 0, target_len = 0;
  Seq2SeqBatch packed;
  Tensor padded_decoder_input_ids;  // I32 [B·T]
  // Rows [B·len, X] of a padded reference tensor at the real positions of `seqs`, packed.
  Tensor real(const Tensor& padded, const PackedSequences& seqs, int64_t len) const {
    const int64_t width = padded.numel() / (batch * len);
    Tensor flat = padded.view({batch * len, width}), out = Tensor::empty({seqs.tokens(), width}, padded.dtype());
    for (int64_t s = 0; s < batch; ++s) {
      const int64_t at = seqs.offsets[static_cast<size_t>(s)];
      out.rows(at, at + seqs.length(s)).copy_from(flat.rows(s * len, s * len + seqs.length(s)));
    }
    return out;
  }
  Tensor real_sources(const Tensor& padded) const { return real(padded, packed.sources, source_len); }
  Tensor real_targets(const Tensor& padded) const { return real(padded, packed.targets, target_len); }
};

T5Inputs read_seq2seq(const SafetensorsFile& f, const T5Config& config, bool whole_targets = false) {
  T5Inputs in;
  Tensor ids = f.read_i32("input_ids"), labels = f.read_i32("labels"), mask = f.read_i32("attention_mask");
  in.batch = ids.dim(0);
  in.source_len = ids.dim(1);
  in.target_len = labels.dim(1);
  in.padded_decoder_input_ids = f.read_i32("decoder_input_ids").view({labels.numel()});
  std::vector<int64_t> source_lengths, target_lengths;
  for (int64_t b = 0; b < in.batch; ++b) {
    int64_t n = 0, m = 0;
    for (int64_t t = 0; t < in.source_len; ++t) n += mask.data<int32_t>()[b * in.source_len + t];
    for (int64_t t = 0; t < in.target_len; ++t)
      if (labels.data<int32_t>()[b * in.target_len + t] != kIgnoreIndex) m = t + 1;
    source_lengths.push_back(n);
    target_lengths.push_back(whole_targets ? in.target_len : m);
  }
  in.packed.sources = PackedSequences::from_lengths(source_lengths);
  in.packed.targets = PackedSequences::from_lengths(target_lengths);
  in.packed.input_ids = in.real_sources(ids).view({in.packed.sources.tokens()});
  in.packed.labels = in.real_targets(labels).view({in.packed.targets.tokens()});
  in.packed.decoder_input_ids = shift_right(in.packed.labels, in.packed.targets, config);
  return in;
}

// The examples `which` of a packed batch, in that order.
Seq2SeqBatch select_pairs(const Seq2SeqBatch& all, const std::vector<int64_t>& which) {
  std::vector<int64_t> source_lengths, target_lengths;
  std::vector<int32_t> ids, labels;
  for (int64_t s : which) {
    const auto copy = [s](const PackedSequences& seqs, const Tensor& from, std::vector<int32_t>& to,
                          std::vector<int64_t>& lengths) {
      const int32_t* first = from.data<int32_t>() + seqs.offsets[static_cast<size_t>(s)];
      to.insert(to.end(), first, first + seqs.length(s));
      lengths.push_back(seqs.length(s));
    };
    copy(all.sources, all.input_ids, ids, source_lengths);
    copy(all.targets, all.labels, labels, target_lengths);
  }
  Seq2SeqBatch b;
  b.sources = PackedSequences::from_lengths(source_lengths);
  b.targets = PackedSequences::from_lengths(target_lengths);
  b.input_ids = Tensor::from<int32_t>({b.sources.tokens()}, ids);
  b.labels = Tensor::from<int32_t>({b.targets.tokens()}, labels);
  return b;
}

class T5Reference : public ::testing::TestWithParam<std::string> {
 protected:
  fs::path dir() const { return kData / GetParam(); }
};

// (reference model, device): the checks that run on every device.
class T5Parity : public ::testing::TestWithParam<std::tuple<std::string, Device>> {
 protected:
  void SetUp() override {
    if (device() == Device::Cuda && !cuda::available()) GTEST_SKIP() << cuda::unavailable_reason();
  }
  fs::path dir() const { return kData / std::get<0>(GetParam()); }
  Device device() const { return std::get<1>(GetParam()); }
};

TEST_P(T5Parity, ForwardLossAndGradientsMatchPyTorch) {
  LoadedT5 t5(dir(), device());
  auto ref = SafetensorsFile::open(dir() / "seq2seq.safetensors");
  const T5Inputs in = read_seq2seq(ref, t5.config);
  const Seq2SeqBatch& batch = in.packed;
  ASSERT_LT(batch.sources.tokens(), in.batch * in.source_len);  // the reference padded some
  // The reference's decoder input is _shift_right of its labels.
  const Tensor reference_shifted = in.real_targets(in.padded_decoder_input_ids);
  EXPECT_EQ(std::memcmp(reference_shifted.raw(), batch.decoder_input_ids.raw(), reference_shifted.nbytes()), 0);

  const CrossEntropyResult eval = t5.model->forward(batch, DropoutContext{}, 0);
  const int64_t d = t5.config.d_model;
  EXPECT_LE(relative_error(t5.model->encoder_output(),
                           in.real_sources(ref.read_f32("encoder_hidden").view({in.batch * in.source_len, d}))),
            kTolerance);
  EXPECT_LE(relative_error(t5.model->decoder_output(),
                           in.real_targets(ref.read_f32("decoder_hidden").view({in.batch * in.target_len, d}))),
            kTolerance);
  EXPECT_LE(
      relative_error(t5.model->logits(),
                     in.real_targets(ref.read_f32("logits").view({in.batch * in.target_len, t5.config.vocab_size}))),
      kTolerance);
  ASSERT_GT(eval.counted, 0);
  const double ref_loss = ref.read_f32("loss").data<float>()[0];
  EXPECT_LE(std::fabs(eval.loss_sum / static_cast<double>(eval.counted) - ref_loss) / ref_loss, kTolerance);

  const CrossEntropyResult train = t5.model->forward(batch, DropoutContext{}, 1.0 / static_cast<double>(eval.counted));
  EXPECT_EQ(train.loss_sum, eval.loss_sum);
  t5.model->backward();
  expect_gradients(t5.params, ref, count_prefixed(ref, "grad."));
  EXPECT_EQ(count_prefixed(ref, "grad."), t5.params.size());
}

// With dropout, a pair's logits depend on its tokens and its number in the global batch alone: the
// same pair alone, or packed after another and numbered alike (DropoutContext::first_row), draws
// the same masks in the encoder and the decoder, attention probabilities included.
TEST_P(T5Parity, DropoutFollowsThePairNotTheBatch) {
  LoadedT5 t5(dir(), device(), 0.3f);
  const T5Inputs in = read_seq2seq(SafetensorsFile::open(dir() / "seq2seq.safetensors"), t5.config);
  Seq2SeqBatch alone = select_pairs(in.packed, {1}), after = select_pairs(in.packed, {0, 1});
  for (Seq2SeqBatch* b : {&alone, &after}) b->decoder_input_ids = shift_right(b->labels, b->targets, t5.config);
  const int64_t V = t5.config.vocab_size, rows = alone.targets.tokens();
  t5.model->forward(alone, DropoutContext{true, 9, 4, 7, 1}, 0);
  const Tensor a = t5.model->logits().clone().to(Device::Cpu);
  t5.model->forward(after, DropoutContext{true, 9, 4, 6, 2}, 0);
  const int64_t first = after.targets.offsets[1];
  const Tensor b = t5.model->logits().to(Device::Cpu).rows(first, first + rows).clone();
  EXPECT_LE(relative_error(b, a), 1e-5);  // the products over 1 or 2 pairs round differently
  // Numbered otherwise, or without dropout, the logits differ: dropout did act.
  t5.model->forward(alone, DropoutContext{true, 9, 4, 8, 1}, 0);
  EXPECT_GT(relative_error(t5.model->logits().to(Device::Cpu), a), 1e-3);
  t5.model->forward(alone, DropoutContext{}, 0);
  EXPECT_GT(relative_error(t5.model->logits().to(Device::Cpu), a), 1e-3);
  EXPECT_EQ(a.numel(), rows * V);
}

// The cached, one-position-at-a-time decode gives the teacher-forced pass's logits, also after the
// cache is reordered, shrunk and widened (beam search's and finished sequences' bookkeeping) and as
// it grows.
TEST_P(T5Parity, CachedDecodingEqualsTheFullRecompute) {
  LoadedT5 t5(dir(), device());
  auto ref = SafetensorsFile::open(dir() / "seq2seq.safetensors");
  const T5Inputs in = read_seq2seq(ref, t5.config, true);
  const Seq2SeqBatch& batch = in.packed;
  t5.model->forward(batch, DropoutContext{}, 0);
  const Tensor full = t5.model->logits().clone().to(Device::Cpu);
  const int64_t B = in.batch, T = in.target_len, V = t5.config.vocab_size;
  // Room for 2 steps at first; a reorder leaves room for one more step, and the cache doubles when a
  // step finds it full (here at steps 1, 2, 4 and 7: a reorder, growth, a reorder, growth …).
  ASSERT_GT(T, 7) << "the targets end before the cache grows after its last reorder";
  t5.model->start_decoding(batch.input_ids, batch.sources, T, 2);
  const int32_t* dec = batch.decoder_input_ids.data<int32_t>();
  std::vector<int32_t> order(static_cast<size_t>(B));
  for (int64_t i = 0; i < B; ++i) order[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  // The cache is reordered (before the first step, as beam search widens it, and reversed at step 3),
  // shrunk (the middle sequence leaves at step 5, as a finished one does) and widened (the first
  // sequence taken twice at step 6, as beams are).
  const std::vector<std::pair<int64_t, std::vector<int32_t>>> reorders = {
      {0, {1, 0, 2}}, {3, {2, 1, 0}}, {5, {0, 2}}, {6, {0, 0, 1}}};
  for (int64_t t = 0; t < T; ++t) {
    for (const auto& [at, rows] : reorders) {
      if (at != t) continue;
      std::vector<int32_t> next;
      for (int32_t r : rows) next.push_back(order[static_cast<size_t>(r)]);
      t5.model->reorder_cache(rows);
      order = next;
      EXPECT_EQ(t5.model->decoding_batch(), static_cast<int64_t>(order.size()));
    }
    const auto b = static_cast<int64_t>(order.size());
    std::vector<int32_t> tokens(static_cast<size_t>(b));
    for (int64_t i = 0; i < b; ++i) tokens[static_cast<size_t>(i)] = dec[order[static_cast<size_t>(i)] * T + t];
    const Tensor logits = t5.model->decode_step(Tensor::from<int32_t>({b}, tokens)).to(Device::Cpu);
    for (int64_t i = 0; i < b; ++i) {
      const float* got = logits.data<float>() + i * V;
      const float* want = full.data<float>() + (order[static_cast<size_t>(i)] * T + t) * V;
      double err = 0;
      for (int64_t v = 0; v < V; ++v) err = std::max(err, std::fabs(double(got[v]) - want[v]));
      EXPECT_LE(err, 1e-5) << "sequence " << order[static_cast<size_t>(i)] << " step " << t;
    }
  }
  EXPECT_EQ(t5.model->decoded_steps(), T);
  const auto b = static_cast<int64_t>(order.size());
  EXPECT_THROW(t5.model->decode_step(Tensor::from<int32_t>({b}, std::vector<int32_t>(static_cast<size_t>(b), 0))),
               Error);
  EXPECT_THROW(t5.model->reorder_cache({3}), Error);  // no such sequence
}

// The loss along a random direction in parameter space: central differences in float against
// the backward pass (a coarse, independent check beside the reference's float64 one, which the
// reference script itself checks by finite differences).
TEST_P(T5Reference, GradientMatchesFiniteDifferences) {
  LoadedT5 t5(dir());
  const T5Inputs in = read_seq2seq(SafetensorsFile::open(dir() / "seq2seq.safetensors"), t5.config);
  const Seq2SeqBatch& batch = in.packed;
  const CrossEntropyResult ce = t5.model->forward(batch, DropoutContext{}, 1.0);
  t5.model->backward();
  Tensor& values = t5.params.values();
  const Tensor grads = t5.params.grads().clone(), start = values.clone();
  Tensor direction = Tensor::empty(values.shape());
  Rng rng(5, 6);
  double analytic = 0;
  for (int64_t i = 0; i < values.numel(); ++i) {
    direction.data<float>()[i] = static_cast<float>(rng.uniform() - 0.5);
    analytic += double(direction.data<float>()[i]) * grads.data<float>()[i];
  }
  auto loss_at = [&](double h) {
    for (int64_t i = 0; i < values.numel(); ++i)
      values.data<float>()[i] = start.data<float>()[i] + static_cast<float>(h) * direction.data<float>()[i];
    t5.params.refresh_compute();
    return t5.model->forward(batch, DropoutContext{}, 0).loss_sum;
  };
  // The loss is computed in float: h must be large against its rounding, small against the ReLU
  // kinks a step crosses (t5-tiny's estimate falls from 2.5 at h = 1e-2 to the analytic 1.28).
  const double h = 1e-4, fd = (loss_at(h) - loss_at(-h)) / (2 * h);
  EXPECT_NEAR(fd, analytic, 1e-2 * std::max(1.0, std::fabs(analytic))) << "loss " << ce.loss_sum;
}

TEST_P(T5Reference, ModelDirectoryRoundTripsAndStoredEmbeddingCopiesLoad) {
  LoadedT5 t5(dir());
  fs::path out = fs::temp_directory_path() / ("kglm-t5-" + std::to_string(::getpid()));
  save_t5_dir(out, t5.params, t5.config, DType::F32, {{"format", "pt"}}, nullptr);
  const T5Config reread = read_t5_config(out / "config.json");
  EXPECT_EQ(reread.decoder_layers, t5.config.decoder_layers);
  EXPECT_EQ(reread.feed_forward, t5.config.feed_forward);
  EXPECT_EQ(reread.tie_embeddings, t5.config.tie_embeddings);
  EXPECT_EQ(reread.inner(), t5.config.inner());
  auto file = SafetensorsFile::open(out / "model.safetensors");
  EXPECT_EQ(file.find("encoder.embed_tokens.weight"), nullptr);
  EXPECT_EQ(file.find("lm_head.weight") != nullptr, !t5.config.tie_embeddings);
  LoadedT5 again(out);
  EXPECT_EQ(std::memcmp(again.params.values().raw(), t5.params.values().raw(), t5.params.values().nbytes()), 0);

  // Hugging Face's copies of the shared embeddings load when equal, and are refused otherwise.
  auto tensors = hf_tensors(t5.params);
  Tensor shared;
  for (auto& [name, t] : tensors)
    if (name == "shared.weight") shared = t.clone();
  tensors.emplace_back("encoder.embed_tokens.weight", shared);
  tensors.emplace_back("decoder.embed_tokens.weight", shared);
  write_safetensors(out / "model.safetensors", tensors);
  LoadedT5 with_copies(out);
  EXPECT_EQ(std::memcmp(with_copies.params.values().raw(), t5.params.values().raw(), t5.params.values().nbytes()), 0);
  shared.data<float>()[3] += 1;
  write_safetensors(out / "model.safetensors", tensors);
  EXPECT_THROW(LoadedT5 bad(out), Error);
  tensors.pop_back();
  tensors.pop_back();
  tensors.emplace_back("encoder.block.9.layer.0.SelfAttention.q.weight", shared);
  write_safetensors(out / "model.safetensors", tensors);
  EXPECT_THROW(LoadedT5 extra(out), Error);
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(Models, T5Parity,
                         ::testing::Combine(::testing::Values("t5-tiny", "mt5-tiny"),
                                            ::testing::Values(Device::Cpu, Device::Cuda)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, Device>>& info) {
                           return std::string(std::get<0>(info.param) == "t5-tiny" ? "T5_" : "MT5_") +
                                  std::string(device_name(std::get<1>(info.param)));
                         });
INSTANTIATE_TEST_SUITE_P(Models, T5Reference, ::testing::Values("t5-tiny", "mt5-tiny"), [](const auto& info) {
  return info.param == "t5-tiny" ? std::string("T5") : std::string("MT5");
});

// Hugging Face's buckets (computed by the reference in torch) for relative positions −300 … 300.
TEST(T5Buckets, MatchHuggingFace) {
  auto ref = SafetensorsFile::open(kData / "t5-buckets.safetensors");
  Tensor relative = ref.read_i32("relative");
  int checked = 0;
  for (const SafetensorsEntry& e : ref.entries()) {
    if (e.name.rfind("buckets.", 0) != 0) continue;
    int64_t buckets = 0, distance = 0;
    char kind[4] = {};
    ASSERT_EQ(std::sscanf(e.name.c_str(), "buckets.%ld.%ld.%3s", &buckets, &distance, kind), 3) << e.name;
    const bool bidirectional = std::string(kind) == "bi";
    Tensor want = ref.read_i32(e.name);
    for (int64_t i = 0; i < relative.numel(); ++i) {
      const int32_t r = relative.data<int32_t>()[i];
      ASSERT_EQ(relative_position_bucket(r, bidirectional, buckets, distance), want.data<int32_t>()[i])
          << e.name << " relative " << r;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

TEST(T5Config, RefusesWhatItCannotRun) {
  fs::path dir = fs::temp_directory_path() / ("kglm-t5cfg-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto write = [&](const std::string& text) {
    std::FILE* f = std::fopen((dir / "config.json").c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  const std::string base = R"("vocab_size": 10, "d_model": 8, "d_kv": 4, "d_ff": 16, "num_layers": 1, "num_heads": 2)";
  write("{\"model_type\": \"t5\", " + base + ", \"feed_forward_proj\": \"gated-silu\"}");
  EXPECT_THROW(read_t5_config(dir / "config.json"), Error);
  write("{\"model_type\": \"bert\", " + base + "}");
  EXPECT_THROW(read_t5_config(dir / "config.json"), Error);
  EXPECT_FALSE(is_t5_config(dir / "config.json"));
  write("{\"model_type\": \"mt5\", " + base + ", \"num_decoder_layers\": null}");
  const T5Config mt5 = read_t5_config(dir / "config.json");
  EXPECT_EQ(mt5.decoder_layers, 1);
  EXPECT_EQ(mt5.feed_forward, FeedForward::GatedGelu);
  EXPECT_FALSE(mt5.tie_embeddings);
  write("{\"model_type\": \"t5\", " + base + ", \"eos_token_id\": 10}");
  EXPECT_THROW(read_t5_config(dir / "config.json"), Error);
  fs::remove_all(dir);
}

}  // namespace
