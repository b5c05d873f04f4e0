#include "train/finetune.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>

#include "core/atomic_file.hpp"
#include "core/json_writer.hpp"
#include "core/log.hpp"
#include "core/output_lock.hpp"
#include "core/output_stream.hpp"
#include "core/output_target.hpp"
#include "core/stats.hpp"
#include "core/temporaries.hpp"
#include "dist/communicator.hpp"
#include "nn/checkpoint.hpp"
#include "nn/cpu_precision.hpp"
#include "nn/threads.hpp"
#include "nn/torch_checkpoint.hpp"
#include "sample/corpus.hpp"
#include "train/frozen/frozen_run.hpp"
#include "train/pretrain.hpp"
#include "train/tasks/finetuner.hpp"
#include "train/tensorboard_events.hpp"

namespace kglm::train {

namespace fs = std::filesystem;
using tasks::TaskFile;

namespace {

// --labels: "A,B,C" or @FILE with one label a line.
std::vector<std::string> parse_labels(const std::string& spec) {
  std::vector<std::string> labels;
  if (spec.starts_with("@")) {
    std::ifstream in(spec.substr(1));
    if (!in) throw UsageError("--labels " + spec + ": cannot read the file: " + std::strerror(errno));
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) labels.push_back(line);
  } else {
    size_t begin = 0;
    while (begin <= spec.size()) {
      const size_t comma = std::min(spec.find(',', begin), spec.size());
      if (comma > begin) labels.push_back(spec.substr(begin, comma - begin));
      begin = comma + 1;
    }
  }
  if (labels.empty()) throw UsageError("--labels names no label");
  return labels;
}

// The longest sequence the model's positions allow (XLM-R's start after the padding id).
int64_t usable_length(const nn::ModelConfig& c, int64_t wanted) {
  const int64_t offset = c.architecture == nn::Architecture::XlmRoberta ? c.pad_token_id + 1 : 0;
  return std::min(wanted, c.max_positions - offset);
}

// What encoding a file had to cut or could not label. In the training file an unknown label is
// left out of the loss; in a dev or test file it counts as the model's error.
void warn_encoding(const std::string& path, const tasks::TaskConfig& task, size_t examples,
                   const tasks::EncodeReport& report, bool training) {
  if (task.kind == tasks::TaskKind::qa)
    log_info(path + ": " + std::to_string(examples) + " questions in " + std::to_string(report.windows) +
             " windows of at most " + std::to_string(task.max_len) + " tokens");
  if (report.truncated > 0)
    log_warning(path + ": " + std::to_string(report.truncated) + " of " + std::to_string(examples) +
                " examples longer than --max-len " + std::to_string(task.max_len) + " were cut" +
                (task.kind == tasks::TaskKind::token ? " (their cut words are predicted O)" : ""));
  if (report.entities_cut > 0)
    log_warning(path + ": " + std::to_string(report.entities_cut) +
                " entities past --max-len stand at the last kept token");
  if (report.questions_cut > 0)
    log_warning(path + ": " + std::to_string(report.questions_cut) + " of " + std::to_string(examples) +
                " questions longer than --max-query-len " + std::to_string(task.qa_windows.max_query_len) +
                " were cut");
  if (report.unknown_labels > 0)
    log_warning(path + ": " + std::to_string(report.unknown_labels) +
                " gold labels are not among the model's labels (" +
                (training ? "left out of the loss)" : "they count as errors)"));
}

// Reads and encodes one file; reports what the encoding had to cut.
TaskFile load_file(const tasks::TaskConfig& task, const LangPath& where, const tasks::LabelSet& labels,
                   const tasks::LabelSet* intents, const tok::Tokenizer& tokenizer, const nn::ModelConfig& config,
                   const FinetuneCommon& o, ErrorCounter& errors, bool verbose) {
  TaskFile f{where.lang, tasks::read_task_data(task.kind, where.path, where.lang, o.read, errors), {}};
  tasks::EncodeReport report;
  f.encoded =
      tasks::encode_task_data(f.data, labels, tokenizer, config, task.max_len, report, task.qa_windows, intents);
  if (verbose) warn_encoding(where.path, task, f.data.size(), report, false);
  return f;
}

// Whether a run directory holds frozen-feature models (seed-*/best/frozen.json).
bool has_frozen_seed(const std::string& run) {
  if (!fs::is_directory(run)) return false;
  for (const fs::directory_entry& e : fs::directory_iterator(run))
    if (e.path().filename().string().starts_with("seed-") && frozen::is_frozen_model(e.path() / "best")) return true;
  return false;
}

void finish_stats(const FinetuneCommon& o, Stats& stats, int rank) {
  if (rank != 0) return;
  if (!o.stats_file.empty()) stats.write_json(o.stats_file);
  if (!o.quiet) stats.print();
}

int finetune(const FinetuneOptions& o, const std::shared_ptr<dist::Communicator>& comm) {
  const auto start = std::chrono::steady_clock::now();
  const bool verbose = !o.quiet && comm->rank() == 0;
  tasks::FinetuneSetup setup;
  setup.task.kind = tasks::parse_task(o.task);
  setup.task.pooling = tasks::parse_pooling(o.pooling);
  setup.config = nn::read_model_config(fs::path(o.init) / "config.json");
  if (o.dropout >= 0) setup.config.hidden_dropout = setup.config.attention_dropout = o.dropout;
  setup.tokenizer = tok::load_tokenizer(o.init);
  setup.task.max_len = usable_length(setup.config, o.max_len);
  setup.task.qa_windows = o.qa_windows;
  setup.task.qa_decode = o.qa_decode;
  setup.task.intent_weight = o.intent_weight;
  if (o.intent && setup.task.kind != tasks::TaskKind::slots) throw UsageError("--intent is for --task slots");
  ErrorCounter errors(o.max_errors);
  const LangPath train_at = split_lang_path(o.train, false, "--train");
  // The labels: --labels, else the training data's; a resumed run must number them as before.
  TaskFile train{
      train_at.lang, tasks::read_task_data(setup.task.kind, train_at.path, train_at.lang, o.read, errors), {}};
  setup.labels = !o.labels.empty() ? tasks::LabelSet(parse_labels(o.labels)) : tasks::LabelSet::from_data(train.data);
  const bool labelled = setup.task.kind != tasks::TaskKind::choice && setup.task.kind != tasks::TaskKind::qa;
  if (labelled && setup.labels.size() < 2) {
    if (!o.labels.empty()) throw UsageError("--labels names fewer than two labels");
    throw Error(train_at.path + ": the training data has fewer than two labels");
  }
  setup.task.labels = setup.labels.names();
  if (o.intent) {
    setup.intents = tasks::LabelSet::intents_of(train.data);
    setup.task.intents = setup.intents.names();
  }
  const tasks::LabelSet* intents = o.intent ? &setup.intents : nullptr;
  const fs::path run_task = fs::path(o.out) / "finetune.json";
  if (o.resume && fs::exists(run_task)) {
    const tasks::TaskConfig before = tasks::read_task_config(run_task);
    if (before.kind != setup.task.kind || before.labels != setup.task.labels || before.max_len != setup.task.max_len ||
        before.pooling != setup.task.pooling || before.qa_windows.doc_stride != setup.task.qa_windows.doc_stride ||
        before.qa_windows.max_query_len != setup.task.qa_windows.max_query_len || before.intents != setup.task.intents)
      throw UsageError(
          "--resume: the task, labels, --max-len, --pooling, --doc-stride or --max-query-len differ from "
          "the run in " +
          o.out);
  }
  tasks::EncodeReport report;
  train.encoded = tasks::encode_task_data(train.data, setup.labels, *setup.tokenizer, setup.config, setup.task.max_len,
                                          report, setup.task.qa_windows, intents);
  if (verbose) warn_encoding(train_at.path, setup.task, train.data.size(), report, true);
  setup.train = std::move(train);
  if (!o.dev.empty())
    setup.dev = load_file(setup.task, split_lang_path(o.dev, false, "--dev"), setup.labels, intents, *setup.tokenizer,
                          setup.config, o, errors, verbose);
  for (const std::string& t : o.tests)
    setup.tests.push_back(load_file(setup.task, split_lang_path(t, true, "--test"), setup.labels, intents,
                                    *setup.tokenizer, setup.config, o, errors, verbose));
  if (o.batch_tokens < 0) throw UsageError("--batch-tokens must be 0 (off) or a token budget");
  if (o.batch_tokens == 0 && o.batch < comm->size())
    throw UsageError("--batch " + std::to_string(o.batch) +
                     " is the global batch: it needs one example for each of the " + std::to_string(comm->size()) +
                     " ranks");
  OutputLock lock;  // rank 0: the run directory, until every seed is done
  if (comm->rank() == 0) {
    lock = OutputLock(o.out, "fine-tuning run directory");
    fs::create_directories(o.out);
    tasks::write_task_config(run_task, setup.task);
  }
  if (verbose)
    log_info(std::string(tasks::task_name(setup.task.kind)) + " task, " + std::to_string(setup.labels.size()) +
             " labels; " + std::to_string(setup.train.encoded.size()) + " training examples" +
             (setup.dev ? ", " + std::to_string(setup.dev->encoded.size()) + " dev" : std::string()) + ", " +
             std::to_string(setup.tests.size()) + " test files; " + std::to_string(o.seeds.size()) + " seeds" +
             (comm->size() > 1 ? "; " + std::to_string(comm->size()) + " ranks (" + comm->backend() + ")" : ""));

  std::vector<tasks::SeedResult> results;
  int64_t steps = 0;
  double train_seconds = 0, test_seconds = 0;  // the training loops (dev evaluations included); the tests
  using Clock = std::chrono::steady_clock;
  for (uint64_t seed : o.seeds) {
    tasks::Finetuner run(o, setup, seed, comm);
    const auto begin = Clock::now();
    if (!run.train()) return kExitStopped;
    const auto trained = Clock::now();
    results.push_back(run.test());
    train_seconds += std::chrono::duration<double>(trained - begin).count();
    test_seconds += std::chrono::duration<double>(Clock::now() - trained).count();
    steps += run.total_steps();
  }
  if (comm->rank() == 0 && (setup.dev || !setup.tests.empty())) {
    const std::string table = tasks::write_results((fs::path(o.out) / "results").string(), setup.task.kind, results);
    if (!o.quiet) std::fputs(table.c_str(), stderr);
  }
  Stats stats;
  stats.set("seeds", static_cast<int64_t>(o.seeds.size()));
  stats.set("train_examples", static_cast<int64_t>(setup.train.encoded.size()));
  stats.set("labels", static_cast<int64_t>(setup.labels.size()));
  stats.set("steps", steps);
  stats.set("bad_records", static_cast<int64_t>(errors.count()));
  stats.set("train_milliseconds", static_cast<int64_t>(1000 * train_seconds));
  stats.set("test_milliseconds", static_cast<int64_t>(1000 * test_seconds));
  int64_t test_examples = 0;
  for (const TaskFile& t : setup.tests) test_examples += static_cast<int64_t>(t.encoded.size());
  stats.set("test_examples", test_examples);
  stats.set("milliseconds",
            static_cast<int64_t>(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count()));
  finish_stats(o, stats, comm->rank());
  return 0;
}

}  // namespace

LangPath split_lang_path(const std::string& arg, bool lang_required, const char* option) {
  const size_t eq = arg.find('=');
  if (eq != std::string::npos && sample::valid_language(std::string_view(arg).substr(0, eq)))
    return {arg.substr(0, eq), arg.substr(eq + 1)};
  if (lang_required) throw UsageError(std::string(option) + " takes LANG=PATH, not '" + arg + "'");
  return {"", arg};
}

std::vector<std::pair<uint64_t, fs::path>> finetuned_model_dirs(const std::string& model) {
  if (fs::exists(fs::path(model) / "finetune.json") && fs::exists(fs::path(model) / "config.json")) return {{0, model}};
  // A model fine-tuned by transformers: config.json names a task class (load_finetuned_model reads it).
  if (fs::exists(fs::path(model) / "config.json") && !fs::exists(fs::path(model) / "finetune.json")) {
    tasks::task_config_from_hf(fs::path(model) / "config.json");  // throws, saying why, when not a task model
    return {{0, model}};
  }
  std::vector<std::pair<uint64_t, fs::path>> dirs;
  if (fs::is_directory(model))
    for (const fs::directory_entry& e : fs::directory_iterator(model)) {
      const std::string name = e.path().filename().string();
      if (!name.starts_with("seed-") || !fs::exists(e.path() / "best" / "finetune.json")) continue;
      try {
        dirs.emplace_back(std::stoull(name.substr(5)), e.path() / "best");
      } catch (const std::exception&) {
      }
    }
  if (dirs.empty()) throw Error(model + ": neither a fine-tuned model nor a run directory with seed-*/best models");
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::string seed_tensorboard_dir(const FinetuneOptions& options, uint64_t seed) {
  return tensorboard_subdir(options.tensorboard, "seed-" + std::to_string(seed));
}

void check_run_directory(const std::string& out) {
  const fs::path dir = directory_output_path(out);
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec))
    throw Error(dir.string() + ": is " + describe_file_type(dir.string()) + "; a fine-tuning run directory is needed");
  bool empty = true;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == "finetune.json" || name.starts_with("seed-")) return;
    empty = false;
  }
  if (!empty)
    throw Error(dir.string() + ": exists and is not a fine-tuning run directory (no finetune.json or seed-N/): " +
                "give a new or empty directory");
}

int run_finetune(const FinetuneOptions& o) {
  nn::set_compute_threads(static_cast<int>(o.threads));
  nn::use_precision(o.precision, o.device);
  if (o.init.empty()) throw UsageError("--init MODEL_DIR is required");
  if (o.train.empty()) throw UsageError("--train FILE is required");
  if (o.out.empty()) throw UsageError("--out RUN_DIR is required");
  if (o.seeds.empty()) throw UsageError("--seeds names no seed");
  if (o.epochs < 1 || o.batch < 1 || o.max_len < 8) throw UsageError("--epochs and --batch must be ≥ 1, --max-len ≥ 8");
  nn::require_device(o.device);
  if (!o.out_checked) check_run_directory(o.out);
  if (frozen::is_frozen_task(o.task)) {
    const std::shared_ptr<dist::Communicator> comm = dist::make_communicator(o.device);
    if (comm->size() > 1)
      throw UsageError("--task " + o.task + " trains a small head on cached features: run it as one process");
    return frozen::run_frozen_finetune(o);
  }
  if (o.frozen)
    throw UsageError("--frozen is for the tasks pos, parse and nli (the encoder of --task " + o.task +
                     " is fine-tuned)");
  defer_signal(SIGUSR1);  // checkpoint and stop, rather than be killed
  const std::shared_ptr<dist::Communicator> comm = dist::make_communicator(o.device);
  return dist::run_on_every_rank(*comm, "finetune", [&] { return finetune(o, comm); });
}

LoadedModel load_finetuned_model(const fs::path& dir, nn::Device device) {
  LoadedModel m;
  // A model fine-tuned by transformers has no finetune.json: its config.json names the task.
  m.task = fs::exists(dir / "finetune.json") ? tasks::read_task_config(dir / "finetune.json")
                                             : tasks::task_config_from_hf(dir / "config.json");
  m.labels = tasks::LabelSet(m.task.labels);
  m.intents = tasks::LabelSet(m.task.intents);
  m.config = nn::read_model_config(dir / "config.json");
  m.tokenizer = tok::load_tokenizer(dir);
  m.model =
      std::make_unique<tasks::TaskModel>(m.config, m.task.kind, m.task.pooling, static_cast<int64_t>(m.labels.size()),
                                         device, static_cast<int64_t>(m.intents.size()), false);
  nn::load_parameters(nn::open_model_weights(dir), m.model->params(), false);
  return m;
}

int run_finetune_evaluate(const FinetuneEvaluateOptions& o) {
  nn::set_compute_threads(static_cast<int>(o.threads));
  nn::use_precision(o.precision, o.device);
  nn::require_device(o.device);
  if (o.tests.empty()) throw UsageError("--test LANG=FILE is required");
  if (frozen::is_frozen_model(o.model) || has_frozen_seed(o.model)) return frozen::run_frozen_evaluate(o);
  const tasks::EntityRules rules = tasks::entity_rules(o.tag_scheme);
  std::vector<tasks::SeedResult> results;
  ErrorCounter errors(o.max_errors);
  tasks::TaskKind kind = tasks::TaskKind::token;
  // The predictions alone (no loading, reading or scoring): what benchmarks compare.
  double predict_seconds = 0;
  int64_t examples = 0;
  for (const auto& [seed, dir] : finetuned_model_dirs(o.model)) {
    LoadedModel m = load_finetuned_model(dir, o.device);
    kind = m.task.kind;
    tasks::SeedResult r;
    r.seed = seed;
    for (const std::string& t : o.tests) {
      const TaskFile f = load_file(m.task, split_lang_path(t, true, "--test"), m.labels, m.intents_or_null(),
                                   *m.tokenizer, m.config, o, errors, !o.quiet && results.empty());
      const auto begin = std::chrono::steady_clock::now();
      const tasks::TaskPredictions p =
          tasks::predict(*m.model, f.data, f.encoded, m.labels, o.batch, m.task.qa_decode, m.intents_or_null());
      predict_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      examples += static_cast<int64_t>(f.encoded.size());
      r.tests.emplace_back(f.lang, tasks::score(f.data, m.labels, p, rules));
    }
    results.push_back(std::move(r));
  }
  const std::string prefix = !o.output.empty() ? o.output : (fs::path(o.model) / "evaluation").string();
  const std::string table = tasks::write_results(prefix, kind, results);
  if (!o.quiet) std::fputs(table.c_str(), stderr);
  Stats stats;
  stats.set("models", static_cast<int64_t>(results.size()));
  stats.set("bad_records", static_cast<int64_t>(errors.count()));
  stats.set("test_examples", examples);
  stats.set("predict_milliseconds", std::llround(1000 * predict_seconds));
  finish_stats(o, stats, 0);
  return 0;
}

int run_finetune_predict(const FinetunePredictOptions& o) {
  nn::set_compute_threads(static_cast<int>(o.threads));
  nn::use_precision(o.precision, o.device);
  nn::require_device(o.device);
  if (o.input.empty()) throw UsageError("a file to label is required");
  if (o.output.empty()) throw UsageError("-o OUTPUT is required");
  if (frozen::is_frozen_model(o.model)) return frozen::run_frozen_predict(o);
  LoadedModel m = load_finetuned_model(o.model, o.device);
  ErrorCounter errors(o.max_errors);
  const LangPath where = split_lang_path(o.input, false, "the input");
  const TaskFile f =
      load_file(m.task, where, m.labels, m.intents_or_null(), *m.tokenizer, m.config, o, errors, !o.quiet);
  const tasks::TaskPredictions p =
      tasks::predict(*m.model, f.data, f.encoded, m.labels, o.batch, m.task.qa_decode, m.intents_or_null());
  OutputStream out(o.output);
  std::string text;
  if (m.task.kind == tasks::TaskKind::qa) {
    // {id: answer}, the predictions file the SQuAD and MLQA evaluation scripts read.
    text = "{";
    for (size_t i = 0; i < f.data.size(); ++i) {
      text += i ? ",\n " : "\n ";
      append_json_string(text, f.data.qa[i].id);
      text += ": ";
      append_json_string(text, p.answers[i]);
    }
    out.write(text + "\n}\n");
  }
  for (size_t i = 0; i < f.data.size() && m.task.kind != tasks::TaskKind::qa; ++i) {
    text.clear();
    if (m.task.kind == tasks::TaskKind::slots) {
      // {"line", "words", "tags"[, "intent"]}: the input's words with the predicted slots and intent.
      const tasks::SlotExample& s = f.data.slots[i];
      text += "{\"line\": " + std::to_string(s.line) + ", \"words\": [";
      for (size_t w = 0; w < s.sentence.words.size(); ++w) {
        text += w ? ", " : "";
        append_json_string(text, s.sentence.words[w]);
      }
      text += "], \"tags\": [";
      for (size_t w = 0; w < p.tags[i].size(); ++w) {
        text += w ? ", " : "";
        append_json_string(text, p.tags[i][w]);
      }
      text += "]";
      if (!p.intents.empty()) {
        text += ", \"intent\": ";
        append_json_string(text, p.intents[i]);
      }
      text += "}\n";
    } else if (m.task.kind == tasks::TaskKind::token) {
      // The input's words with the predicted tags: PAN-X lines when the words have a language.
      const tasks::TaggedSentence& s = f.data.tagged[i];
      for (size_t w = 0; w < s.words.size(); ++w)
        text += (s.lang.empty() ? "" : s.lang + ":") + s.words[w] + "\t" + p.tags[i][w] + "\n";
      text += "\n";
    } else {
      const int32_t label = p.labels[i];
      text += "{\"line\": " +
              std::to_string(f.data.kind == tasks::TaskKind::choice     ? f.data.questions[i].line
                             : f.data.kind == tasks::TaskKind::relation ? f.data.relations[i].line
                             : f.data.kind == tasks::TaskKind::wic      ? f.data.wic[i].line
                                                                        : f.data.sentences[i].line) +
              ", \"label\": ";
      if (m.task.kind == tasks::TaskKind::choice) {
        text += std::to_string(label) + ", \"choice\": ";
        append_json_string(text, f.data.questions[i].choices[static_cast<size_t>(label)]);
      } else {
        append_json_string(text, m.labels.names()[static_cast<size_t>(label)]);
      }
      text += "}\n";
    }
    out.write(text);
  }
  out.close();
  Stats stats;
  stats.set("examples", static_cast<int64_t>(f.data.size()));
  stats.set("bad_records", static_cast<int64_t>(errors.count()));
  finish_stats(o, stats, 0);
  return 0;
}

}  // namespace kglm::train
