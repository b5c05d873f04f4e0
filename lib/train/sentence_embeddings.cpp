#include "train/sentence_embeddings.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"
#include "core/progress.hpp"
#include "core/provenance.hpp"
#include "h5/h5.hpp"
#include "nn/checkpoint.hpp"
#include "nn/config_json.hpp"
#include "nn/cpu_precision.hpp"
#include "nn/encoder.hpp"
#include "nn/model_config.hpp"
#include "nn/ops/elementwise.hpp"
#include "nn/threads.hpp"
#include "nn/torch_checkpoint.hpp"
#include "tok/tokenizer.hpp"
#include "train/elmo_embeddings.hpp"

namespace kglm::train {

namespace fs = std::filesystem;

SentencePooling parse_sentence_pooling(const std::string& name) {
  if (name == "mean") return SentencePooling::mean;
  if (name == "cls") return SentencePooling::cls;
  if (name == "max") return SentencePooling::max;
  throw UsageError("--pool must be mean, cls or max, not '" + name + "'");
}

namespace {

const char* pooling_name(SentencePooling p) {
  return p == SentencePooling::mean ? "mean" : p == SentencePooling::cls ? "cls" : "max";
}

// Tokens per sequence: --max-len, else sentence-transformers' max_seq_length, else the positions'.
int64_t sequence_limit(const EmbedOptions& o, const nn::ModelConfig& config) {
  const int64_t offset = config.architecture == nn::Architecture::XlmRoberta ? config.pad_token_id + 1 : 0;
  const int64_t positions = config.max_positions - offset;
  int64_t limit = positions;
  if (o.max_len > 0) {
    limit = o.max_len;
  } else if (const fs::path st = fs::path(o.model) / "sentence_bert_config.json"; fs::exists(st)) {
    nn::ConfigJsonReader(st).integer("max_seq_length", limit);
  }
  if (limit < 2) throw UsageError("--max-len must leave room for the two special tokens");
  if (limit > positions)
    throw UsageError(o.model + ": --max-len " + std::to_string(limit) + " is longer than the model's " +
                     std::to_string(positions) + " positions");
  return limit;
}

// Each line as token ids between the special tokens, truncated to the limit.
std::vector<std::vector<int32_t>> tokenize_lines(const std::vector<std::string>& lines, const tok::Tokenizer& tokenizer,
                                                 int64_t limit, Stats& stats) {
  std::vector<std::vector<int32_t>> sentences;
  tok::Encoding encoding;
  const tok::SpecialTokens& special = tokenizer.special();
  for (const std::string& line : lines) {
    tokenizer.encode(line, encoding);
    std::vector<int32_t> ids;
    ids.push_back(special.bos);
    const size_t room = static_cast<size_t>(limit - 2);
    if (encoding.ids.size() > room) stats.add("truncated_sentences");
    ids.insert(ids.end(), encoding.ids.begin(), encoding.ids.begin() + std::min(room, encoding.ids.size()));
    ids.push_back(special.eos);
    sentences.push_back(std::move(ids));
  }
  return sentences;
}

}  // namespace

static std::vector<std::string> read_lines(const std::vector<std::string>& paths) {
  std::vector<std::string> lines;
  for (const std::string& path : paths) {
    InputStream in(path);
    require_text_input(in, "sentences, one a line");
    for_each_line(in, [&](uint64_t, std::string_view line) { lines.emplace_back(line); });
  }
  return lines;
}

SentenceEmbeddings embed_lines(const EmbedOptions& o, const std::vector<std::string>& lines, Stats& stats) {
  if (o.batch < 1) throw UsageError("--batch must be at least 1");
  const fs::path dir(o.model);
  const nn::ModelConfig config = nn::read_model_config(dir / "config.json");
  const std::unique_ptr<tok::Tokenizer> tokenizer = tok::load_tokenizer(dir);
  if (tokenizer->special().bos < 0 || tokenizer->special().eos < 0)
    throw Error(o.model + ": the tokenizer has no [CLS]/<s> and [SEP]/</s> tokens");
  SentenceEmbeddings result;
  result.layer = o.layer < 0 ? config.layers : o.layer;
  if (result.layer > config.layers)
    throw UsageError("--layer " + std::to_string(o.layer) + ": the model has layers 0 (embeddings) to " +
                     std::to_string(config.layers));
  result.max_len = sequence_limit(o, config);
  const std::vector<std::vector<int32_t>> sentences = tokenize_lines(lines, *tokenizer, result.max_len, stats);

  // The encoder alone: an MLM or task head in the file is left unread, a missing encoder weight is an error.
  nn::ParameterStore params(o.device);
  nn::Encoder encoder(config, params);
  params.allocate(1, false);
  nn::load_parameters(nn::open_model_weights(dir), params, false);
  params.refresh_compute();

  const auto hidden = static_cast<size_t>(config.hidden);
  result.hidden = config.hidden;
  std::vector<float>& embeddings = result.vectors;
  embeddings.assign(sentences.size() * hidden, 0.0f);
  const int64_t layer = result.layer;
  // Longest first: batches of similar lengths.
  std::vector<size_t> order(sentences.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sentences[a].size() > sentences[b].size(); });
  Progress progress("embed", sentences.size());
  // The encoder and the pooling alone (no loading, tokenizing or writing): what benchmarks compare.
  const auto start = std::chrono::steady_clock::now();
  int64_t tokens = 0;
  const auto step = static_cast<size_t>(o.batch);
  for (size_t first = 0; first < order.size(); first += step) {
    const size_t count = std::min(step, order.size() - first);
    std::vector<std::vector<int32_t>> ids;
    for (size_t r = 0; r < count; ++r) ids.push_back(sentences[order[first + r]]);
    for (const auto& sentence : ids) tokens += static_cast<int64_t>(sentence.size());
    const nn::EncoderBatch batch = nn::pack_sequences(ids, {}, config);
    encoder.forward(batch, nn::DropoutContext{});
    nn::Tensor states = encoder.hidden_state(static_cast<size_t>(layer)).to(nn::Device::Cpu);
    if (states.dtype() != nn::DType::F32) {
      nn::Tensor f32 = nn::Tensor::empty(states.shape(), nn::DType::F32);
      nn::convert(states, f32);
      states = f32;
    }
    const float* h = states.data<float>();
    for (size_t r = 0; r < count; ++r) {
      const size_t n = sentences[order[first + r]].size();
      const float* rows = h + static_cast<size_t>(batch.sequences.offsets[r]) * hidden;
      float* out = embeddings.data() + order[first + r] * hidden;
      // Row by row, so each token's states are read once, in order.
      std::vector<double> pooled(rows, rows + hidden);
      for (size_t i = 1; i < (o.pooling == SentencePooling::cls ? 1 : n); ++i)
        for (size_t k = 0; k < hidden; ++k)
          pooled[k] = o.pooling == SentencePooling::max ? std::max(pooled[k], double{rows[i * hidden + k]})
                                                        : pooled[k] + rows[i * hidden + k];
      for (size_t k = 0; k < hidden; ++k)
        out[k] =
            static_cast<float>(o.pooling == SentencePooling::mean ? pooled[k] / static_cast<double>(n) : pooled[k]);
      if (o.normalize) {  // as torch.nn.functional.normalize: x / max(‖x‖, 1e-12)
        double norm = 0;
        for (size_t k = 0; k < hidden; ++k) norm += double{out[k]} * out[k];
        norm = std::max(std::sqrt(norm), 1e-12);
        for (size_t k = 0; k < hidden; ++k) out[k] = static_cast<float>(out[k] / norm);
      }
    }
    progress.update(first + count, first + count);
  }
  progress.finish();
  stats.set("tokens", tokens);
  stats.set("embed_milliseconds",
            std::llround(1000 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
  return result;
}

Stats run_embed(const EmbedOptions& o) {
  nn::set_compute_threads(static_cast<int>(o.threads));
  nn::require_device(o.device);
  nn::use_precision(o.precision, o.device);
  if (o.batch < 1) throw UsageError("--batch must be at least 1");
  if (nn::find_elmo_model(o.model)) return run_elmo_embed(o);
  if (o.elmo_layers != "all") throw UsageError("--layers is for ELMo models; " + o.model + " is an encoder");
  Stats stats;
  const std::vector<std::string> lines = read_lines(o.inputs);
  if (lines.empty()) throw Error("no sentences to embed in " + o.inputs.front());
  const SentenceEmbeddings e = embed_lines(o, lines, stats);
  const std::vector<float>& embeddings = e.vectors;
  const auto hidden = static_cast<size_t>(e.hidden);
  const std::vector<std::string>& sentences = lines;
  const int64_t layer = e.layer, limit = e.max_len;
  AtomicPath atomic(o.output);
  h5::File file = h5::File::create(atomic.temp());
  const h5::Group& root = file.root();
  root.set_attribute("format", "kglm-embeddings");
  root.set_attribute("format_version", int64_t{1});
  h5::write_provenance(root, make_provenance("pretrain embed", o.command_line, o.inputs, 0));
  root.set_attribute("model", o.model);
  root.set_attribute("pool", pooling_name(o.pooling));
  root.set_attribute("layer", layer);
  root.set_attribute("normalized", int64_t{o.normalize});
  root.set_attribute("max_len", limit);
  h5::write_matrix(root, "embeddings", embeddings.data(), sentences.size(), hidden);
  file.close();
  atomic.commit();
  stats.set("sentences", static_cast<int64_t>(sentences.size()));
  stats.set("hidden", e.hidden);
  stats.set("layer", layer);
  return stats;
}

}  // namespace kglm::train
