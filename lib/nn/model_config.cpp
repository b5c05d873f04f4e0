#include "nn/model_config.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "nn/config_json.hpp"
#include "nn/safetensors.hpp"

namespace kglm::nn {

std::string ModelConfig::prefix() const { return architecture == Architecture::Bert ? "bert." : "roberta."; }

std::string ModelConfig::model_type() const { return architecture == Architecture::Bert ? "bert" : "xlm-roberta"; }

void ModelConfig::validate() const {
  auto fail = [](const std::string& what) { throw Error("model config: " + what); };
  if (vocab_size <= 0) fail("vocab_size must be positive");
  if (hidden <= 0 || layers <= 0 || heads <= 0 || intermediate <= 0) fail("sizes must be positive");
  check_size_limits("model config", {{"vocab_size", vocab_size, int64_t(1) << 24},
                                     {"hidden_size", hidden, int64_t(1) << 16},
                                     {"num_hidden_layers", layers, 1024},
                                     {"num_attention_heads", heads, 1024},
                                     {"intermediate_size", intermediate, int64_t(1) << 18},
                                     {"max_position_embeddings", max_positions, int64_t(1) << 20},
                                     {"type_vocab_size", type_vocab, int64_t(1) << 16}});
  if (hidden % heads != 0)
    fail("hidden_size " + std::to_string(hidden) + " is not divisible by num_attention_heads " + std::to_string(heads));
  if (max_positions <= 0 || type_vocab <= 0) fail("max_position_embeddings and type_vocab_size must be positive");
  if (pad_token_id < 0 || pad_token_id >= vocab_size) fail("pad_token_id outside the vocabulary");
  if (architecture == Architecture::XlmRoberta && pad_token_id + 1 >= max_positions)
    fail("max_position_embeddings too small for RoBERTa's padding-offset positions");
  if (!(layer_norm_eps > 0)) fail("layer_norm_eps must be positive");
  if (!(hidden_dropout >= 0 && hidden_dropout < 1) || !(attention_dropout >= 0 && attention_dropout < 1))
    fail("dropout probabilities must be in [0, 1)");
}

ModelConfig default_config(Architecture architecture, int64_t vocab_size) {
  ModelConfig c;
  c.architecture = architecture;
  c.vocab_size = vocab_size;
  if (architecture == Architecture::Bert) {
    c.max_positions = 512;
    c.type_vocab = 2;
    c.pad_token_id = 0;
    c.layer_norm_eps = 1e-12;
  }
  return c;
}

namespace {

// The sizes of config.json against the weights beside it (when model.safetensors is there; its
// header only is read): a config.json of more layers or another vocabulary than its weights (edited
// by hand, copied from another model) is refused before the model is built, naming both numbers.
void check_against_weights(const ModelConfig& c, const std::filesystem::path& weights, const ConfigJsonReader& json) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(weights, ec)) return;
  const SafetensorsFile file = SafetensorsFile::open(weights);
  int64_t layers = 0;
  for (const SafetensorsEntry& e : file.entries()) {
    constexpr std::string_view kLayer = "encoder.layer.";
    if (const size_t at = e.name.find(kLayer); at != std::string::npos) {
      int64_t index = -1;
      const char* digits = e.name.data() + at + kLayer.size();
      std::from_chars(digits, e.name.data() + e.name.size(), index);
      layers = std::max(layers, index + 1);
    }
    constexpr std::string_view kWords = "embeddings.word_embeddings.weight";
    if (e.name.size() >= kWords.size() && e.name.compare(e.name.size() - kWords.size(), kWords.size(), kWords) == 0 &&
        e.shape != Shape{c.vocab_size, c.hidden})
      json.fail("vocab_size " + std::to_string(c.vocab_size) + " and hidden_size " + std::to_string(c.hidden) +
                " do not match " + weights.filename().string() + ", whose " + e.name + " is " + shape_string(e.shape));
  }
  if (c.layers > layers)
    json.fail("num_hidden_layers is " + std::to_string(c.layers) + ", but " + weights.filename().string() + " holds " +
              std::to_string(layers) + " layers");
}

}  // namespace

ModelConfig read_model_config(const std::filesystem::path& config_json) {
  const ConfigJsonReader json(config_json);
  const std::optional<std::string> type = json.string("model_type");
  if (!type) json.fail("no \"model_type\"");
  ModelConfig c;
  if (type == "xlm-roberta" || type == "roberta") {
    c = default_config(Architecture::XlmRoberta, 0);
  } else if (type == "bert") {
    c = default_config(Architecture::Bert, 0);
  } else {
    json.fail("model_type \"" + *type + "\" is not supported (xlm-roberta, roberta, bert)");
  }
  json.integer("vocab_size", c.vocab_size, true);
  json.integer("hidden_size", c.hidden, true);
  json.integer("num_hidden_layers", c.layers, true);
  json.integer("num_attention_heads", c.heads, true);
  json.integer("intermediate_size", c.intermediate, true);
  json.integer("max_position_embeddings", c.max_positions);
  json.integer("type_vocab_size", c.type_vocab);
  json.integer("pad_token_id", c.pad_token_id);
  json.integer("bos_token_id", c.bos_token_id);
  json.integer("eos_token_id", c.eos_token_id);
  json.real("layer_norm_eps", c.layer_norm_eps);
  json.real("hidden_dropout_prob", c.hidden_dropout);
  json.real("attention_probs_dropout_prob", c.attention_dropout);
  json.real("initializer_range", c.initializer_range);
  if (const auto act = json.string("hidden_act"); act && *act != "gelu")
    json.fail("hidden_act \"" + *act + "\" is not supported (gelu)");
  if (const auto pe = json.string("position_embedding_type"); pe && *pe != "absolute")
    json.fail("position_embedding_type \"" + *pe + "\" is not supported (absolute)");
  try {
    c.validate();
  } catch (const Error& e) {
    json.fail(e.what());
  }
  check_against_weights(c, config_json.parent_path() / "model.safetensors", json);
  return c;
}

void write_model_config(const std::filesystem::path& config_json, const ModelConfig& c,
                        const std::string& architectures_name,
                        const std::vector<std::pair<std::string, std::string>>& extra) {
  ConfigJsonWriter out;
  out.field("architectures", "[" + json_string(architectures_name) + "]");
  out.text("model_type", c.model_type());
  out.field("vocab_size", c.vocab_size);
  out.field("hidden_size", c.hidden);
  out.field("num_hidden_layers", c.layers);
  out.field("num_attention_heads", c.heads);
  out.field("intermediate_size", c.intermediate);
  out.text("hidden_act", "gelu");
  out.number("hidden_dropout_prob", c.hidden_dropout);
  out.number("attention_probs_dropout_prob", c.attention_dropout);
  out.field("max_position_embeddings", c.max_positions);
  out.field("type_vocab_size", c.type_vocab);
  out.number("layer_norm_eps", c.layer_norm_eps);
  out.number("initializer_range", c.initializer_range);
  out.text("position_embedding_type", "absolute");
  out.field("pad_token_id", c.pad_token_id);
  out.field("bos_token_id", c.bos_token_id);
  out.field("eos_token_id", c.eos_token_id);
  for (const auto& [key, json] : extra) out.field(key, json);
  out.text("torch_dtype", "float32");
  out.write(config_json);
}

}  // namespace kglm::nn
