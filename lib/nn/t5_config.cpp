#include "nn/t5_config.hpp"

#include <optional>

#include "core/error.hpp"
#include "nn/config_json.hpp"

namespace kglm::nn {

void T5Config::validate() const {
  auto fail = [](const std::string& what) { throw Error("T5 config: " + what); };
  if (vocab_size <= 0) fail("vocab_size must be positive");
  if (d_model <= 0 || d_kv <= 0 || d_ff <= 0 || layers <= 0 || decoder_layers <= 0 || heads <= 0)
    fail("sizes must be positive");
  check_size_limits("T5 config", {{"vocab_size", vocab_size, int64_t(1) << 24},
                                  {"d_model", d_model, int64_t(1) << 16},
                                  {"d_kv", d_kv, int64_t(1) << 16},
                                  {"d_ff", d_ff, int64_t(1) << 18},
                                  {"num_layers", layers, 1024},
                                  {"num_decoder_layers", decoder_layers, 1024},
                                  {"num_heads", heads, 1024},
                                  {"relative_attention_num_buckets", buckets, int64_t(1) << 16},
                                  {"relative_attention_max_distance", max_distance, int64_t(1) << 20}});
  if (buckets < 2 || max_distance < 2) fail("relative_attention_num_buckets and _max_distance must be at least 2");
  for (int64_t id : {pad_token_id, eos_token_id, decoder_start_token_id})
    if (id < 0 || id >= vocab_size) fail("token id " + std::to_string(id) + " is outside the vocabulary");
  if (!(layer_norm_eps > 0)) fail("layer_norm_epsilon must be positive");
  if (!(dropout >= 0 && dropout < 1)) fail("dropout_rate must be in [0, 1)");
  if (!(initializer_factor > 0)) fail("initializer_factor must be positive");
}

bool is_t5_config(const std::filesystem::path& config_json) {
  const auto type = ConfigJsonReader(config_json).string("model_type");
  return type == "t5" || type == "mt5";
}

T5Config read_t5_config(const std::filesystem::path& config_json) {
  const ConfigJsonReader json(config_json);
  T5Config c;
  const auto type = json.string("model_type");
  if (type != "t5" && type != "mt5") json.fail("model_type must be \"t5\" or \"mt5\"");
  c.model_type = *type;
  if (c.model_type == "mt5") {
    c.feed_forward = FeedForward::GatedGelu;
    c.tie_embeddings = false;
  }
  json.integer("vocab_size", c.vocab_size, true);
  json.integer("d_model", c.d_model, true);
  json.integer("d_kv", c.d_kv, true);
  json.integer("d_ff", c.d_ff, true);
  json.integer("num_layers", c.layers, true);
  c.decoder_layers = json.nullable_integer("num_decoder_layers").value_or(c.layers);
  json.integer("num_heads", c.heads, true);
  json.integer("relative_attention_num_buckets", c.buckets);
  json.integer("relative_attention_max_distance", c.max_distance);
  json.real("dropout_rate", c.dropout);
  json.real("layer_norm_epsilon", c.layer_norm_eps);
  json.real("initializer_factor", c.initializer_factor);
  if (const auto ff = json.string("feed_forward_proj")) {
    if (*ff == "relu") {
      c.feed_forward = FeedForward::Relu;
    } else if (*ff == "gated-gelu") {
      c.feed_forward = FeedForward::GatedGelu;
    } else {
      json.fail("feed_forward_proj \"" + *ff + "\" is not supported (relu, gated-gelu)");
    }
  }
  json.boolean("tie_word_embeddings", c.tie_embeddings);
  json.integer("pad_token_id", c.pad_token_id);
  json.integer("eos_token_id", c.eos_token_id);
  json.integer("decoder_start_token_id", c.decoder_start_token_id);
  try {
    c.validate();
  } catch (const Error& e) {
    json.fail(e.what());
  }
  return c;
}

void write_t5_config(const std::filesystem::path& config_json, const T5Config& c) {
  ConfigJsonWriter out;
  // mT5's own class, so transformers loads an mt5 model without a type-mismatch warning.
  out.field("architectures",
            c.model_type == "mt5" ? "[\"MT5ForConditionalGeneration\"]" : "[\"T5ForConditionalGeneration\"]");
  out.text("model_type", c.model_type);
  out.field("vocab_size", c.vocab_size);
  out.field("d_model", c.d_model);
  out.field("d_kv", c.d_kv);
  out.field("d_ff", c.d_ff);
  out.field("num_layers", c.layers);
  out.field("num_decoder_layers", c.decoder_layers);
  out.field("num_heads", c.heads);
  out.field("relative_attention_num_buckets", c.buckets);
  out.field("relative_attention_max_distance", c.max_distance);
  out.number("dropout_rate", c.dropout);
  out.number("layer_norm_epsilon", c.layer_norm_eps);
  out.number("initializer_factor", c.initializer_factor);
  out.text("feed_forward_proj", c.feed_forward == FeedForward::Relu ? "relu" : "gated-gelu");
  out.boolean("tie_word_embeddings", c.tie_embeddings);
  out.boolean("is_encoder_decoder", true);
  out.field("pad_token_id", c.pad_token_id);
  out.field("eos_token_id", c.eos_token_id);
  out.field("decoder_start_token_id", c.decoder_start_token_id);
  out.text("torch_dtype", "float32");
  out.write(config_json);
}

}  // namespace kglm::nn
