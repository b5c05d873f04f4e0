#include "train/elmo_embeddings.hpp"

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
#include "sample/corpus.hpp"
#include "train/frozen/frozen_encoder.hpp"

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

}  // namespace

Stats run_elmo_embed(const EmbedOptions& o) {
  const ElmoLayers mode = parse_elmo_layers(o.elmo_layers);
  if (o.pooling != SentencePooling::mean || o.layer >= 0 || o.normalize || o.max_len > 0)
    throw UsageError(o.model +
                     " is an ELMo model: its vectors are per word (--layers all|average|top); --pool, "
                     "--layer, --normalize and --max-len are for sentence embeddings of encoders");
  const std::unique_ptr<frozen::FrozenEncoder> encoder = frozen::open_frozen_encoder(o.model, o.device, o.batch);
  Stats stats;
  const std::vector<Sentence> sentences = read_sentences(o);
  if (sentences.empty()) throw Error("no sentences to embed in " + o.inputs.front());
  std::vector<frozen::Words> words;
  words.reserve(sentences.size());
  for (const Sentence& s : sentences) words.push_back(s.words);
  const int64_t layers = encoder->layers(), width = encoder->width();

  AtomicPath atomic(o.output);
  h5::File file = h5::File::create(atomic.temp());
  const h5::Group& root = file.root();
  std::vector<float> out;
  uint64_t words_done = 0;
  encoder->encode(words, [&](size_t i, const float* all) {
    const size_t n = words[i].size();
    std::vector<uint64_t> dims{static_cast<uint64_t>(layers), n, static_cast<uint64_t>(width)};
    if (mode != ElmoLayers::all) dims.erase(dims.begin());
    const float* data = all;
    if (n == 0) {
      stats.add("empty_sentences");  // AllenNLP's shape with 0 words
    } else if (mode != ElmoLayers::all) {
      out.assign(n * static_cast<size_t>(width), 0.0f);
      const int64_t from = mode == ElmoLayers::top ? layers - 1 : 0;
      for (int64_t l = from; l < layers; ++l)
        for (size_t k = 0; k < out.size(); ++k)
          out[k] += all[static_cast<size_t>(l) * out.size() + k] / static_cast<float>(layers - from);
      data = out.data();
    }
    h5::write_float_array(root, std::to_string(i), data, dims);
    words_done += n;
  });
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
