// finetune: fine-tuning of a pre-trained encoder on NER, sequence and pair classification,
// relation classification and multiple choice, evaluated zero-shot across languages; `finetune
// evaluate` and `finetune predict` on saved models. See man 1 finetune.
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/cli.hpp"
#include "core/comma_list.hpp"
#include "core/error.hpp"
#include "nn/cpu_precision.hpp"
#include "train/finetune.hpp"
#include "train/frozen/retrieval.hpp"
#include "train/tasks/scores.hpp"

using namespace kglm;

namespace {

constexpr const char* kFormatHelp =
    "input format: auto (sniffed), or token: panx, conll; sequence: tsv; relation: relx, jsonl (annotated text); "
    "choice: xlr; qa: squad (SQuAD v1.1 JSON); wic: wic (WiC or XL-WiC TSV); slots: multiatis (MultiATIS++ TSV), mtop "
    "(MTOP TSV), massive (MASSIVE JSON lines)";

// The options every command reads files and runs the model with.
void add_common(ToolCli& cli, train::FinetuneCommon& o, std::string& device) {
  // clang-format off
  cli.add()
      ("format", po::value(&o.read.format)->default_value("auto"), kFormatHelp)
      ("tag-column", po::value(&o.read.tag_column)->default_value(-1),
       "conll: the label's column, 0-based or negative from the end")
      ("text-column", po::value(&o.read.columns.text)->default_value("sentence1"),
       "tsv: the text's column: a name of the header line, or a number (1-based) for a file without one, as "
       "XTREME's XNLI (--text-column 1 --pair-column 2 --label-column 3)")
      ("pair-column", po::value(&o.read.columns.pair)->default_value(""),
       "tsv: the second text's column (pair tasks: sentence2)")
      ("label-column", po::value(&o.read.columns.label)->default_value("label"), "tsv: the label's column")
      ("strict", po::bool_switch(&o.read.strict),
       "squad: refuse a file whose question ids repeat (default: a warning, and the repeats renamed ID-2, ID-3, ...)")
      ("batch", po::value(&o.batch)->default_value(32), "examples per batch (the global batch across ranks)")
      ("device", po::value(&device)->default_value("cpu"), "cpu, or cuda")
      ("precision", po::value(&o.precision)->default_value("fp32"), nn::kPrecisionHelp);
  // clang-format on
}

void fill_common(const ToolCli& cli, const std::string& device, train::FinetuneCommon& o, bool takes_inputs = false) {
  const CommonOptions& c = cli.common();
  o.device = nn::parse_device(device);
  o.threads = c.threads;
  o.quiet = c.quiet;
  o.max_errors = c.max_errors;
  o.stats_file = c.stats_file;
  o.command_line = c.command_line;
  if (o.batch < 1) throw UsageError("--batch must be at least 1");
  if (!takes_inputs && !c.inputs.empty()) throw UsageError("unexpected argument '" + c.inputs.front() + "'");
}

std::vector<uint64_t> parse_seeds(const std::string& spec) {
  std::vector<uint64_t> seeds;
  for (std::string_view item : split_comma_list(spec)) {
    const std::string part(item);
    size_t used = 0;
    try {
      seeds.push_back(std::stoull(part, &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size() || part.starts_with("-"))
      throw UsageError("--seeds takes comma-separated non-negative integers, not '" + spec + "'");
  }
  return seeds;
}

// A usage error, before any work, for a scheme seqeval does not have.
void check_tag_scheme(const std::string& scheme) {
  try {
    train::tasks::entity_rules(scheme);
  } catch (const Error& e) {
    throw UsageError(std::string("--tag-scheme: ") + e.what());
  }
}

int train_main(int argc, char** argv) {
  ToolCli cli("finetune",
              "finetune --task token|sequence|relation|choice|qa|wic|slots --init MODEL_DIR --train FILE [--dev FILE]\n"
              "                [--test LANG=FILE ...] [--epochs E --lr LR --batch B --seeds 11,22,33] -o RUN_DIR\n"
              "       finetune evaluate --model RUN_DIR --test LANG=FILE ... [-o PREFIX]\n"
              "       finetune predict --model RUN_DIR/seed-S/best FILE -o OUTPUT\n"
              "       finetune retrieve --model MODEL_DIR --pairs LANG=XX_FILE,EN_FILE ... -o PREFIX",
              "Fine-tunes a pre-trained XLM-R or BERT encoder with a task head (token: NER, POS, slots; sequence:\n"
              "single or pair classification; relation: two marked entities; choice: multiple choice; qa: extractive\n"
              "question answering; wic: word in context; slots: slot filling, with --intent joint with intents) for\n"
              "each seed,\n"
              "keeps the best model on dev, and scores it on test files per language (zero-shot cross-lingual).");
  train::FinetuneOptions o;
  std::string device, seeds;
  add_common(cli, o, device);
  // clang-format off
  cli.add()
      ("task", po::value(&o.task), "token, sequence, relation, choice, qa, wic or slots (the encoder fine-tuned); pos or parse "
       "(CoNLL-U), nli (TSV pairs, ESIM) (the encoder frozen)")
      ("init", po::value(&o.init), "the pre-trained model: a Hugging Face directory (pretrain's checkpoints are)")
      ("train", po::value(&o.train), "training file: PATH or LANG=PATH")
      ("dev", po::value(&o.dev), "dev file (PATH or LANG=PATH): evaluated during training, the best model kept")
      ("test", po::value(&o.tests)->composing(), "LANG=FILE, repeatable: scored with the best model of each seed")
      ("out", po::value(&o.out), "the run directory")
      ("tensorboard", po::value(&o.tensorboard),
       "DIR: TensorBoard event files of each seed's metrics log, in DIR/seed-S (TensorBoard's runs)")
      ("seeds", po::value(&seeds)->default_value("11"), "comma-separated seeds, one run each")
      ("epochs", po::value(&o.epochs)->default_value(3), "passes over the training data")
      ("batch-tokens", po::value(&o.batch_tokens)->default_value(0),
       "training batches of at most N tokens (length-sorted buckets in a seeded order, as fairseq's "
       "--max-tokens) instead of --batch examples; 0: --batch")
      ("max-len", po::value(&o.max_len)->default_value(128),
       "tokens per sequence, special tokens included (qa: per window, default 384)")
      ("doc-stride", po::value(&o.qa_windows.doc_stride)->default_value(128),
       "qa: tokens that consecutive windows of a long context share")
      ("max-query-len", po::value(&o.qa_windows.max_query_len)->default_value(64), "qa: question tokens kept")
      ("intent", po::bool_switch(&o.intent), "slots: an intent head beside the slot tagger, the losses summed")
      ("intent-weight", po::value(&o.intent_weight)->default_value(1.0), "slots: the intent loss's weight")
      ("max-answer-len", po::value(&o.qa_decode.max_answer_len)->default_value(30), "qa: the longest answer, in tokens")
      ("n-best", po::value(&o.qa_decode.n_best)->default_value(20),
       "qa: the start and end scores of each window that decoding pairs")
      ("lr", po::value(&o.optimizer.lr)->default_value(2e-5), "peak learning rate")
      ("warmup", po::value(&o.warmup_steps)->default_value(-1), "linear warm-up steps (default: --warmup-ratio)")
      ("warmup-ratio", po::value(&o.warmup_ratio)->default_value(0.1), "linear warm-up share of the run's steps")
      ("weight-decay", po::value(&o.optimizer.weight_decay)->default_value(0.0), "AdamW decoupled weight decay")
      ("adam-eps", po::value(&o.optimizer.eps)->default_value(1e-8), "AdamW ε")
      ("clip", po::value(&o.optimizer.max_grad_norm)->default_value(1.0), "clip the global gradient norm (0: off)")
      ("dropout", po::value(&o.dropout)->default_value(-1.0f), "hidden and attention dropout (default: the model's)")
      ("labels", po::value(&o.labels), "A,B,C or @FILE (one a line): the labels in their order "
       "(default: the training data's, sorted)")
      ("tag-scheme", po::value(&o.tag_scheme),
       "token: score entities by seqeval's strict mode in this scheme (IOB1, IOE1, IOB2, IOE2, IOBES, BILOU); "
       "default: seqeval's default mode")
      ("pooling", po::value(&o.pooling)->default_value("entity-start"),
       "relation: entity-start (the entities' first tokens, concatenated) or cls")
      ("train-layers", po::value(&o.train_layers)->default_value("all"),
       "all, last:K (the embeddings, the last K layers and the head) or last:K,frozen-embeddings")
      ("eval-every", po::value(&o.eval_every)->default_value(0), "dev evaluation every N steps (and at each epoch's end)")
      ("save-every", po::value(&o.save_every)->default_value(0), "a resumable checkpoint every N steps")
      ("log-every", po::value(&o.log_every)->default_value(10), "progress line on stderr every N steps")
      ("stop-after", po::value(&o.stop_after)->default_value(0),
       "checkpoint and stop (exit 75) after N steps of this invocation, as on SIGUSR1; --resume continues")
      ("resume", po::bool_switch(&o.resume), "continue the run in --out: finished seeds are kept, a stopped one resumes")
      ("frozen", po::bool_switch(&o.frozen), "pos, parse, nli: the encoder (ELMo or a transformer) runs without gradients "
       "and only the head learns (what these tasks always do)")
      ("layer", po::value(&o.layer)->default_value(-1),
       "pos, parse, nli: the one layer of the frozen encoder the head reads (0: ELMo's character layer or the "
       "embeddings); default: a learned scalar mix of every layer")
      ("mlp-size", po::value(&o.mlp_size)->default_value(0),
       "pos: the MLP's hidden layer (default 256); nli: ESIM's hidden size (default 300)")
      ("arc-size", po::value(&o.arc_size)->default_value(500), "parse: the arc MLPs' size")
      ("label-size", po::value(&o.label_size)->default_value(100), "parse: the label MLPs' size");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  fill_common(cli, device, o);
  if (o.out.empty()) o.out = cli.common().output;
  if (o.task.empty()) throw UsageError("--task is required");
  check_tag_scheme(o.tag_scheme);
  if (o.task == "qa") {
    // run_qa's window and XTREME's learning rate for question answering.
    const po::variables_map& given = cli.values();
    if (given["max-len"].defaulted()) o.max_len = 384;
    if (given["lr"].defaulted()) o.optimizer.lr = 3e-5;
  }
  for (auto [name, value] : {std::pair<const char*, int64_t>{"--doc-stride", o.qa_windows.doc_stride},
                             {"--max-query-len", o.qa_windows.max_query_len},
                             {"--max-answer-len", o.qa_decode.max_answer_len},
                             {"--n-best", o.qa_decode.n_best}})
    if (value < 1) throw UsageError(std::string(name) + " must be ≥ 1");
  if (o.task == "pos" || o.task == "parse") {
    // A head on frozen features: Dozat & Manning's optimiser settings where none were given
    // (Adam, lr 2e-3, β2 0.9, clip 5), dropout 0.33 (the default of --dropout -1).
    const po::variables_map& given = cli.values();
    if (given["lr"].defaulted()) o.optimizer.lr = 2e-3;
    if (given["clip"].defaulted()) o.optimizer.max_grad_norm = 5.0;
    o.optimizer.beta2 = 0.9;
  } else if (o.task == "nli") {
    // ESIM as allennlp-models' esim_elmo.jsonnet trains it: Adam, lr 4e-4, clip 10, dropout 0.5.
    const po::variables_map& given = cli.values();
    if (given["lr"].defaulted()) o.optimizer.lr = 4e-4;
    if (given["clip"].defaulted()) o.optimizer.max_grad_norm = 10.0;
    if (o.dropout < 0) o.dropout = 0.5f;
  }
  if (o.task == "pos" || o.task == "parse" || o.task == "nli") {
    for (auto [name, value] : {std::pair<const char*, int64_t>{"--mlp-size", o.mlp_size == 0 ? 1 : o.mlp_size},
                               {"--arc-size", o.arc_size},
                               {"--label-size", o.label_size}})
      if (value < 1) throw UsageError(std::string(name) + " must be ≥ 1");
    if (o.layer < -1) throw UsageError("--layer must be a layer number (≥ 0), or -1 for the mix");
  }
  o.seeds = parse_seeds(seeds);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  require_range("--lr", o.optimizer.lr, 0, kInf, true);
  require_range("--warmup-ratio", o.warmup_ratio, 0, 1);
  require_range("--weight-decay", o.optimizer.weight_decay, 0, kInf);
  require_range("--adam-eps", o.optimizer.eps, 0, kInf, true);
  require_range("--clip", o.optimizer.max_grad_norm, 0, kInf);
  if (o.dropout >= 0) require_range("--dropout", o.dropout, 0, 1, false, true);
  for (auto [name, value] : {std::pair<const char*, int64_t>{"--eval-every", o.eval_every},
                             {"--save-every", o.save_every},
                             {"--log-every", o.log_every},
                             {"--stop-after", o.stop_after}})
    if (value < 0) throw UsageError(std::string(name) + " must be ≥ 0");
  return train::run_finetune(o);
}

int evaluate_main(int argc, char** argv) {
  ToolCli cli("finetune evaluate", "finetune evaluate --model RUN_DIR|MODEL_DIR --test LANG=FILE ... [-o PREFIX]",
              "Scores fine-tuned models on test files per language: every seed's best model of a run directory (mean\n"
              "and std over seeds, the zero-shot average, English), or one model; writes PREFIX.tsv and PREFIX.json\n"
              "(default MODEL/evaluation).");
  train::FinetuneEvaluateOptions o;
  std::string device;
  add_common(cli, o, device);
  // clang-format off
  cli.add()
      ("model", po::value(&o.model), "a finetune run directory, or one model directory (RUN_DIR/seed-S/best)")
      ("test", po::value(&o.tests)->composing(), "LANG=FILE, repeatable")
      ("tag-scheme", po::value(&o.tag_scheme), "token: seqeval's strict mode in this scheme (see finetune --help)");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  fill_common(cli, device, o);
  if (o.model.empty()) throw UsageError("--model is required");
  check_tag_scheme(o.tag_scheme);
  o.output = cli.common().output;
  return train::run_finetune_evaluate(o);
}

int predict_main(int argc, char** argv) {
  ToolCli cli(
      "finetune predict", "finetune predict --model MODEL_DIR [-i] FILE -o OUTPUT",
      "Labels a file with a fine-tuned model: the token task writes the words with their predicted tags (PAN-X\n"
      "lines when the words have a language, else WORD<TAB>TAG), qa one JSON object {id: answer} (what the SQuAD\n"
      "and MLQA evaluation scripts read), the others one JSON line per example.");
  train::FinetunePredictOptions o;
  std::string device;
  add_common(cli, o, device);
  cli.allow_input_option("the file to label: PATH or LANG=PATH");
  cli.add()("model", po::value(&o.model), "a fine-tuned model directory (RUN_DIR/seed-S/best)");
  if (!cli.parse(argc, argv)) return 0;
  fill_common(cli, device, o, true);
  if (o.model.empty()) throw UsageError("--model is required");
  if (cli.common().inputs.size() != 1) throw UsageError("give one file to label");
  o.input = cli.common().inputs.front();
  o.output = cli.common().output;
  return train::run_finetune_predict(o);
}

int retrieve_main(int argc, char** argv) {
  ToolCli cli("finetune retrieve", "finetune retrieve --model MODEL_DIR --pairs LANG=XX_FILE,EN_FILE ... -o PREFIX",
              "Parallel sentence retrieval (Tatoeba) with no training: each English sentence finds its nearest\n"
              "neighbour by cosine among the other language's sentence embeddings (the mean of one layer, L2-\n"
              "normalised); accuracy per language and in the reverse direction, in PREFIX.tsv and PREFIX.json.");
  train::frozen::RetrieveOptions o;
  std::string device;
  add_common(cli, o, device);
  // clang-format off
  cli.add()
      ("model", po::value(&o.model), "an ELMo or a transformer model directory")
      ("pairs", po::value(&o.pairs)->composing(),
       "LANG=XX_FILE,EN_FILE, repeatable: line i of XX_FILE translates line i of EN_FILE")
      ("layer", po::value(&o.layer)->default_value(-1),
       "the layer pooled (0: embeddings or ELMo's character layer); default: L/2 + 1 of a transformer's L "
       "(XTREME's), ELMo's top layer")
      ("whitespace", po::bool_switch(&o.whitespace), "ELMo: words split at white space, not by ICU word breaks");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  fill_common(cli, device, o);
  o.output = cli.common().output;
  if (o.layer < -1) throw UsageError("--layer must be a layer number (≥ 0)");
  return train::frozen::run_retrieve(o);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "evaluate") == 0)
    return run_tool("finetune evaluate", [&] { return evaluate_main(argc - 1, argv + 1); });
  if (argc > 1 && std::strcmp(argv[1], "retrieve") == 0)
    return run_tool("finetune retrieve", [&] { return retrieve_main(argc - 1, argv + 1); });
  if (argc > 1 && std::strcmp(argv[1], "predict") == 0)
    return run_tool("finetune predict", [&] { return predict_main(argc - 1, argv + 1); });
  return run_tool("finetune", [&] { return train_main(argc, argv); });
}
