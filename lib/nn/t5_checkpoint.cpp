#include "nn/t5_checkpoint.hpp"
#include "nn/torch_checkpoint.hpp"

#include <cstring>

#include "core/error.hpp"
#include "nn/checkpoint.hpp"
#include "nn/safetensors.hpp"

namespace kglm::nn {

void load_t5_weights(const std::filesystem::path& dir, ParameterStore& params, const T5Config& config) {
  const bool single =
      std::filesystem::exists(dir / "model.safetensors") || std::filesystem::exists(dir / "pytorch_model.bin");
  if (!single && std::filesystem::exists(dir / "model.safetensors.index.json"))
    throw Error(dir.string() +
                ": no model.safetensors (sharded checkpoints are not supported: merge the shards "
                "into one file)");
  const SafetensorsFile weights = open_model_weights(dir);
  const std::string file = weights.source();
  const LoadReport report = load_parameters(weights, params, false);
  const Parameter* shared = params.find("shared.weight");
  if (!shared) throw Error("load_t5_weights: the parameter store holds no T5 model");
  const Tensor words = shared->value.to(Device::Cpu);
  for (const std::string& name : report.unexpected) {
    const bool copy = name == "encoder.embed_tokens.weight" || name == "decoder.embed_tokens.weight" ||
                      (name == "lm_head.weight" && config.tie_embeddings);
    if (!copy) throw Error(file + ": tensor '" + name + "' is not part of this T5 model");
    const Tensor t = weights.read_f32(name);
    if (t.shape() != words.shape() || std::memcmp(t.raw(), words.raw(), t.nbytes()) != 0)
      throw Error(file + ": tensor '" + name + "' differs from shared.weight; kglm keeps one matrix");
  }
}

void save_t5_dir(const std::filesystem::path& dir, const ParameterStore& params, const T5Config& config, DType dtype,
                 const std::vector<std::pair<std::string, std::string>>& metadata,
                 const std::function<void(const std::filesystem::path&)>& write_files) {
  write_model_dir(dir, params, dtype, metadata, [&](const std::filesystem::path& tmp) {
    write_t5_config(tmp / "config.json", config);
    if (write_files) write_files(tmp);
  });
}

}  // namespace kglm::nn
