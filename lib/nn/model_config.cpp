#include "nn/model_config.hpp"

#include <optional>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "nn/config_json.hpp"

namespace kglm::nn {

std::string ModelConfig::prefix() const { return architecture == Architecture::Bert ? "bert." : "roberta."; }

std::string ModelConfig::model_type() const { return architecture == Architecture::Bert ? "bert" : "xlm-roberta"; }

void ModelConfig::validate() const {
  auto fail = [](const std::string& what) { throw Error("model config: " + what); };
  if (vocab_size <= 0) fail("vocab_size must be positive");
  if (hidden <= 0 || layers <= 0 || heads <= 0 || intermediate <= 0) fail("sizes must be positive");
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
