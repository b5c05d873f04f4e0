#include "train/frozen/frozen_run.hpp"

#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <numeric>
#include <set>

#include "core/json_writer.hpp"
#include "core/log.hpp"
#include "core/output_lock.hpp"
#include "core/output_stream.hpp"
#include "core/rng.hpp"
#include "core/stats.hpp"
#include "nn/checkpoint.hpp"
#include "nn/config_json.hpp"
#include "nn/optimizer.hpp"
#include "nn/safetensors.hpp"
#include "nn/threads.hpp"
#include "train/frozen/frozen_head.hpp"
#include "train/metrics_log.hpp"
#include "train/tasks/results_table.hpp"

namespace kglm::train::frozen {

namespace fs = std::filesystem;

namespace {

constexpr const char* kTaskFile = "frozen.json";
constexpr uint32_t kEpochStream = 0x667a6570;  // "fzep": the order of each epoch's sentences

// What a saved head needs besides its weights.
struct SavedTask {
  FrozenTask task = FrozenTask::pos;
  std::string encoder;  // the encoder's directory (absolute)
  int64_t layer = -1;   // -1: the mix of every layer
  TagColumn column = TagColumn::upos;
  tasks::TsvColumns columns;  // nli: the TSV's columns
  std::vector<std::string> tags, deprels;
  HeadShape shape;
};

std::string string_array(const std::vector<std::string>& items) {
  std::string j = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) j += ", ";
    append_json_string(j, items[i]);
  }
  return j + "]";
}

void write_saved_task(const fs::path& path, const SavedTask& t) {
  std::string j =
      "{\"format\": \"kglm-frozen-task\", \"task\": " + json_string(frozen_task_name(t.task)) +
      ",\n \"encoder\": " + json_string(t.encoder) + ", \"layer\": " + std::to_string(t.layer) +
      ", \"tag_column\": " + json_string(t.column == TagColumn::upos ? "upos" : "xpos") +
      ",\n \"text_column\": " + json_string(t.columns.text) + ", \"pair_column\": " + json_string(t.columns.pair) +
      ", \"label_column\": " + json_string(t.columns.label) + ",\n \"layers\": " + std::to_string(t.shape.layers) +
      ", \"width\": " + std::to_string(t.shape.width) + ", \"mlp\": " + std::to_string(t.shape.mlp) +
      ", \"arc\": " + std::to_string(t.shape.arc) + ", \"label\": " + std::to_string(t.shape.label) +
      ", \"dropout\": " + json_number(t.shape.dropout) + ",\n \"tags\": " + string_array(t.tags) +
      ",\n \"deprels\": " + string_array(t.deprels) + "}\n";
  OutputStream out(path.string());
  out.write(j);
  out.close();
}

SavedTask read_saved_task(const fs::path& path) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  SavedTask t;
  std::string_view format, task, encoder, column;
  double dropout = 0;
  simdjson::dom::array tags, deprels;
  if (parser.load(path.string()).get(root) || root["format"].get(format) || format != "kglm-frozen-task" ||
      root["task"].get(task) || root["encoder"].get(encoder) || root["layer"].get(t.layer) ||
      root["tag_column"].get(column) || root["layers"].get(t.shape.layers) || root["width"].get(t.shape.width) ||
      root["mlp"].get(t.shape.mlp) || root["arc"].get(t.shape.arc) || root["label"].get(t.shape.label) ||
      root["dropout"].get(dropout) || root["tags"].get(tags) || root["deprels"].get(deprels) ||
      !parse_frozen_task(std::string(task)))
    throw Error(path.string() + ": not a frozen-feature task file (kglm-frozen-task)");
  t.task = *parse_frozen_task(std::string(task));
  t.encoder = encoder;
  // The TSV's columns (nli; absent from the files of the other tasks).
  for (auto [key, to] : {std::pair{"text_column", &t.columns.text}, std::pair{"pair_column", &t.columns.pair},
                         std::pair{"label_column", &t.columns.label}}) {
    std::string_view value;
    if (!root[key].get(value)) *to = value;
  }
  t.column = column == "xpos" ? TagColumn::xpos : TagColumn::upos;
  t.shape.dropout = static_cast<float>(dropout);
  for (auto [from, to] : {std::pair{tags, &t.tags}, std::pair{deprels, &t.deprels}})
    for (simdjson::dom::element e : from) {
      std::string_view name;
      if (e.get(name)) throw Error(path.string() + ": a label is not a string");
      to->emplace_back(name);
    }
  t.shape.tags = static_cast<int64_t>(t.tags.size());
  t.shape.deprels = static_cast<int64_t>(t.deprels.size());
  // Checked before the head is built from them (its weights are checked against them after).
  if (t.layer < -1 || t.shape.layers < 1 || t.shape.width < 1 || t.shape.mlp < 1 || t.shape.arc < 1 ||
      t.shape.label < 1 || !(dropout >= 0 && dropout < 1))
    throw Error(path.string() +
                ": layers, width, mlp, arc and label must be positive, layer at least -1 and dropout "
                "in [0, 1): a damaged file?");
  nn::check_size_limits(path.string(), {{"layers", t.shape.layers, 1024},
                                        {"width", t.shape.width, int64_t(1) << 16},
                                        {"mlp", t.shape.mlp, int64_t(1) << 16},
                                        {"arc", t.shape.arc, int64_t(1) << 16},
                                        {"label", t.shape.label, int64_t(1) << 16}});
  return t;
}

// The features of a batch of examples.
nn::Tensor gather_features(const FrozenData& t, std::span<const uint32_t> examples, nn::Device device) {
  return t.features->gather(t.feature_sentences(examples), device);
}

// Every prediction of the data, batch by batch (in file order: the features are cached).
Predictions predict_all(FrozenHead& head, const FrozenData& t, int64_t batch) {
  Predictions p;
  p.tags.assign(t.words(), 0);
  p.heads.assign(t.words(), 0);
  p.deprels.assign(t.words(), 0);
  p.labels.assign(t.is_pairs() ? t.examples() : 0, 0);
  std::vector<uint32_t> all(t.examples());
  std::iota(all.begin(), all.end(), 0u);
  for (size_t first = 0; first < all.size(); first += static_cast<size_t>(batch)) {
    const std::span<const uint32_t> b(all.data() + first, std::min(static_cast<size_t>(batch), all.size() - first));
    head.predict(t, b, gather_features(t, b, head.params().device()), p);
  }
  return p;
}

tasks::TaskScore accuracy_score(int64_t correct, size_t total) {
  tasks::TaskScore s;
  s.metric = "accuracy";
  s.value = total > 0 ? static_cast<double>(correct) / static_cast<double>(total) : 0.0;
  s.details = {{"accuracy", s.value}};
  return s;
}

// The CoNLL 2018 evaluator's scores on identical tokenisations: every word counts; LAS needs the
// head and the universal part of the relation.
// NLI: the share of pairs labelled right.
tasks::TaskScore score(const SavedTask& task, const FrozenData& t, const Predictions& p) {
  tasks::TaskScore s;
  const size_t n = t.words();
  if (task.task == FrozenTask::nli) {
    int64_t correct = 0;
    for (size_t i = 0; i < t.examples(); ++i) correct += t.labels[i] >= 0 && p.labels[i] == t.labels[i];
    s = accuracy_score(correct, t.examples());
  } else if (task.task == FrozenTask::pos) {
    int64_t correct = 0;
    for (size_t w = 0; w < n; ++w) correct += t.tags[w] >= 0 && p.tags[w] == t.tags[w];
    s = accuracy_score(correct, n);
  }
  s.examples = static_cast<int64_t>(t.examples());
  if (task.task != FrozenTask::parse || n == 0) return s;
  int64_t heads = 0, labelled = 0;
  for (size_t i = 0; i < t.sentences.size(); ++i)
    for (size_t k = 0; k < t.sentences[i].words.size(); ++k) {
      const size_t w = static_cast<size_t>(t.first[i]) + k;
      if (t.heads[w] == tasks::kNoHead)
        throw Error(t.path + ":" + std::to_string(t.sentences[i].line) + ": a sentence without HEAD cannot be scored");
      if (p.heads[w] != t.heads[w]) continue;
      ++heads;
      const std::string& predicted = task.deprels[static_cast<size_t>(p.deprels[w])];
      labelled += predicted.substr(0, predicted.find(':')) == t.sentences[i].universal_deprel(k);
    }
  s.metric = "las";
  s.value = static_cast<double>(labelled) / static_cast<double>(n);
  s.details = {{"las", s.value}, {"uas", static_cast<double>(heads) / static_cast<double>(n)}};
  return s;
}

std::unique_ptr<FrozenHead> build_head(const SavedTask& task, nn::Device device) {
  std::unique_ptr<FrozenHead> head = make_frozen_head(task.task, task.shape, device);
  head->params().allocate(1, true);
  return head;
}

void save_head(const fs::path& dir, FrozenHead& head, const SavedTask& task) {
  nn::write_model_dir(dir, head.params(), nn::DType::F32, {{"format", "pt"}, {"producer", "kglm finetune"}},
                      [&](const fs::path& tmp) { write_saved_task(tmp / kTaskFile, task); });
}

void load_head(const fs::path& dir, FrozenHead& head) {
  nn::load_parameters(nn::SafetensorsFile::open(dir / "model.safetensors"), head.params(), false);
}

// Reads a file of the task (CoNLL-U, or TSV pairs for nli).
FrozenData read_data(const LangPath& where, const SavedTask& task, ErrorCounter& errors) {
  return task.task == FrozenTask::nli ? read_pairs(where.lang, where.path, task.columns, errors)
                                      : read_treebank(where.lang, where.path, errors);
}

// Numbers the gold labels of a file and computes its features.
void prepare_data(FrozenData& t, const SavedTask& task, const tasks::LabelSet& tags, const tasks::LabelSet& deprels,
                  FrozenEncoder& encoder, uint64_t& unknown) {
  if (task.task == FrozenTask::nli)
    prepare_pairs(t, tags, encoder, task.layer, unknown);
  else
    prepare_treebank(t, tags, task.task == FrozenTask::parse ? deprels : tasks::LabelSet(), task.column, encoder,
                     task.layer, unknown);
}

// Reads a file and computes its features.
FrozenData load_data(const LangPath& where, const SavedTask& task, const tasks::LabelSet& tags,
                     const tasks::LabelSet& deprels, FrozenEncoder& encoder, ErrorCounter& errors, bool verbose) {
  FrozenData t = read_data(where, task, errors);
  uint64_t unknown = 0;
  prepare_data(t, task, tags, deprels, encoder, unknown);
  if (verbose && unknown > 0)
    log_warning(where.path + ": " + std::to_string(unknown) +
                " gold labels are not among the model's (they count as errors)");
  return t;
}

class SeedRun {
 public:
  SeedRun(const FinetuneOptions& o, const SavedTask& task, const FrozenData& train, const FrozenData* dev,
          uint64_t seed)
      : o_(o),
        task_(task),
        train_(train),
        dev_(dev),
        seed_(seed),
        dir_(fs::path(o.out) / ("seed-" + std::to_string(seed))) {
    head_ = build_head(task, o.device);
    head_->params().initialize(seed, 0.02);
    const auto n = static_cast<int64_t>(train.examples());
    steps_per_epoch_ = (n + o.batch - 1) / o.batch;
    schedule_ = o.optimizer;
    schedule_.total_steps = steps_per_epoch_ * o.epochs;
    schedule_.warmup_steps =
        o.warmup_steps >= 0
            ? o.warmup_steps
            : static_cast<int64_t>(std::llround(o.warmup_ratio * static_cast<double>(schedule_.total_steps)));
    optimizer_ = std::make_unique<nn::AdamW>(head_->params(), schedule_);
    if (fs::exists(dir_ / "best") || fs::exists(dir_ / "metrics.jsonl"))
      throw UsageError(dir_.string() + " holds a run already: give another --out");
    fs::create_directories(dir_);
    log_.open((dir_ / "metrics.jsonl").string(), seed_tensorboard_dir(o, seed), false, 0);
  }

  void train() {
    std::vector<uint32_t> order(train_.examples());
    const bool verbose = !o_.quiet;
    for (int64_t epoch = 0; epoch < o_.epochs; ++epoch) {
      std::iota(order.begin(), order.end(), 0u);
      Rng rng(seed_, static_cast<uint64_t>(epoch), kEpochStream);
      for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
      for (int64_t k = 0; k < steps_per_epoch_; ++k) {
        const size_t first = static_cast<size_t>(k * o_.batch);
        const std::span<const uint32_t> batch(order.data() + first,
                                              std::min(static_cast<size_t>(o_.batch), order.size() - first));
        int64_t counted = 0;
        const double loss = head_->train_batch(train_, batch, gather_features(train_, batch, o_.device), seed_,
                                               static_cast<uint64_t>(step_), counted);
        const nn::StepReport report = optimizer_->step();
        head_->params().zero_grads();
        ++step_;
        log_.write("{\"step\": " + std::to_string(step_) + ", \"epoch\": " +
                   json_number(static_cast<double>(step_) / steps_per_epoch_) + ", \"loss\": " + json_number(loss) +
                   ", \"lr\": " + json_number(report.lr) + ", \"grad_norm\": " + json_number(report.grad_norm) +
                   (train_.is_pairs() ? ", \"pairs\": " : ", \"words\": ") + std::to_string(counted) + "}");
        if (verbose && o_.log_every > 0 && step_ % o_.log_every == 0)
          log_info("seed " + std::to_string(seed_) + " step " + std::to_string(step_) + "/" +
                   std::to_string(schedule_.total_steps) + " loss " + json_number(loss));
        if (dev_ && o_.eval_every > 0 && step_ % o_.eval_every == 0) evaluate_dev();
      }
      if (dev_ && (o_.eval_every == 0 || step_ % o_.eval_every != 0)) evaluate_dev();
    }
    if (!dev_) save_head(dir_ / "best", *head_, task_);
  }

  tasks::SeedResult test(const std::vector<FrozenData>& tests) {
    tasks::SeedResult r;
    r.seed = seed_;
    if (dev_) r.dev = best_;
    if (tests.empty()) return r;
    load_head(dir_ / "best", *head_);
    for (const FrozenData& t : tests) r.tests.emplace_back(t.lang, score(task_, t, predict_all(*head_, t, o_.batch)));
    return r;
  }

 private:
  void evaluate_dev() {
    const tasks::TaskScore s = score(task_, *dev_, predict_all(*head_, *dev_, o_.batch));
    std::string line = "{\"step\": " + std::to_string(step_);
    for (const auto& [name, value] : s.details) line += ", \"dev_" + name + "\": " + json_number(value);
    log_.write(line + "}");
    const bool better = s.value > best_;
    if (!o_.quiet) {
      const std::string mix = head_->describe();
      log_info("seed " + std::to_string(seed_) + " step " + std::to_string(step_) + " dev " + s.metric + " " +
               json_number(100 * s.value) + (better ? " (best so far)" : "") + (mix.empty() ? "" : "; " + mix));
    }
    if (better) {
      best_ = s.value;
      save_head(dir_ / "best", *head_, task_);
    }
  }

  const FinetuneOptions& o_;
  const SavedTask& task_;
  const FrozenData& train_;
  const FrozenData* dev_;
  uint64_t seed_;
  fs::path dir_;
  std::unique_ptr<FrozenHead> head_;
  std::unique_ptr<nn::AdamW> optimizer_;
  nn::OptimizerOptions schedule_;
  int64_t step_ = 0, steps_per_epoch_ = 0;
  double best_ = -1;
  MetricsLog log_;
};

void finish_stats(const FinetuneCommon& o, Stats& stats) {
  if (!o.stats_file.empty()) stats.write_json(o.stats_file);
  if (!o.quiet) stats.print();
}

// The models of MODEL: one saved model (seed 0) or a run directory's seed-*/best.
std::vector<std::pair<uint64_t, fs::path>> frozen_model_dirs(const std::string& model) {
  if (is_frozen_model(model)) return {{0, model}};
  std::vector<std::pair<uint64_t, fs::path>> dirs;
  if (fs::is_directory(model))
    for (const fs::directory_entry& e : fs::directory_iterator(model)) {
      const std::string name = e.path().filename().string();
      if (!name.starts_with("seed-") || !is_frozen_model(e.path() / "best")) continue;
      try {
        dirs.emplace_back(std::stoull(name.substr(5)), e.path() / "best");
      } catch (const std::exception&) {
      }
    }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

}  // namespace

bool is_frozen_task(const std::string& name) { return parse_frozen_task(name).has_value(); }

bool is_frozen_model(const fs::path& dir) { return fs::exists(dir / kTaskFile); }

int run_frozen_finetune(const FinetuneOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (o.resume) throw UsageError("--resume: a frozen-feature run is not resumable; run it again");
  if (o.batch_tokens > 0) throw UsageError("--batch-tokens: a frozen-feature task batches --batch sentences");
  const OutputLock lock(o.out, "fine-tuning run directory");  // before the features are computed
  SavedTask task;
  task.task = *parse_frozen_task(o.task);
  task.encoder = fs::absolute(o.init).lexically_normal().string();
  task.layer = o.layer;
  if (task.task == FrozenTask::nli) {
    task.columns = o.read.columns;
    if (task.columns.pair.empty()) task.columns.pair = "sentence2";
  } else {
    task.column = conllu_tag_column(o.read.tag_column);
  }
  task.shape.mlp = o.mlp_size > 0 ? o.mlp_size : task.task == FrozenTask::nli ? 300 : 256;
  task.shape.arc = o.arc_size, task.shape.label = o.label_size;
  task.shape.dropout = o.dropout >= 0 ? o.dropout : 0.33f;
  const bool verbose = !o.quiet;
  const std::unique_ptr<FrozenEncoder> encoder = open_frozen_encoder(o.init, o.device, o.batch);
  ErrorCounter errors(o.max_errors);
  const LangPath train_at = split_lang_path(o.train, false, "--train");
  FrozenData train = read_data(train_at, task, errors);
  // The labels: the training data's, sorted.
  std::set<std::string> tag_names, deprel_names;
  for (const tasks::SentenceExample& e : train.pairs) tag_names.insert(e.label);
  for (size_t s = 0; s < train.sentences.size(); ++s)
    for (size_t w = 0; w < train.sentences[s].words.size(); ++w) {
      tag_names.insert(train.tag(s, w, task.column));
      const tasks::ConlluWord& word = train.sentences[s].words[w];
      if (task.task == FrozenTask::parse && word.head == tasks::kNoHead)
        throw Error(train_at.path + ":" + std::to_string(train.sentences[s].line) +
                    ": the parser's training data needs HEAD and DEPREL on every word");
      deprel_names.insert(word.deprel);
    }
  task.tags.assign(tag_names.begin(), tag_names.end());
  if (task.task == FrozenTask::parse) task.deprels.assign(deprel_names.begin(), deprel_names.end());
  const tasks::LabelSet tags(task.tags), deprels(task.deprels);
  if (task.task != FrozenTask::parse && tags.size() < 2)
    throw Error(train_at.path + ": fewer than two " + (train.is_pairs() ? "labels" : "tags") + " to learn");
  uint64_t unknown = 0;
  prepare_data(train, task, tags, deprels, *encoder, unknown);
  task.shape.layers = train.features->layers();
  task.shape.width = train.features->width();
  task.shape.tags = static_cast<int64_t>(tags.size());
  task.shape.deprels = static_cast<int64_t>(deprels.size());
  std::optional<FrozenData> dev;
  if (!o.dev.empty())
    dev = load_data(split_lang_path(o.dev, false, "--dev"), task, tags, deprels, *encoder, errors, verbose);
  std::vector<FrozenData> tests;
  for (const std::string& t : o.tests)
    tests.push_back(load_data(split_lang_path(t, true, "--test"), task, tags, deprels, *encoder, errors, verbose));
  size_t feature_bytes = train.features->bytes() + (dev ? dev->features->bytes() : 0);
  for (const FrozenData& t : tests) feature_bytes += t.features->bytes();
  if (verbose) {
    log_info(std::string(frozen_task_name(task.task)) + " on frozen " + encoder->kind() + " features (" +
             (task.layer < 0 ? "a scalar mix of " + std::to_string(encoder->layers()) + " layers"
                             : "layer " + std::to_string(task.layer)) +
             ", width " + std::to_string(encoder->width()) + "): " + std::to_string(train.examples()) +
             (train.is_pairs() ? " training pairs, " : " training sentences, ") + std::to_string(train.words()) +
             " words; " + std::to_string(tags.size()) + (train.is_pairs() ? " labels" : " tags") +
             (task.task == FrozenTask::parse ? ", " + std::to_string(deprels.size()) + " relations" : "") +
             "; features cached: " + std::to_string(feature_bytes >> 20) + " MiB");
    if (encoder->cut_words() > 0)
      log_warning(std::to_string(encoder->cut_words()) + " words past the encoder's positions have zero features");
  }
  fs::create_directories(o.out);
  std::vector<tasks::SeedResult> results;
  using Clock = std::chrono::steady_clock;
  double train_seconds = 0, test_seconds = 0;  // the training loops (dev evaluations included); the tests
  for (uint64_t seed : o.seeds) {
    SeedRun run(o, task, train, dev ? &*dev : nullptr, seed);
    const auto begin = Clock::now();
    run.train();
    const auto trained = Clock::now();
    results.push_back(run.test(tests));
    train_seconds += std::chrono::duration<double>(trained - begin).count();
    test_seconds += std::chrono::duration<double>(Clock::now() - trained).count();
  }
  int64_t test_sentences = 0;
  for (const FrozenData& t : tests) test_sentences += static_cast<int64_t>(t.examples());
  if (dev || !tests.empty()) {
    const std::string table = tasks::write_results((fs::path(o.out) / "results").string(), frozen_task_name(task.task),
                                                   task.task == FrozenTask::parse ? "las" : "accuracy", results);
    if (!o.quiet) std::fputs(table.c_str(), stderr);
  }
  Stats stats;
  stats.set("seeds", static_cast<int64_t>(o.seeds.size()));
  stats.set(train.is_pairs() ? "train_pairs" : "train_sentences", static_cast<int64_t>(train.examples()));
  stats.set("train_words", static_cast<int64_t>(train.words()));
  stats.set("labels", static_cast<int64_t>(task.task == FrozenTask::parse ? deprels.size() : tags.size()));
  stats.set("feature_bytes", static_cast<int64_t>(feature_bytes));
  stats.set("cut_words", static_cast<int64_t>(encoder->cut_words()));
  stats.set("bad_records", static_cast<int64_t>(errors.count()));
  stats.set("train_milliseconds", static_cast<int64_t>(1000 * train_seconds));
  stats.set("test_milliseconds", static_cast<int64_t>(1000 * test_seconds));
  stats.set("test_sentences", test_sentences);
  stats.set("milliseconds",
            static_cast<int64_t>(std::chrono::duration<double, std::milli>(Clock::now() - start).count()));
  finish_stats(o, stats);
  return 0;
}

int run_frozen_evaluate(const FinetuneEvaluateOptions& o) {
  const std::vector<std::pair<uint64_t, fs::path>> dirs = frozen_model_dirs(o.model);
  if (dirs.empty()) throw Error(o.model + ": no frozen-feature model (frozen.json) in it");
  ErrorCounter errors(o.max_errors);
  std::vector<tasks::SeedResult> results;
  std::string encoder_dir;
  std::unique_ptr<FrozenEncoder> encoder;
  std::vector<FrozenData> tests;
  SavedTask first;
  for (const auto& [seed, dir] : dirs) {
    const SavedTask task = read_saved_task(dir / kTaskFile);
    if (!encoder) {
      // Every seed of a run shares the encoder and labels: the features are computed once.
      first = task;
      encoder = open_frozen_encoder(task.encoder, o.device, o.batch);
      for (const std::string& t : o.tests)
        tests.push_back(load_data(split_lang_path(t, true, "--test"), task, tasks::LabelSet(task.tags),
                                  tasks::LabelSet(task.deprels), *encoder, errors, !o.quiet));
    } else if (task.encoder != first.encoder || task.tags != first.tags || task.deprels != first.deprels ||
               task.layer != first.layer || task.task != first.task) {
      throw Error(dir.string() + ": another encoder, task or labels than " + dirs.front().second.string());
    }
    std::unique_ptr<FrozenHead> head = build_head(task, o.device);
    load_head(dir, *head);
    tasks::SeedResult r;
    r.seed = seed;
    for (const FrozenData& t : tests) r.tests.emplace_back(t.lang, score(task, t, predict_all(*head, t, o.batch)));
    results.push_back(std::move(r));
  }
  const std::string prefix = !o.output.empty() ? o.output : (fs::path(o.model) / "evaluation").string();
  const std::string table = tasks::write_results(prefix, frozen_task_name(first.task),
                                                 first.task == FrozenTask::parse ? "las" : "accuracy", results);
  if (!o.quiet) std::fputs(table.c_str(), stderr);
  Stats stats;
  stats.set("models", static_cast<int64_t>(results.size()));
  stats.set("bad_records", static_cast<int64_t>(errors.count()));
  finish_stats(o, stats);
  return 0;
}

int run_frozen_predict(const FinetunePredictOptions& o) {
  const SavedTask task = read_saved_task(fs::path(o.model) / kTaskFile);
  const std::unique_ptr<FrozenEncoder> encoder = open_frozen_encoder(task.encoder, o.device, o.batch);
  ErrorCounter errors(o.max_errors);
  const FrozenData t = load_data(split_lang_path(o.input, false, "the input"), task, tasks::LabelSet(task.tags),
                                 tasks::LabelSet(task.deprels), *encoder, errors, !o.quiet);
  std::unique_ptr<FrozenHead> head = build_head(task, o.device);
  load_head(o.model, *head);
  const Predictions p = predict_all(*head, t, o.batch);
  OutputStream out(o.output);
  // nli: a JSON line per pair, as `finetune predict` writes for the sequence task.
  for (size_t i = 0; i < t.pairs.size(); ++i) {
    std::string line = "{\"line\": " + std::to_string(t.pairs[i].line) + ", \"label\": ";
    append_json_string(line, task.tags[static_cast<size_t>(p.labels[i])]);
    out.write(line + "}\n");
  }
  tasks::ConlluReplacement r;
  for (size_t i = 0; i < t.sentences.size(); ++i) {
    r = {};
    for (int64_t w = t.first[i]; w < t.first[i + 1]; ++w) {
      const auto k = static_cast<size_t>(w);
      if (task.task == FrozenTask::pos) {
        (task.column == TagColumn::upos ? r.upos : r.xpos).push_back(task.tags[static_cast<size_t>(p.tags[k])]);
      } else {
        r.heads.push_back(p.heads[k]);
        r.deprels.push_back(task.deprels[static_cast<size_t>(p.deprels[k])]);
      }
    }
    out.write(tasks::write_conllu_sentence(t.sentences[i], r));
  }
  out.close();
  Stats stats;
  stats.set(t.is_pairs() ? "pairs" : "sentences", static_cast<int64_t>(t.examples()));
  stats.set("words", static_cast<int64_t>(t.words()));
  stats.set("bad_records", static_cast<int64_t>(errors.count()));
  finish_stats(o, stats);
  return 0;
}

}  // namespace kglm::train::frozen
