#include "nn/elmo_options.hpp"

#include "core/error.hpp"
#include "nn/config_json.hpp"

namespace kglm::nn {

int64_t ElmoOptions::filter_total() const {
  int64_t total = 0;
  for (const ElmoFilter& f : filters) total += f.count;
  return total;
}

void ElmoOptions::validate() const {
  auto fail = [](const std::string& what) { throw Error("ELMo options: " + what); };
  if (cell < 1 || projection < 1 || layers < 1) fail("lstm dim, projection_dim and n_layers must be positive");
  check_size_limits("ELMo options", {{"dim", cell, int64_t(1) << 16},
                                     {"projection_dim", projection, int64_t(1) << 16},
                                     {"n_layers", layers, 64},
                                     {"n_highway", highways, 64},
                                     {"max_characters_per_token", max_characters, 1024},
                                     {"embedding dim", char_embedding, 4096},
                                     {"filters", static_cast<int64_t>(filters.size()), 1024},
                                     {"n_tokens_vocab", vocabulary, int64_t(1) << 24},
                                     {"unroll_steps", unroll_steps, int64_t(1) << 16},
                                     {"batch_size", batch_size, int64_t(1) << 20},
                                     {"n_negative_samples_batch", negative_samples, int64_t(1) << 24}});
  if (cell_clip < 0 || proj_clip < 0) fail("cell_clip and proj_clip must not be negative");
  if (activation != "relu" && activation != "tanh")
    fail("char_cnn activation \"" + activation + "\" is not supported (relu, tanh)");
  if (filters.empty()) fail("char_cnn filters are empty");
  if (max_characters < 3) fail("max_characters_per_token must be at least 3");
  for (const ElmoFilter& f : filters)
    if (f.width < 1 || f.count < 1 || f.width > max_characters || f.count > (int64_t(1) << 16))
      fail("char_cnn filter [" + std::to_string(f.width) + ", " + std::to_string(f.count) + "] for tokens of " +
           std::to_string(max_characters) + " characters");
  if (highways < 0 || char_embedding < 1) fail("n_highway and the character embedding size");
  if (characters != 261 && characters != 262) fail("n_characters must be 261 or 262");
  if (!(dropout >= 0 && dropout < 1)) fail("dropout must be in [0, 1)");
  if (unroll_steps < 1 || batch_size < 1 || negative_samples < 1)
    fail("unroll_steps, batch_size, n_negative_samples_batch");
}

ElmoOptions read_elmo_options(const std::filesystem::path& options_json) {
  const ConfigJsonReader json(options_json);
  ElmoOptions o;
  json.integer("/lstm/dim", o.cell, true);
  json.integer("/lstm/projection_dim", o.projection, true);
  json.integer("/lstm/n_layers", o.layers, true);
  json.real("/lstm/cell_clip", o.cell_clip);
  json.real("/lstm/proj_clip", o.proj_clip);
  json.boolean("/lstm/use_skip_connections", o.skip_connections);
  if (const auto a = json.string("/char_cnn/activation")) o.activation = *a;
  const auto filters = json.integer_arrays("/char_cnn/filters");
  if (!filters) json.fail("\"/char_cnn/filters\" is missing");
  o.filters.clear();
  for (const auto& f : *filters) {
    if (f.size() != 2) json.fail("each of \"/char_cnn/filters\" is [width, count]");
    o.filters.push_back({f[0], f[1]});
  }
  json.integer("/char_cnn/n_highway", o.highways, true);
  json.integer("/char_cnn/embedding/dim", o.char_embedding, true);
  json.integer("/char_cnn/n_characters", o.characters, true);
  json.integer("/char_cnn/max_characters_per_token", o.max_characters, true);
  json.boolean("bidirectional", o.bidirectional);
  json.real("dropout", o.dropout);
  json.real("all_clip_norm_val", o.clip_norm);
  json.integer("n_epochs", o.epochs);
  json.integer("n_train_tokens", o.train_tokens);
  json.integer("batch_size", o.batch_size);
  json.integer("n_tokens_vocab", o.vocabulary);
  json.integer("unroll_steps", o.unroll_steps);
  json.integer("n_negative_samples_batch", o.negative_samples);
  try {
    o.validate();
  } catch (const Error& e) {
    json.fail(e.what());
  }
  return o;
}

void write_elmo_options(const std::filesystem::path& options_json, const ElmoOptions& o) {
  ConfigJsonWriter lstm, char_cnn, embedding, out;
  lstm.field("dim", o.cell);
  lstm.field("projection_dim", o.projection);
  lstm.field("n_layers", o.layers);
  lstm.number("cell_clip", o.cell_clip);
  lstm.number("proj_clip", o.proj_clip);
  lstm.boolean("use_skip_connections", o.skip_connections);
  std::string filters = "[";
  for (size_t i = 0; i < o.filters.size(); ++i)
    filters += (i ? ", [" : "[") + std::to_string(o.filters[i].width) + ", " + std::to_string(o.filters[i].count) + "]";
  embedding.field("dim", o.char_embedding);
  char_cnn.text("activation", o.activation);
  char_cnn.field("filters", filters + "]");
  char_cnn.field("n_highway", o.highways);
  char_cnn.field("embedding", embedding.object(2));
  char_cnn.field("n_characters", o.characters);
  char_cnn.field("max_characters_per_token", o.max_characters);
  out.field("lstm", lstm.object(2));
  out.field("char_cnn", char_cnn.object(2));
  out.boolean("bidirectional", o.bidirectional);
  out.number("dropout", o.dropout);
  out.number("all_clip_norm_val", o.clip_norm);
  out.field("n_epochs", o.epochs);
  out.field("n_train_tokens", o.train_tokens);
  out.field("batch_size", o.batch_size);
  out.field("n_tokens_vocab", o.vocabulary);
  out.field("unroll_steps", o.unroll_steps);
  out.field("n_negative_samples_batch", o.negative_samples);
  out.write(options_json);
}

}  // namespace kglm::nn
