#include "train/frozen/retrieval.hpp"

#include <cmath>
#include <filesystem>

#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"
#include "core/log.hpp"
#include "core/stats.hpp"
#include "nn/elmo_checkpoint.hpp"
#include "nn/model_config.hpp"
#include "nn/ops/linear.hpp"
#include "nn/threads.hpp"
#include "sample/corpus.hpp"
#include "text/word_splitter.hpp"
#include "train/frozen/frozen_encoder.hpp"
#include "train/sentence_embeddings.hpp"
#include "train/tasks/results_table.hpp"

namespace kglm::train::frozen {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> read_lines(const std::string& path) {
  InputStream in(path);
  require_text_input(in, "sentences, one a line");
  std::vector<std::string> lines;
  for_each_line(in, [&](uint64_t, std::string_view line) { lines.emplace_back(line); });
  if (lines.empty()) throw Error(path + ": no sentences");
  return lines;
}

void normalize_rows(std::vector<float>& v, int64_t dim) {
  for (size_t r = 0; r < v.size() / static_cast<size_t>(dim); ++r) {
    float* row = v.data() + r * static_cast<size_t>(dim);
    double norm = 0;
    for (int64_t k = 0; k < dim; ++k) norm += double{row[k]} * row[k];
    norm = std::max(std::sqrt(norm), 1e-12);  // torch.nn.functional.normalize's floor
    for (int64_t k = 0; k < dim; ++k) row[k] = static_cast<float>(row[k] / norm);
  }
}

// Sentence embeddings from an ELMo model: the mean of one layer over the words.
class ElmoSentences {
 public:
  ElmoSentences(const RetrieveOptions& o) : o_(o), encoder_(open_frozen_encoder(o.model, o.device, o.batch)) {
    layer_ = o.layer < 0 ? encoder_->layers() - 1 : o.layer;
    if (layer_ >= encoder_->layers())
      throw UsageError("--layer " + std::to_string(o.layer) + ": the ELMo model has layers 0 to " +
                       std::to_string(encoder_->layers() - 1));
  }
  int64_t layer() const { return layer_; }
  int64_t width() const { return encoder_->width(); }

  std::vector<float> embed(const std::vector<std::string>& lines, const std::string& lang) {
    std::vector<Words> sentences;
    text::WordSplitter splitter(lang);
    std::vector<text::WordSpan> spans;
    for (const std::string& line : lines) {
      Words& w = sentences.emplace_back();
      if (o_.whitespace) {
        sample::for_each_whitespace_token(line, [&](std::string_view t) { w.emplace_back(t); });
      } else {
        splitter.split(line, spans);
        for (const text::WordSpan& s : spans) w.push_back(line.substr(s.begin, s.end - s.begin));
      }
    }
    const int64_t width = encoder_->width();
    std::vector<float> out(lines.size() * static_cast<size_t>(width), 0.0f);
    encoder_->encode(sentences, [&](size_t i, const float* vectors) {
      const auto n = static_cast<int64_t>(sentences[i].size());
      float* row = out.data() + i * static_cast<size_t>(width);
      for (int64_t k = 0; k < width; ++k) {
        double sum = 0;
        for (int64_t t = 0; t < n; ++t) sum += vectors[(layer_ * n + t) * width + k];
        row[k] = n > 0 ? static_cast<float>(sum / static_cast<double>(n)) : 0.0f;
      }
    });
    normalize_rows(out, width);
    return out;
  }

 private:
  const RetrieveOptions& o_;
  std::unique_ptr<FrozenEncoder> encoder_;
  int64_t layer_ = 0;
};

}  // namespace

double retrieval_accuracy(const std::vector<float>& queries, const std::vector<float>& index, int64_t n, int64_t dim) {
  if (n == 0) return 0;
  const nn::Tensor q = nn::Tensor::from({n, dim}, queries), x = nn::Tensor::from({n, dim}, index);
  nn::Tensor similarity = nn::Tensor::empty({n, n}, nn::DType::F32);
  nn::linear_forward(q, x, nn::Tensor(), similarity);
  const float* s = similarity.data<float>();
  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    for (int64_t j = 1; j < n; ++j)
      if (s[i * n + j] > s[i * n + best]) best = j;
    correct += best == i;
  }
  return static_cast<double>(correct) / static_cast<double>(n);
}

int run_retrieve(const RetrieveOptions& o) {
  nn::set_compute_threads(static_cast<int>(o.threads));
  nn::require_device(o.device);
  if (o.model.empty()) throw UsageError("--model is required");
  if (o.pairs.empty()) throw UsageError("--pairs LANG=XX_FILE,EN_FILE is required");
  if (o.output.empty()) throw UsageError("-o PREFIX is required (PREFIX.tsv, PREFIX.json)");
  const bool elmo = nn::find_elmo_model(o.model).has_value();
  std::optional<ElmoSentences> elmo_sentences;
  EmbedOptions embed;
  int64_t layer = o.layer;
  if (elmo) {
    elmo_sentences.emplace(o);
    layer = elmo_sentences->layer();
  } else {
    if (o.whitespace) throw UsageError("--whitespace is for ELMo models (an encoder has its own tokenizer)");
    const int64_t layers = nn::read_model_config(fs::path(o.model) / "config.json").layers;
    embed.model = o.model;
    embed.layer = layer = o.layer < 0 ? std::min(layers, layers / 2 + 1) : o.layer;
    embed.pooling = SentencePooling::mean;
    embed.normalize = true;
    embed.batch = o.batch;
    embed.device = o.device;
  }
  Stats stats;
  tasks::SeedResult result;
  for (const std::string& pair : o.pairs) {
    const size_t eq = pair.find('='), comma = pair.find(',', eq == std::string::npos ? 0 : eq);
    if (eq == std::string::npos || comma == std::string::npos || !sample::valid_language(pair.substr(0, eq)))
      throw UsageError("--pairs takes LANG=XX_FILE,EN_FILE, not '" + pair + "'");
    const std::string lang = pair.substr(0, eq);
    const std::vector<std::string> other = read_lines(pair.substr(eq + 1, comma - eq - 1));
    const std::vector<std::string> english = read_lines(pair.substr(comma + 1));
    if (other.size() != english.size())
      throw Error(pair + ": " + std::to_string(other.size()) + " and " + std::to_string(english.size()) +
                  " lines; line i of one must translate line i of the other");
    std::vector<float> xx, en;
    int64_t dim = 0;
    if (elmo) {
      xx = elmo_sentences->embed(other, lang);
      en = elmo_sentences->embed(english, "en");
      dim = elmo_sentences->width();
    } else {
      SentenceEmbeddings a = embed_lines(embed, other, stats), b = embed_lines(embed, english, stats);
      xx = std::move(a.vectors), en = std::move(b.vectors);
      dim = a.hidden;
    }
    const auto n = static_cast<int64_t>(english.size());
    tasks::TaskScore s;
    s.metric = "accuracy";
    s.value = retrieval_accuracy(en, xx, n, dim);  // English queries, the other language's index
    s.details = {{"accuracy", s.value}, {"accuracy_to_english", retrieval_accuracy(xx, en, n, dim)}};
    s.examples = n;
    result.tests.emplace_back(lang, s);
    stats.add("pairs", n);
  }
  const std::string table = tasks::write_results(o.output, "tatoeba", "accuracy", {result});
  if (!o.quiet) std::fputs(table.c_str(), stderr);
  stats.set("layer", layer);
  if (!o.stats_file.empty()) stats.write_json(o.stats_file);
  if (!o.quiet) stats.print();
  return 0;
}

}  // namespace kglm::train::frozen
