// ELMo's options.json (the presets, a round trip, errors that name the file and the field), its
// character ids (bilm-tf's layout at 261 characters, AllenNLP's at 262), and the whole model against
// PyTorch (tests/reference/data/elmo-tiny, weights in bilm-tf's layouts): two batches with the LSTM
// state carried, both directions' losses and every gradient, on every device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "nn/adagrad_optimizer.hpp"
#include "nn/cuda/runtime.hpp"
#include "nn/elmo.hpp"
#include "nn/elmo_characters.hpp"
#include "nn/elmo_checkpoint.hpp"
#include "nn/elmo_options.hpp"
#include "nn/ops/elementwise.hpp"
#include "nn/safetensors.hpp"
#include "ops_test_util.hpp"
#include "unit/test_paths.hpp"

namespace kglm::nn {
namespace {

namespace fs = std::filesystem;

const fs::path kPresets = fs::path(test::source_dir()) / "data/elmo";

TEST(ElmoOptions, PaperPresetIsTheAuthorsTrainer) {
  const ElmoOptions o = read_elmo_options(kPresets / "options-paper.json");
  EXPECT_EQ(o.cell, 2048);
  EXPECT_EQ(o.projection, 512);
  EXPECT_EQ(o.layers, 2);
  EXPECT_EQ(o.cell_clip, 3);
  EXPECT_EQ(o.proj_clip, 3);
  EXPECT_TRUE(o.skip_connections);
  EXPECT_EQ(o.filter_total(), 2048);
  EXPECT_EQ(o.filters.size(), 7u);
  EXPECT_EQ(o.filters[6].width, 7);
  EXPECT_EQ(o.filters[6].count, 1024);
  EXPECT_EQ(o.highways, 2);
  EXPECT_EQ(o.char_embedding, 16);
  EXPECT_EQ(o.characters, 261);
  EXPECT_EQ(o.max_characters, 50);
  EXPECT_EQ(o.vocabulary, 100000);
  EXPECT_EQ(o.negative_samples, 4096);
  EXPECT_EQ(o.batch_size, 192);
  EXPECT_EQ(o.unroll_steps, 20);
  EXPECT_DOUBLE_EQ(o.dropout, 0.1);
  EXPECT_DOUBLE_EQ(o.clip_norm, 10.0);
  const ElmoOptions small = read_elmo_options(kPresets / "options-small.json");
  EXPECT_LT(small.cell, o.cell);
}

TEST(ElmoOptions, RoundTripsAndNamesBadFields) {
  test::ScratchDir dir;
  ElmoOptions o = read_elmo_options(kPresets / "options-small.json");
  o.characters = 262;
  o.cell_clip = 2.5;
  o.filters = {{2, 8}, {5, 3}};
  o.activation = "tanh";
  write_elmo_options(fs::path(dir.file("options.json")), o);
  const ElmoOptions back = read_elmo_options(fs::path(dir.file("options.json")));
  EXPECT_EQ(back.characters, 262);
  EXPECT_EQ(back.cell_clip, 2.5);
  ASSERT_EQ(back.filters.size(), 2u);
  EXPECT_EQ(back.filters[1].width, 5);
  EXPECT_EQ(back.filters[1].count, 3);
  EXPECT_EQ(back.activation, "tanh");
  EXPECT_EQ(back.cell, o.cell);
  EXPECT_EQ(back.vocabulary, o.vocabulary);

  auto expect_refused = [&](const std::string& json, const std::string& what) {
    std::ofstream(fs::path(dir.file("bad.json"))) << json;
    try {
      read_elmo_options(fs::path(dir.file("bad.json")));
      ADD_FAILURE() << "accepted: " << json;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  const std::string lstm = R"("lstm": {"dim": 8, "projection_dim": 4, "n_layers": 1})";
  const std::string cnn =
      R"("n_highway": 1, "embedding": {"dim": 4}, "n_characters": 261, "max_characters_per_token": 50)";
  expect_refused("{" + lstm + R"(, "char_cnn": {"filters": [[1, 4]], )" + cnn + "}, \"dropout\": 1}", "dropout");
  expect_refused("{" + lstm + R"(, "char_cnn": {"filters": [[60, 4]], )" + cnn + "}}", "filter [60, 4]");
  expect_refused("{" + lstm + R"(, "char_cnn": {"filters": [[1, "x"]], )" + cnn + "}}", "/char_cnn/filters");
  expect_refused("{" + lstm + R"(, "char_cnn": {)" + cnn + "}}", "/char_cnn/filters");
  expect_refused(R"({"lstm": {"dim": 8}, "char_cnn": {"filters": [[1, 4]], )" + cnn + "}}", "/lstm/projection_dim");
  expect_refused("[1, 2]", "not a JSON object");
}

std::vector<int32_t> ids(std::string_view token, int64_t characters, int64_t max = 50) {
  std::vector<int32_t> out(static_cast<size_t>(max));
  elmo_character_ids(token, max, characters, out.data());
  return out;
}

TEST(ElmoCharacters, BytesBetweenWordMarkers) {
  const std::vector<int32_t> word = ids("añ", 261, 6);  // ñ is two UTF-8 bytes
  EXPECT_EQ(word, (std::vector<int32_t>{258, 'a', 0xC3, 0xB1, 259, 260}));
  // At 262 every id moves up by one (0 is left for masked words).
  EXPECT_EQ(ids("añ", 262, 6), (std::vector<int32_t>{259, 'a' + 1, 0xC4, 0xB2, 260, 261}));
  EXPECT_EQ(ids("<S>", 261, 5), (std::vector<int32_t>{258, 256, 259, 260, 260}));
  EXPECT_EQ(ids("</S>", 262, 5), (std::vector<int32_t>{259, 258, 260, 261, 261}));
  // Tokens are cut to max − 2 bytes, the end-of-word marker kept.
  const std::vector<int32_t> long_word = ids(std::string(60, 'x'), 261);
  EXPECT_EQ(long_word[0], 258);
  EXPECT_EQ(long_word[48], 'x');
  EXPECT_EQ(long_word[49], 259);
}

class ElmoModelParity : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override {
    if (GetParam() == Device::Cuda && !cuda::available()) GTEST_SKIP() << cuda::unavailable_reason();
  }
  const fs::path dir = fs::path(test::source_dir()) / "tests/reference/data/elmo-tiny";
};

TEST_P(ElmoModelParity, TwoCarriedBatchesMatchTorch) {
  const Device device = GetParam();
  const ElmoOptions o = read_elmo_options(dir / "options.json");
  const SafetensorsFile ref = SafetensorsFile::open(dir / "reference.safetensors");
  ParameterStore params(device);
  ElmoModel model(o, o.vocabulary, params);
  params.allocate();
  import_bilm_tensors(
      [&](const std::string& name, const Shape& shape) {
        Tensor t = ref.read_f32("weight." + name);
        EXPECT_EQ(t.shape(), shape) << name;
        return t;
      },
      o, true, params);
  // The export gives back what was imported, in the file's layouts (W_0 joined again).
  for (const auto& [name, tensor] : export_bilm_tensors(params, o, true))
    EXPECT_EQ(relative_error(tensor, ref.read_f32("weight." + name)), 0.0) << name;

  const int64_t windows = o.batch_size, steps = o.unroll_steps;
  model.reset_state(windows);
  for (int b = 0; b < 2; ++b) {
    ElmoBatch batch{windows, steps, {}};
    for (int d = 0; d < 2; ++d) {
      const std::string key = "batch" + std::to_string(b) + ".dir" + std::to_string(d) + ".";
      batch.streams[d] = {ref.read_i32(key + "characters").to(device), ref.read_i32(key + "targets").to(device)};
    }
    const ElmoLoss loss = model.forward(batch, DropoutContext{}, {nullptr, nullptr}, b == 1 ? 1.0 : 0.0);
    for (int d = 0; d < 2; ++d) {
      const double want =
          ref.read_f32("batch" + std::to_string(b) + ".dir" + std::to_string(d) + ".loss").data<float>()[0];
      EXPECT_NEAR(loss.directions[d].loss_sum, want, 1e-5 * want) << "batch " << b << " direction " << d;
      EXPECT_EQ(loss.directions[d].counted, windows * steps);
    }
  }
  model.backward();
  for (const auto& [name, grad] : export_bilm_tensors(params, o, true, true))
    EXPECT_LE(relative_error(grad, ref.read_f32("grad." + name)), 1e-4) << name;
  // The layer outputs: the token vectors and each LSTM layer's, [T·B, projection].
  EXPECT_EQ(model.layer_output(0, 0).shape(), (Shape{windows * steps, o.projection}));
  EXPECT_EQ(model.layer_output(1, 2).shape(), (Shape{windows * steps, o.projection}));
}

// bilm-tf's weights.hdf5 as h5py writes it (the fixture script, as dump_weights does) reads into the
// model's parameters exactly.
TEST(ElmoCheckpoint, ReadsBilmTfWeightsHdf5) {
  const fs::path dir = fs::path(test::source_dir()) / "tests/reference/data/elmo-tiny";
  const ElmoOptions o = read_elmo_options(dir / "options.json");
  const SafetensorsFile ref = SafetensorsFile::open(dir / "reference.safetensors");
  ParameterStore params;
  ElmoModel model(o, o.vocabulary, params);
  params.allocate();
  read_bilm_weights(dir / "weights.hdf5", o, false, params);
  const auto tensors = export_bilm_tensors(params, o, false);
  EXPECT_EQ(tensors.size(), 1u + 2 * 3 + 4 * 1 + 2 + 2 * 2 * 3);  // char_embed, CNN, highway, projection, LSTMs
  for (const auto& [name, tensor] : tensors)
    EXPECT_EQ(relative_error(tensor, ref.read_f32("weight." + name)), 0.0) << name;
}

TEST(ElmoCheckpoint, WeightsHdf5RoundTripsAndRefusesOtherShapes) {
  test::ScratchDir dir;
  const ElmoOptions o = read_elmo_options(fs::path(test::source_dir()) / "data/elmo/options-small.json");
  ParameterStore a, b;
  ElmoModel first(o, 50, a), second(o, 50, b);
  a.allocate();
  b.allocate();
  first.initialize(3);
  const fs::path file = dir.file("weights.hdf5");
  write_bilm_weights(file, a, o, true);
  read_bilm_weights(file, o, true, b);
  EXPECT_EQ(std::memcmp(a.values().raw(), b.values().raw(), a.values().nbytes()), 0);
  // The carry biases start at −2, the transform biases at 0.
  const Tensor bias = a.get("CNN_high_0/b").value;
  const int64_t f = o.filter_total();
  EXPECT_EQ(bias.data<float>()[0], 0.0f);
  EXPECT_EQ(bias.data<float>()[f], -2.0f);
  // Options that make another shape: the error names the file and the dataset.
  ElmoOptions wider = o;
  wider.cell *= 2;
  ParameterStore c;
  ElmoModel third(wider, 50, c);
  c.allocate();
  try {
    read_bilm_weights(file, wider, true, c);
    ADD_FAILURE() << "read weights of another shape";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("weights.hdf5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("W_0"), std::string::npos) << e.what();
  }
  std::ofstream(dir.file("garbage.hdf5")) << "not hdf5";
  EXPECT_THROW(read_bilm_weights(dir.file("garbage.hdf5"), o, true, c), Error);
}

// bilm-tf's optimizer: TensorFlow's global-norm clipping, then Adagrad from accumulators of 1.0,
// against torch.optim.Adagrad (eps 0) after the same clipping (make_elmo_fixtures.py), per device.
TEST_P(ElmoModelParity, AdagradMatchesTorch) {
  const SafetensorsFile ref =
      SafetensorsFile::open(fs::path(test::source_dir()) / "tests/reference/data/elmo-ops.safetensors");
  ParameterStore params(GetParam());
  params.add("p0", {3, 5}, Parameter::Init::Zeros, false);
  params.add("p1", {4}, Parameter::Init::Zeros, false);
  params.allocate();
  params.get("p0").value.copy_from(ref.read_f32("adagrad.init.p0"));
  params.get("p1").value.copy_from(ref.read_f32("adagrad.init.p1"));
  Adagrad adagrad(params, AdagradOptions{0.2, 1.0, 1.0});
  for (int step = 0; step < 3; ++step) {
    const std::string s = std::to_string(step);
    params.get("p0").grad.copy_from(ref.read_f32("adagrad.grad." + s + ".p0"));
    params.get("p1").grad.copy_from(ref.read_f32("adagrad.grad." + s + ".p1"));
    const StepReport r = adagrad.step();
    params.zero_grads();
    EXPECT_NEAR(r.grad_norm, ref.read_f32("adagrad.norm." + s).data<float>()[0], 1e-5);
    EXPECT_LT(r.clip_scale, 1.0);
    EXPECT_LE(relative_error(params.get("p0").value.to(Device::Cpu), ref.read_f32("adagrad.after." + s + ".p0")), 1e-6);
    EXPECT_LE(relative_error(params.get("p1").value.to(Device::Cpu), ref.read_f32("adagrad.after." + s + ".p1")), 1e-6);
  }
  EXPECT_EQ(adagrad.steps_done(), 3);
  // Restoring the accumulators gives the same next step.
  Tensor saved = adagrad.accumulators().to(Device::Cpu);
  ParameterStore copy(GetParam());
  copy.add("p0", {3, 5}, Parameter::Init::Zeros, false);
  copy.add("p1", {4}, Parameter::Init::Zeros, false);
  copy.allocate();
  copy.values().copy_from(params.values());
  Adagrad resumed(copy, AdagradOptions{0.2, 1.0, 1.0});
  resumed.restore(saved, 3);
  for (ParameterStore* store : {&params, &copy}) {
    store->get("p0").grad.copy_from(ref.read_f32("adagrad.grad.0.p0"));
    store->get("p1").grad.copy_from(ref.read_f32("adagrad.grad.0.p1"));
  }
  adagrad.step();
  resumed.step();
  EXPECT_EQ(relative_error(copy.values().to(Device::Cpu), params.values().to(Device::Cpu)), 0.0);
}

// When the filters add up to the projection size bilm-tf has no projection layer: the model trains
// without one and its weights have no CNN_proj.
TEST(ElmoModel, NoProjectionWhenTheFiltersAreTheProjectionSize) {
  ElmoOptions o = read_elmo_options(fs::path(test::source_dir()) / "data/elmo/options-small.json");
  o.filters = {{1, 32}, {2, 32}};
  ASSERT_EQ(o.filter_total(), o.projection);
  o.dropout = 0.2;
  ParameterStore params;
  ElmoModel model(o, 40, params);
  params.allocate();
  model.initialize(5);
  EXPECT_EQ(params.find("CNN_proj/W_proj"), nullptr);
  const int64_t windows = 3, steps = 4, rows = windows * steps;
  ElmoBatch batch{windows, steps, {}};
  std::vector<int32_t> chars(static_cast<size_t>(rows * o.max_characters));
  const char* words[] = {"the", "cat", "<S>", "</S>", "naïve"};
  for (int64_t r = 0; r < rows; ++r)
    elmo_character_ids(words[r % 5], o.max_characters, 261, chars.data() + r * o.max_characters);
  std::vector<int32_t> targets(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) targets[r] = static_cast<int32_t>((r * 7) % 40);
  for (auto& stream : batch.streams)
    stream = {Tensor::from<int32_t>({rows, o.max_characters}, chars), Tensor::from<int32_t>({rows}, targets)};
  model.reset_state(windows);
  DropoutContext dropout;
  dropout.training = true;
  dropout.seed = 9;
  const ElmoLoss loss = model.forward(batch, dropout, {nullptr, nullptr}, 1.0 / rows);
  model.backward();
  for (const auto& d : loss.directions)
    EXPECT_NEAR(d.loss_sum / rows, std::log(40.0), 1.0);  // about uniform at the start
  EXPECT_GT(sum_of_squares(params.grads()), 0.0);
  EXPECT_TRUE(std::isfinite(sum_of_squares(params.grads())));
  for (const auto& [name, tensor] : export_bilm_tensors(params, o, false))
    EXPECT_EQ(name.find("CNN_proj"), std::string::npos);
  // The carried state goes on; another batch size is refused until reset_state().
  ElmoBatch other{windows - 1, steps, {}};
  const int64_t fewer = (windows - 1) * steps;
  for (auto& stream : other.streams)
    stream = {batch.streams[0].characters.rows(0, fewer).clone(), batch.streams[0].targets.rows(0, fewer).clone()};
  try {
    model.forward(other, dropout, {nullptr, nullptr}, 0.0);
    ADD_FAILURE() << "a batch of another size ran on the carried state";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("reset_state"), std::string::npos) << e.what();
  }
  model.reset_state(windows - 1);
  EXPECT_NO_THROW(model.forward(other, dropout, {nullptr, nullptr}, 0.0));
}

INSTANTIATE_TEST_SUITE_P(Devices, ElmoModelParity, ::testing::Values(Device::Cpu, Device::Cuda),
                         [](const ::testing::TestParamInfo<Device>& info) {
                           return std::string(device_name(info.param));
                         });

}  // namespace
}  // namespace kglm::nn
