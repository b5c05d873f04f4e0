#include "verbalize/verbalizer_model.hpp"

#include <simdjson.h>

#include "core/error.hpp"
#include "nn/t5_checkpoint.hpp"
#include "verbalize/seq2seq_batch.hpp"
#include "verbalize/verbalizer_training.hpp"

namespace kglm::verbalize {

Verbalizer load_verbalizer(const std::filesystem::path& dir, nn::Device device) {
  Verbalizer v;
  if (!std::filesystem::is_directory(dir)) throw Error(dir.string() + ": not a model directory");
  v.config = nn::read_t5_config(dir / "config.json");
  v.tokenizer = tok::load_t5_tokenizer(dir);
  check_special_tokens(*v.tokenizer, v.config);
  v.params = std::make_unique<nn::ParameterStore>(device);
  v.model = std::make_unique<nn::T5Model>(v.config, *v.params);
  v.params->allocate(1, false);
  nn::load_t5_weights(dir, *v.params, v.config);
  const std::filesystem::path lengths = dir / kVerbalizerFile;
  if (std::filesystem::exists(lengths)) {
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (parser.load(lengths.string()).get(root) || root["max_source_len"].get(v.max_source_len) ||
        root["max_target_len"].get(v.max_target_len) || v.max_source_len < 2 || v.max_target_len < 1)
      throw Error(lengths.string() + ": not a verbalizer settings file");
  }
  return v;
}

}  // namespace kglm::verbalize
