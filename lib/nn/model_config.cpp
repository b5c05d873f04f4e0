#include "nn/model_config.hpp"

#include <simdjson.h>

#include <fstream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_writer.hpp"

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

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot open model config");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

ModelConfig read_model_config(const std::filesystem::path& config_json) {
  std::string where = config_json.string() + ": ";
  std::string text = slurp(config_json);
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (parser.parse(simdjson::padded_string(text)).get(obj) != simdjson::SUCCESS)
    throw Error(where + "not a JSON object");

  std::string_view type;
  if (obj["model_type"].get(type) != simdjson::SUCCESS) throw Error(where + "no \"model_type\"");
  ModelConfig c;
  if (type == "xlm-roberta" || type == "roberta") {
    c = default_config(Architecture::XlmRoberta, 0);
  } else if (type == "bert") {
    c = default_config(Architecture::Bert, 0);
  } else {
    throw Error(where + "model_type \"" + std::string(type) + "\" is not supported (xlm-roberta, roberta, bert)");
  }
  auto integer = [&](const char* key, int64_t& field, bool required) {
    int64_t v;
    auto e = obj[key].get(v);
    if (e == simdjson::SUCCESS) {
      field = v;
    } else if (e != simdjson::NO_SUCH_FIELD || required) {
      throw Error(where + "\"" + key + "\" must be an integer");
    }
  };
  auto real = [&](const char* key, auto& field) {
    double v;
    auto e = obj[key].get(v);
    if (e == simdjson::SUCCESS) {
      field = static_cast<std::remove_reference_t<decltype(field)>>(v);
    } else if (e != simdjson::NO_SUCH_FIELD) {
      throw Error(where + "\"" + key + "\" must be a number");
    }
  };
  integer("vocab_size", c.vocab_size, true);
  integer("hidden_size", c.hidden, true);
  integer("num_hidden_layers", c.layers, true);
  integer("num_attention_heads", c.heads, true);
  integer("intermediate_size", c.intermediate, true);
  integer("max_position_embeddings", c.max_positions, false);
  integer("type_vocab_size", c.type_vocab, false);
  integer("pad_token_id", c.pad_token_id, false);
  integer("bos_token_id", c.bos_token_id, false);
  integer("eos_token_id", c.eos_token_id, false);
  real("layer_norm_eps", c.layer_norm_eps);
  real("hidden_dropout_prob", c.hidden_dropout);
  real("attention_probs_dropout_prob", c.attention_dropout);
  real("initializer_range", c.initializer_range);
  std::string_view act;
  if (obj["hidden_act"].get(act) == simdjson::SUCCESS && act != "gelu")
    throw Error(where + "hidden_act \"" + std::string(act) + "\" is not supported (gelu)");
  std::string_view pe;
  if (obj["position_embedding_type"].get(pe) == simdjson::SUCCESS && pe != "absolute")
    throw Error(where + "position_embedding_type \"" + std::string(pe) + "\" is not supported (absolute)");
  try {
    c.validate();
  } catch (const Error& e) {
    throw Error(where + e.what());
  }
  return c;
}

void write_model_config(const std::filesystem::path& config_json, const ModelConfig& c,
                        const std::string& architectures_name,
                        const std::vector<std::pair<std::string, std::string>>& extra) {
  std::string out = "{\n";
  auto field = [&](const char* key, const std::string& value, bool last = false) {
    out += "  ";
    append_json_string(out, key);
    out += ": " + value + (last ? "\n" : ",\n");
  };
  auto str = [](std::string_view s) {
    std::string q;
    append_json_string(q, s);
    return q;
  };
  auto num = [](double v) {
    std::ostringstream s;
    s.precision(17);
    s << v;
    return s.str();
  };
  field("architectures", "[" + str(architectures_name) + "]");
  field("model_type", str(c.model_type()));
  field("vocab_size", std::to_string(c.vocab_size));
  field("hidden_size", std::to_string(c.hidden));
  field("num_hidden_layers", std::to_string(c.layers));
  field("num_attention_heads", std::to_string(c.heads));
  field("intermediate_size", std::to_string(c.intermediate));
  field("hidden_act", str("gelu"));
  field("hidden_dropout_prob", num(c.hidden_dropout));
  field("attention_probs_dropout_prob", num(c.attention_dropout));
  field("max_position_embeddings", std::to_string(c.max_positions));
  field("type_vocab_size", std::to_string(c.type_vocab));
  field("layer_norm_eps", num(c.layer_norm_eps));
  field("initializer_range", num(c.initializer_range));
  field("position_embedding_type", str("absolute"));
  field("pad_token_id", std::to_string(c.pad_token_id));
  field("bos_token_id", std::to_string(c.bos_token_id));
  field("eos_token_id", std::to_string(c.eos_token_id));
  for (const auto& [key, json] : extra) field(key.c_str(), json);
  field("torch_dtype", str("float32"), true);
  out += "}\n";

  AtomicPath atomic(config_json.string());
  {
    std::ofstream f(atomic.temp(), std::ios::binary);
    f << out;
    if (!f.flush()) throw Error(config_json.string() + ": cannot write");
  }
  atomic.commit();
}

}  // namespace kglm::nn
