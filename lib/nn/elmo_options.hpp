// The hyper-parameters of an ELMo model, read from and written to bilm-tf/AllenNLP's options.json
// ({"lstm": {...}, "char_cnn": {...}} and the training keys bilm-tf writes beside them). The
// public ELMo models ship this file; kglm's checkpoints carry it unchanged in meaning.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kglm::nn {

struct ElmoFilter {
  int64_t width = 0, count = 0;
};

struct ElmoOptions {
  // lstm
  int64_t cell = 4096;       // "dim": the LSTM cell size (the authors' trainer: 2048)
  int64_t projection = 512;  // "projection_dim": each direction's output; ELMo vectors are 2×
  int64_t layers = 2;        // "n_layers"
  double cell_clip = 3, proj_clip = 3;
  bool skip_connections = true;  // "use_skip_connections": residual into every layer but the first
  // char_cnn
  std::string activation = "relu";  // of the convolutions ("relu" or "tanh"); highways use ReLU
  std::vector<ElmoFilter> filters{{1, 32}, {2, 32}, {3, 64}, {4, 128}, {5, 256}, {6, 512}, {7, 1024}};
  int64_t highways = 2;         // "n_highway"
  int64_t char_embedding = 16;  // "embedding": {"dim"}
  int64_t characters = 262;     // "n_characters": 261 while training, 262 (0 = padding) at inference
  int64_t max_characters = 50;  // "max_characters_per_token"
  // training (bilm-tf's train() writes them; optional when read)
  bool bidirectional = true;
  double dropout = 0.1;
  double clip_norm = 10.0;          // "all_clip_norm_val"
  int64_t epochs = 10;              // "n_epochs"
  int64_t train_tokens = 0;         // "n_train_tokens"
  int64_t batch_size = 128;         // windows per batch
  int64_t vocabulary = 0;           // "n_tokens_vocab"
  int64_t unroll_steps = 20;        // tokens per window
  int64_t negative_samples = 8192;  // "n_negative_samples_batch"

  int64_t filter_total() const;  // the character encoder's width before its projection
  // Throws kglm::Error naming the first inconsistent field.
  void validate() const;
};

ElmoOptions read_elmo_options(const std::filesystem::path& options_json);
// Writes options.json atomically, in bilm-tf's layout (AllenNLP's Elmo and simple_elmo read it).
void write_elmo_options(const std::filesystem::path& options_json, const ElmoOptions& options);

}  // namespace kglm::nn
