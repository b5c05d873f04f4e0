#include "train/elmo_embeddings.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/json_writer.hpp"
#include "core/line_batcher.hpp"
#include "core/progress.hpp"
#include "h5/h5.hpp"
#include "nn/convert.hpp"
#include "nn/elmo.hpp"
#include "nn/elmo_characters.hpp"
#include "nn/elmo_options.hpp"
#include "nn/threads.hpp"
#include "sample/corpus.hpp"

namespace kglm::train {

ElmoLayers parse_elmo_layers(const std::string& name) {
  if (name == "all") return ElmoLayers::all;
  if (name == "average") return ElmoLayers::average;
  if (name == "top") return ElmoLayers::top;
  throw UsageError("--layers must be all, average or top, not '" + name + "'");
}

namespace {

struct Sentence {
  std::string text;  // the line, as sentence_to_index keys it
  std::vector<std::string> words;
};

std::vector<Sentence> read_sentences(const EmbedOptions& o) {
  std::vector<Sentence> sentences;
  for (const std::string& path : o.inputs) {
    InputStream in(path);
    require_text_input(in, "sentences, one a line");
    for_each_line(in, [&](uint64_t, std::string_view line) {
      Sentence s;
      sample::for_each_whitespace_token(line, [&](std::string_view w) { s.words.emplace_back(w); });
      s.text = line;
      sentences.push_back(std::move(s));
    });
  }
  return sentences;
}

// Host F32 copy of a layer output.
nn::Tensor host_f32(const nn::Tensor& t) {
  nn::Tensor host = t.to(nn::Device::Cpu);
  return host.dtype() == nn::DType::F32 ? host : nn::to_f32(host);
}

}  // namespace

Stats run_elmo_embed(const EmbedOptions& o, const nn::ElmoModelFiles& files) {
  const ElmoLayers mode = parse_elmo_layers(o.elmo_layers);
  if (o.pooling != SentencePooling::mean || o.layer >= 0 || o.normalize || o.max_len > 0)
    throw UsageError(o.model +
                     " is an ELMo model: its vectors are per word (--layers all|average|top); --pool, "
                     "--layer, --normalize and --max-len are for sentence embeddings of encoders");
  nn::ElmoOptions options = nn::read_elmo_options(files.options);
  if (!options.bidirectional) throw Error(files.options.string() + ": ELMo vectors need a bidirectional model");
  options.dropout = 0;
  // The softmax is not used (nor in bilm-tf's weights.hdf5): one word keeps it small.
  nn::ParameterStore params(o.device);
  nn::ElmoModel model(options, 1, params);
  params.allocate(1, false);
  model.initialize(0);
  nn::read_bilm_weights(files.weights, options, false, params);
  params.refresh_compute();

  Stats stats;
  const std::vector<Sentence> sentences = read_sentences(o);
  if (sentences.empty()) throw Error("no sentences to embed in " + o.inputs.front());
  const int64_t layers = options.layers + 1, p = options.projection, width = 2 * p, chars = options.max_characters;

  AtomicPath atomic(o.output);
  h5::File file = h5::File::create(atomic.temp());
  const h5::Group& root = file.root();
  // Sentences of one length go through together, each its own window from a zero state.
  std::vector<size_t> order(sentences.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sentences[a].words.size() > sentences[b].words.size(); });
  Progress progress("embed", sentences.size());
  std::vector<float> out;
  uint64_t words_done = 0;
  for (size_t first = 0; first < order.size();) {
    const size_t n = sentences[order[first]].words.size();
    size_t count = 0;
    while (first + count < order.size() && count < static_cast<size_t>(o.batch) &&
           sentences[order[first + count]].words.size() == n)
      ++count;
    const auto windows = static_cast<int64_t>(count), steps = static_cast<int64_t>(n + 2);
    if (n > 0) {
      nn::ElmoBatch batch;
      batch.windows = windows, batch.steps = steps;
      for (int d = 0; d < 2; ++d) {
        nn::Tensor characters = nn::Tensor::empty({steps * windows, chars}, nn::DType::I32);
        for (int64_t t = 0; t < steps; ++t)
          for (int64_t b = 0; b < windows; ++b) {
            const int64_t at = d == 0 ? t : steps - 1 - t;  // the backward model reads the sentence reversed
            const std::string_view word = at == 0           ? nn::kBeginSentence
                                          : at == steps - 1 ? nn::kEndSentence
                                                            : sentences[order[first + b]].words[at - 1];
            nn::elmo_character_ids(word, chars, 261, characters.data<int32_t>() + (t * windows + b) * chars);
          }
        batch.streams[d].characters = characters.to(o.device);
        batch.streams[d].targets = nn::Tensor::zeros({steps * windows}, nn::DType::I32, o.device);
      }
      model.reset_state(windows);
      model.forward(batch, nn::DropoutContext{}, {nullptr, nullptr}, 0);
      std::vector<nn::Tensor> forward, backward;
      for (int64_t l = 0; l < layers; ++l) {
        forward.push_back(host_f32(model.layer_output(0, l)));
        backward.push_back(host_f32(model.layer_output(l == 0 ? 0 : 1, l)));  // layer 0: the token vector twice
      }
      for (size_t b = 0; b < count; ++b) {
        // [layers, words, 2p]: word i is step i + 1 forward, step n − i backward.
        std::vector<float> all(static_cast<size_t>(layers) * n * static_cast<size_t>(width));
        for (int64_t l = 0; l < layers; ++l)
          for (size_t i = 0; i < n; ++i) {
            const int64_t forward_row = static_cast<int64_t>(i + 1) * windows + static_cast<int64_t>(b);
            const int64_t backward_row =
                l == 0 ? forward_row : static_cast<int64_t>(n - i) * windows + static_cast<int64_t>(b);
            float* dst = all.data() + (static_cast<size_t>(l) * n + i) * static_cast<size_t>(width);
            std::copy_n(forward[l].data<float>() + forward_row * p, p, dst);
            std::copy_n(backward[l].data<float>() + backward_row * p, p, dst + p);
          }
        std::vector<uint64_t> dims{static_cast<uint64_t>(layers), n, static_cast<uint64_t>(width)};
        const float* data = all.data();
        if (mode != ElmoLayers::all) {
          dims.erase(dims.begin());
          out.assign(n * static_cast<size_t>(width), 0.0f);
          const int64_t from = mode == ElmoLayers::top ? layers - 1 : 0;
          for (int64_t l = from; l < layers; ++l)
            for (size_t k = 0; k < out.size(); ++k)
              out[k] += all[static_cast<size_t>(l) * out.size() + k] / static_cast<float>(layers - from);
          data = out.data();
        }
        h5::write_float_array(root, std::to_string(order[first + b]), data, dims);
      }
    } else {  // an empty line: no words (AllenNLP's shape with 0 words)
      for (size_t b = 0; b < count; ++b) {
        std::vector<uint64_t> dims{static_cast<uint64_t>(layers), 0, static_cast<uint64_t>(width)};
        if (mode != ElmoLayers::all) dims.erase(dims.begin());
        h5::write_float_array(root, std::to_string(order[first + b]), nullptr, dims);
      }
      stats.add("empty_sentences", static_cast<int64_t>(count));
    }
    words_done += n * count;
    first += count;
    progress.update(first, first);
  }
  progress.finish();
  std::string index = "{";
  for (size_t i = 0; i < sentences.size(); ++i) {
    if (i > 0) index += ", ";
    append_json_string(index, sentences[i].text);
    index += ": " + json_string(std::to_string(i));
  }
  h5::write_string_array(root, "sentence_to_index", {index + "}"});
  file.close();
  atomic.commit();
  stats.set("sentences", static_cast<int64_t>(sentences.size()));
  stats.set("words", static_cast<int64_t>(words_done));
  stats.set("layers", mode == ElmoLayers::all ? layers : 1);
  stats.set("dim", width);
  return stats;
}

}  // namespace kglm::train
