#include "verbalize/quality_filter.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>

#include "core/json_writer.hpp"
#include "core/jsonl_records.hpp"
#include "core/log.hpp"
#include "core/output_stream.hpp"
#include "core/rng.hpp"
#include "nn/checkpoint.hpp"
#include "nn/threads.hpp"
#include "nn/torch_checkpoint.hpp"
#include "train/finetune.hpp"
#include "train/tasks/task_config.hpp"
#include "train/tasks/task_eval.hpp"
#include "train/tasks/task_model.hpp"
#include "verbalize/verbalizer_records.hpp"

namespace kglm::verbalize {

namespace fs = std::filesystem;

namespace {

constexpr uint32_t kNegativeStream = 0x6e656761;  // "nega"
constexpr uint64_t kHeldOutSeed = 0x66696c74;     // "filt": the held-out pairs, whatever the --seed

struct PairExample {
  std::string triples, sentence;
  bool good = false;
};

// One field of a TSV line: tabs and line breaks would cut it, so they become spaces.
std::string tsv_field(std::string s) {
  std::replace_if(
      s.begin(), s.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
  return s;
}

void write_tsv(const fs::path& path, const std::vector<PairExample>& examples) {
  OutputStream out(path.string());
  out.write("sentence1\tsentence2\tlabel\n");
  for (const PairExample& e : examples)
    out.write(tsv_field(e.triples) + "\t" + tsv_field(e.sentence) + "\t" + (e.good ? "good\n" : "bad\n"));
  out.close();
}

// The pair's triples with one object replaced by an object of another pair's triple (not the same
// string); nullopt when the draws find none.
std::optional<std::string> corrupt_triples(const std::vector<GenerationInput>& pairs, size_t i, Rng& rng) {
  const std::vector<std::vector<std::string>>& triples = pairs[i].triples;
  for (int attempt = 0; attempt < 10; ++attempt) {
    const size_t t = rng.below(triples.size());
    const size_t j = rng.below(pairs.size());
    if (j == i || triples[t].size() != 3) continue;
    const std::vector<std::string>& donor = pairs[j].triples[rng.below(pairs[j].triples.size())];
    const std::string& object = donor.back();
    if (object == triples[t][2]) continue;
    std::vector<std::vector<std::string>> corrupted = triples;
    corrupted[t][2] = object;
    return serialize_triples(corrupted);
  }
  return std::nullopt;
}

// The filter model of a path: a model directory, or a run's seed-*/best of the lowest seed.
fs::path filter_model_dir(const fs::path& path) { return train::finetuned_model_dirs(path.string()).front().second; }

// P(good) of each (triples, sentence) pair under the filter in `dir`.
std::vector<double> score_pairs(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& pairs,
                                int64_t batch, nn::Device device) {
  namespace t = train::tasks;
  const t::TaskConfig task = t::read_task_config(dir / "finetune.json");
  const t::LabelSet labels(task.labels);
  const int32_t good = labels.id("good");
  if (task.kind != t::TaskKind::sequence || good < 0 || labels.id("bad") < 0)
    throw Error(dir.string() + ": not a quality filter (a sequence task with labels bad and good)");
  const nn::ModelConfig config = nn::read_model_config(dir / "config.json");
  const std::unique_ptr<tok::Tokenizer> tokenizer = tok::load_tokenizer(dir);
  t::TaskModel model(config, task.kind, task.pooling, static_cast<int64_t>(labels.size()), device);
  nn::load_parameters(nn::open_model_weights(dir), model.params(), false);
  t::TaskData data;
  data.kind = t::TaskKind::sequence;
  for (const auto& [triples, sentence] : pairs) data.sentences.push_back({triples, sentence, "", 0});
  data.langs.assign(pairs.size(), "");
  t::EncodeReport report;
  const std::vector<t::EncodedExample> encoded =
      t::encode_task_data(data, labels, *tokenizer, config, task.max_len, report);
  const t::TaskPredictions p = t::predict(model, data, encoded, labels, batch);
  std::vector<double> scores;
  for (const std::vector<float>& probabilities : p.probabilities)
    scores.push_back(probabilities[static_cast<size_t>(good)]);
  return scores;
}

}  // namespace

double roc_auc(const std::vector<double>& scores, const std::vector<uint8_t>& positive) {
  // Mann–Whitney: the positives' mean rank among all scores, ties sharing their mean rank.
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  double rank_sum = 0;
  int64_t positives = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) ++j;
    const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k)
      if (positive[order[k]]) rank_sum += mean_rank;
    i = j;
  }
  for (uint8_t p : positive) positives += p ? 1 : 0;
  const int64_t negatives = static_cast<int64_t>(scores.size()) - positives;
  if (positives == 0 || negatives == 0) throw Error("AUC: positives and negatives are both needed");
  const double p = static_cast<double>(positives), n = static_cast<double>(negatives);
  return (rank_sum - p * (p + 1) / 2) / (p * n);
}

int run_filter_train(const FilterTrainOptions& o) {
  if (o.init.empty()) throw UsageError("--init ENCODER_DIR is required (an XLM-R or BERT model directory)");
  if (o.out.empty()) throw UsageError("--out RUN_DIR is required");
  if (o.data.empty()) throw UsageError("aligned pairs are required (FILE...)");
  ErrorCounter errors(o.max_errors);
  Stats stats;
  std::vector<GenerationInput> pairs;
  for (const std::string& path : o.data) {
    for (GenerationInput& in : read_generation_inputs(path, errors, stats))
      if (!in.reference.empty() && !in.triples.empty()) pairs.push_back(std::move(in));
  }
  errors.finish(o.data);
  if (pairs.size() < 10) throw Error("the filter needs at least 10 pairs with triples and a sentence");
  std::vector<PairExample> train, held;
  Rng rng(o.seed, 0, kNegativeStream);
  int64_t corrupted = 0, swapped = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    std::vector<PairExample>& to = Rng(kHeldOutSeed, i).uniform() < o.held_out ? held : train;
    to.push_back({pairs[i].serialized, pairs[i].reference, true});
    if (std::optional<std::string> c = corrupt_triples(pairs, i, rng)) {
      to.push_back({*c, pairs[i].reference, false});
      ++corrupted;
    }
    for (int attempt = 0; attempt < 10; ++attempt) {
      const size_t j = rng.below(pairs.size());
      if (pairs[j].reference == pairs[i].reference) continue;
      to.push_back({pairs[i].serialized, pairs[j].reference, false});
      ++swapped;
      break;
    }
  }
  if (held.empty()) throw Error("no pair was held out: raise --held-out or give more pairs");
  train::check_run_directory(o.out);  // before the split files are put in it
  fs::create_directories(o.out);
  const fs::path train_tsv = fs::path(o.out) / "filter-train.tsv", held_tsv = fs::path(o.out) / "filter-dev.tsv";
  write_tsv(train_tsv, train);
  write_tsv(held_tsv, held);
  if (!o.quiet)
    log_info(std::to_string(pairs.size()) + " pairs: " + std::to_string(train.size()) + " training and " +
             std::to_string(held.size()) + " held-out examples (" + std::to_string(corrupted) + " corrupted triples, " +
             std::to_string(swapped) + " swapped sentences)");

  train::FinetuneOptions f;
  f.task = "sequence";
  f.init = o.init;
  f.train = train_tsv.string();
  f.dev = held_tsv.string();
  f.out = o.out;
  f.out_checked = true;
  f.seeds = {o.seed};
  f.epochs = o.epochs;
  f.batch = o.batch;
  f.max_len = o.max_len;
  f.optimizer.lr = o.lr;
  f.optimizer.weight_decay = 0.01;
  f.labels = "bad,good";
  f.pooling = "cls";
  f.read.format = "tsv";
  f.read.columns = {"sentence1", "sentence2", "label"};
  f.device = o.device;
  f.threads = o.threads;
  f.quiet = o.quiet;
  f.max_errors = o.max_errors;
  if (const int rc = train::run_finetune(f); rc != 0) return rc;

  std::vector<std::pair<std::string, std::string>> held_pairs;
  std::vector<uint8_t> positive;
  for (const PairExample& e : held) {
    held_pairs.emplace_back(e.triples, e.sentence);
    positive.push_back(e.good ? 1 : 0);
  }
  const double auc = roc_auc(score_pairs(filter_model_dir(o.out), held_pairs, o.batch, o.device), positive);
  const std::string json = "{\"heldout_auc\": " + json_fixed(auc, 6) +
                           ", \"heldout_examples\": " + std::to_string(held.size()) +
                           ", \"train_examples\": " + std::to_string(train.size()) + "}\n";
  OutputStream report((fs::path(o.out) / "filter.json").string());
  report.write(json);
  report.close();
  if (!o.quiet) log_info("held-out AUC of true pairs against corrupted ones: " + std::to_string(auc));
  stats.set("pairs", static_cast<int64_t>(pairs.size()));
  stats.set("train_examples", static_cast<int64_t>(train.size()));
  stats.set("heldout_examples", static_cast<int64_t>(held.size()));
  stats.set("corrupted_triples", corrupted);
  stats.set("swapped_sentences", swapped);
  stats.set("heldout_auc_milli", std::llround(1000 * auc));
  stats.set("bad_records", static_cast<int64_t>(errors.count()));
  if (!o.stats_file.empty()) stats.write_json(o.stats_file);
  if (!o.quiet) stats.print();
  return 0;
}

Stats run_filter(const FilterOptions& o) {
  if (o.model.empty()) throw UsageError("--model FILTER_DIR is required");
  if (o.output.empty()) throw UsageError("-o OUTPUT is required");
  if ((o.threshold >= 0) == (o.drop_fraction >= 0)) throw UsageError("give --threshold or --drop-fraction");
  nn::set_compute_threads(static_cast<int>(o.threads));
  nn::require_device(o.device);
  const fs::path dir = filter_model_dir(o.model);
  struct Generated {
    std::string json, triples, sentence;
    uint64_t line = 0;
  };
  ErrorCounter errors(o.max_errors);
  std::vector<Generated> records;
  for (const std::string& path : o.inputs) {
    std::vector<Generated> part = read_jsonl_records<Generated>(
        path, "generated sentences (verbalize generate's JSON lines)",
        [](simdjson::dom::element root) {
          return Generated{simdjson::minify(root), string_field(root, "serialized_triples"),
                           string_field(root, "gen_sentence")};
        },
        errors);
    std::move(part.begin(), part.end(), std::back_inserter(records));
  }
  errors.finish(o.inputs);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const Generated& g : records) pairs.emplace_back(g.triples, g.sentence);
  const std::vector<double> scores =
      records.empty() ? std::vector<double>() : score_pairs(dir, pairs, o.batch, o.device);
  double threshold = o.threshold;
  if (o.drop_fraction >= 0 && !scores.empty()) {
    // The score of the last record dropped: the lowest ⌊fraction · n⌋ go (ties at the cut go too).
    std::vector<double> sorted = scores;
    std::sort(sorted.begin(), sorted.end());
    const auto drop = static_cast<size_t>(std::floor(o.drop_fraction * static_cast<double>(sorted.size())));
    threshold = drop == 0 ? -1 : std::nextafter(sorted[drop - 1], 2.0);
  }
  OutputStream out(o.output);
  int64_t kept = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    if (scores[i] < threshold) continue;
    std::string line = records[i].json;
    line.pop_back();  // the closing brace
    out.write(line + ",\"score\":" + json_fixed(scores[i], 6) + "}\n");
    ++kept;
  }
  out.close();
  Stats stats;
  stats.set("scored", static_cast<int64_t>(records.size()));
  stats.set("kept", kept);
  stats.set("dropped", static_cast<int64_t>(records.size()) - kept);
  stats.set("bad_records", static_cast<int64_t>(errors.count()));
  return stats;
}

}  // namespace kglm::verbalize
