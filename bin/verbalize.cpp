// verbalize: KELM's entity subgraphs (verbalize subgraphs), their rendering as text in several
// languages (verbalize render), and TEKGEN's neural verbaliser: a T5 model trained on aligned pairs
// (verbalize train), decoding subgraphs into sentences (verbalize generate), scored against
// references (verbalize evaluate). See man 1 verbalize.
#include <iostream>

#include "core/cli.hpp"
#include "core/error.hpp"
#include "core/output_stream.hpp"
#include "core/shipped_data.hpp"
#include "gen/languages.hpp"
#include "gen/render.hpp"
#include "gen/subgraphs.hpp"
#include "nn/cpu_precision.hpp"
#include "train/pretrain.hpp"
#include "verbalize/evaluation.hpp"
#include "verbalize/generation.hpp"
#include "verbalize/quality_filter.hpp"
#include "verbalize/verbalizer_training.hpp"

using namespace kglm;

namespace {

constexpr const char* kUsage =
    "verbalize subgraphs --kg kg.h5 --cooc cooc.tsv -o subgraphs.jsonl\n"
    "       verbalize render --kg kg.h5 --mode kmlm|linearize|template|pairs --langs L1,... -o out.jsonl "
    "SUBGRAPHS.jsonl...\n"
    "       verbalize train (--config config.json --tokenizer spm.model | --init MODEL_DIR) --out DIR PAIRS.jsonl...\n"
    "       verbalize generate --model DIR [--beams K | --top-k K] -o kelm.jsonl SUBGRAPHS.jsonl...\n"
    "       verbalize evaluate GENERATED.jsonl...\n"
    "       verbalize train-filter --init ENCODER_DIR --out RUN_DIR PAIRS.jsonl...\n"
    "       verbalize filter --model RUN_DIR (--drop-fraction 0.01 | --threshold T) -o kept.jsonl GENERATED.jsonl...";

int subgraphs_main(int argc, char** argv) {
  ToolCli cli("verbalize subgraphs", "verbalize subgraphs --kg kg.h5 --cooc cooc.tsv [options] -o subgraphs.jsonl",
              "KELM's entity subgraphs: every subject's statements in groups of at most --max-size, each grown\n"
              "greedily by relation co-occurrence (kg-align --cooc) from a random start.");
  gen::SubgraphOptions o;
  std::string kinds;
  bool no_qualifiers = false;
  // clang-format off
  cli.add()
      ("kg", po::value(&o.kg)->required(), "the KG store (wd-extract)")
      ("cooc", po::value(&o.cooc)->required()->multitoken(), "relation co-occurrence counts (kg-align --cooc); several add up")
      ("kinds", po::value(&kinds)->default_value("item,quantity,time,string,monolingualtext"),
       "statement kinds to group, comma-separated")
      ("max-size", po::value(&o.max_size)->default_value(5), "statements per subgraph at most")
      ("no-qualifiers", po::bool_switch(&no_qualifiers), "leave the statements' qualifiers out");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_output();
  o.kinds = kg::parse_fact_kinds(kinds);
  o.qualifiers = !no_qualifiers;
  fill_run_options(cli.common(), 1, o);
  report_stats(cli.common(), gen::generate_subgraphs(o));
  return 0;
}

int render_main(int argc, char** argv) {
  ToolCli cli("verbalize render",
              "verbalize render --kg kg.h5 --mode MODE --langs L1,... [options] -o out.jsonl SUBGRAPHS...",
              "Subgraphs as annotated text per language: kmlm ('h [mask] r [mask] t.' per statement), linearize\n"
              "(TEKGEN's 's r1 o1, r2 o2'), template (X-FACTR-format relation templates, kmlm form where none)\n"
              "or pairs (serialized_triples and the template sentence of the statements a template says: the\n"
              "training data of verbalize train).");
  gen::RenderOptions o;
  std::string mode, langs, shard;
  // clang-format off
  cli.add()
      ("kg", po::value(&o.kg)->required(), "the KG store the subgraphs come from (labels)")
      ("mode", po::value(&mode)->default_value("kmlm"), "kmlm, linearize, template or pairs")
      ("langs", po::value(&langs)->default_value("en"), "languages to render, comma-separated, or 'xlmr'")
      ("templates", po::value(&o.templates), "template and pairs modes: DIR with LANG.jsonl relation templates (a relative DIR not found here is looked "
       "up in the shipped data: `templates` names kglm's own)")
      ("inflections", po::value(&o.inflections),
       "template and pairs modes: UniMorph noun tables (DIR/rus, DIR/ell, ...) for case-marked slots ([Y.Gen])")
      ("group-by-subject", po::bool_switch(&o.group_by_subject), "one document per subject and language (KELM)")
      ("split-by-lang", po::value(&o.split_dir), "write DIR/LANG.jsonl per language instead of -o")
      ("shard", po::value(&shard),
       "write part I/N: the subgraphs that begin in bytes [I*S/N, (I+1)*S/N) of the inputs (a compressed file whole), for "
       "verbalize merge");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  if (o.split_dir.empty()) cli.require_output();
  cli.require_inputs();
  if (!shard.empty()) {
    o.shard = parse_shard(shard);
    if (o.split_dir.empty()) require_part_file(cli.common().output);
    std::vector<std::string> inputs = cli.common().inputs;
    inputs.push_back(o.kg);
    o.shard_run = shard_run_identity("verbalize render", cli.result_options({"split-by-lang"}), inputs);
  }
  if (mode == "kmlm")
    o.mode = gen::RenderOptions::Mode::kmlm;
  else if (mode == "linearize")
    o.mode = gen::RenderOptions::Mode::linearize;
  else if (mode == "template")
    o.mode = gen::RenderOptions::Mode::templates;
  else if (mode == "pairs")
    o.mode = gen::RenderOptions::Mode::pairs;
  else
    throw UsageError("--mode must be kmlm, linearize, template or pairs");
  o.langs = gen::parse_language_list(langs);
  o.templates = find_data_path(o.templates, "templates");
  fill_run_options(cli.common(), 1, o);
  report_stats(cli.common(), gen::render_subgraphs(o));
  return 0;
}

// The shared command line's part of a training command's options.
void fill_settings(const CommonOptions& c, const std::string& device, verbalize::RunSettings& o) {
  o.data = c.inputs;
  o.device = nn::parse_device(device);
  o.seed = c.seed;
  o.threads = c.threads;
  o.quiet = c.quiet;
  o.max_errors = c.max_errors;
  o.stats_file = c.stats_file;
}

int train_main(int argc, char** argv) {
  ToolCli cli("verbalize train",
              "verbalize train (--config config.json --tokenizer spm.model | --init MODEL_DIR | --resume DIR)\n"
              "                --out DIR [options] PAIRS.jsonl...",
              "TEKGEN's triple-to-text model: a T5 encoder-decoder fine-tuned with teacher forcing on\n"
              "(serialized_triples, sentence) pairs (kg-align's aligned sentences, verbalize render --mode pairs).\n"
              "The paper's second stage is a second run from the first's model (--init).");
  verbalize::TrainOptions o;
  std::string device = "cpu";
  // clang-format off
  cli.add()
      ("config", po::value(&o.config), "a new model: its T5 config.json (model_type t5 or mt5)")
      ("tokenizer", po::value(&o.tokenizer), "a new model: SentencePiece .model with T5's ids (<pad> 0, </s> 1)")
      ("init", po::value(&o.init), "start from this T5 model directory (stage 2, or a pre-trained T5)")
      ("resume", po::value(&o.resume), "continue the run whose checkpoint is this directory")
      ("out", po::value(&o.out), "the checkpoint directory (a Hugging Face T5 directory, rewritten at every save)")
      ("log", po::value(&o.log), "metrics JSON lines (loss per step, held-out loss)")
      ("tensorboard", po::value(&o.tensorboard),
       "DIR: TensorBoard event files holding every number of the metrics log (a resumed run adds a file)")
      ("eval-data", po::value(&o.eval_data), "held-out pairs (default: --eval-fraction of the training pairs)")
      ("eval-fraction", po::value(&o.eval_fraction)->default_value(0.02), "pairs held out when no --eval-data")
      ("eval-max", po::value(&o.eval_max)->default_value(2000), "held-out pairs at most")
      ("max-source-len", po::value(&o.max_source_len)->default_value(128), "input tokens at most (</s> included)")
      ("max-target-len", po::value(&o.max_target_len)->default_value(128), "sentence tokens at most (</s> included)")
      ("batch", po::value(&o.batch)->default_value(32), "pairs per optimizer step (the global batch)")
      ("steps", po::value(&o.steps)->default_value(1000), "optimizer steps in all")
      ("lr", po::value(&o.optimizer.lr)->default_value(1e-3), "peak learning rate (the paper's 0.001)")
      ("warmup", po::value(&o.optimizer.warmup_steps)->default_value(0), "linear warm-up steps")
      ("weight-decay", po::value(&o.optimizer.weight_decay)->default_value(0.0), "AdamW decoupled weight decay")
      ("clip", po::value(&o.optimizer.max_grad_norm)->default_value(1.0), "clip the global gradient norm (0: off)")
      ("dropout", po::value(&o.dropout)->default_value(-1), "dropout rate (default: the model's dropout_rate)")
      ("eval-every", po::value(&o.eval_every)->default_value(0), "held-out loss every N steps (and at the end)")
      ("save-every", po::value(&o.save_every)->default_value(0), "checkpoint every N steps (and at the end)")
      ("log-every", po::value(&o.log_every)->default_value(10), "progress line every N steps")
      ("stop-after", po::value(&o.stop_after)->default_value(0), "checkpoint and exit 75 after N steps of this run")
      ("device", po::value(&device)->default_value("cpu"), "cpu or cuda (one GPU per rank)");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_inputs();
  const CommonOptions& c = cli.common();
  require_range("--lr", o.optimizer.lr, 0, 1e9, true);
  require_range("--eval-fraction", o.eval_fraction, 0, 1, false, true);
  require_range("--dropout", o.dropout, -1, 1, false, true);
  fill_settings(c, device, o);
  return verbalize::run_train(o);
}

int generate_main(int argc, char** argv) {
  ToolCli cli("verbalize generate", "verbalize generate --model DIR [options] -o kelm.jsonl SUBGRAPHS.jsonl...",
              "Decodes every subgraph (or aligned record) into a sentence with a trained verbaliser: greedy,\n"
              "beam search (--beams K) or top-k sampling (--top-k K, seeded; KELM's corpus: 5, temperature 0.5).\n"
              "Writes KELM's {triples, serialized_triples, gen_sentence} JSON lines in input order.");
  verbalize::GenerateOptions o;
  std::string device = "cpu";
  // clang-format off
  cli.add()
      ("model", po::value(&o.model)->required(), "the verbaliser (verbalize train's --out)")
      ("beams", po::value(&o.decode.beams), "beam search with this many beams")
      ("length-penalty", po::value(&o.decode.length_penalty)->default_value(1.0),
       "beam search: finished sentences ranked by log p / length^this")
      ("top-k", po::value(&o.decode.top_k), "sample from the k most probable tokens (seeded by --seed)")
      ("temperature", po::value(&o.decode.temperature)->default_value(0.5), "sampling temperature")
      ("max-len", po::value(&o.decode.max_len)->default_value(0), "tokens generated at most (0: the model's)")
      ("max-source-len", po::value(&o.max_source_len)->default_value(0), "input tokens at most (0: the model's)")
      ("batch", po::value(&o.batch)->default_value(32), "inputs decoded together")
      ("batch-tokens", po::value(&o.batch_tokens)->default_value(0),
       "decode as many inputs together as keep their source tokens within N, instead of --batch")
      ("text-output", po::value(&o.text_output), "also the sentences as annotated text (for pretrain prepare)")
      ("lang", po::value(&o.lang)->default_value("en"), "the annotated text's language")
      ("device", po::value(&device)->default_value("cpu"), "cpu or cuda")
      ("precision", po::value(&o.precision)->default_value("fp32"), nn::kPrecisionHelp);
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_output();
  cli.require_inputs();
  const bool beams = cli.values().count("beams") > 0, top_k = cli.values().count("top-k") > 0;
  if (beams && top_k) throw UsageError("--beams and --top-k: beam search or sampling, not both");
  o.decode.method = beams   ? verbalize::DecodeMethod::Beam
                    : top_k ? verbalize::DecodeMethod::Sample
                            : verbalize::DecodeMethod::Greedy;
  require_range("--temperature", o.decode.temperature, 0, 1e6, true);
  o.device = nn::parse_device(device);
  fill_run_options(cli.common(), 1, o);
  report_stats(cli.common(), verbalize::generate_sentences(o));
  return 0;
}

int evaluate_main(int argc, char** argv) {
  ToolCli cli("verbalize evaluate", "verbalize evaluate [-o scores.json] GENERATED.jsonl...",
              "BLEU and chrF of generated sentences against the records' reference \"sentence\", beside the\n"
              "baseline that copies serialized_triples (the model's input) as the sentence.");
  if (!cli.parse(argc, argv)) return 0;
  cli.require_inputs();
  const CommonOptions& c = cli.common();
  ErrorCounter errors(c.max_errors);
  const verbalize::EvaluationScores s = verbalize::evaluate_generated(c.inputs, errors);
  // Empty inputs: an empty report.
  const std::string json = s.sentences + s.without_reference > 0 ? s.to_json() + "\n" : std::string();
  if (!c.output.empty()) {
    OutputStream out(c.output);
    out.write(json);
    out.close();
  }
  if (!c.quiet) std::cerr << json;
  Stats stats;
  stats.set("sentences", s.sentences);
  stats.set("without_reference", s.without_reference);
  stats.set("bad_records", static_cast<int64_t>(errors.count()));
  report_stats(c, stats);
  return 0;
}

int train_filter_main(int argc, char** argv) {
  ToolCli cli("verbalize train-filter",
              "verbalize train-filter --init ENCODER_DIR --out RUN_DIR [options] PAIRS.jsonl...",
              "KELM's semantic-quality filter: finetune's sequence task on \"[CLS] triples [SEP] sentence\", the\n"
              "aligned pairs as positives, the triples with an object replaced and another pair's sentence as\n"
              "negatives. Reports the held-out AUC of true pairs against corrupted ones (RUN_DIR/filter.json).");
  verbalize::FilterTrainOptions o;
  std::string device = "cpu";
  // clang-format off
  cli.add()
      ("init", po::value(&o.init)->required(), "the encoder to fine-tune (XLM-R or BERT model directory)")
      ("out", po::value(&o.out)->required(), "the run directory (seed-S/best is the filter)")
      ("held-out", po::value(&o.held_out)->default_value(0.1), "share of the pairs held out for the AUC")
      ("epochs", po::value(&o.epochs)->default_value(2), "passes over the training examples")
      ("batch", po::value(&o.batch)->default_value(32), "examples per step")
      ("max-len", po::value(&o.max_len)->default_value(128), "tokens per example at most")
      ("lr", po::value(&o.lr)->default_value(5e-5), "peak learning rate")
      ("device", po::value(&device)->default_value("cpu"), "cpu or cuda");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_inputs();
  const CommonOptions& c = cli.common();
  require_range("--held-out", o.held_out, 0, 1, true, true);
  fill_settings(c, device, o);
  return verbalize::run_filter_train(o);
}

int filter_main(int argc, char** argv) {
  ToolCli cli("verbalize filter", "verbalize filter --model RUN_DIR (--drop-fraction F | --threshold T) -o OUT GEN...",
              "Scores generated sentences with the quality filter (verbalize train-filter), adds \"score\" and keeps\n"
              "those at or above --threshold, or all but the lowest --drop-fraction (KELM: 0.01), in input order.");
  verbalize::FilterOptions o;
  std::string device = "cpu";
  // clang-format off
  cli.add()
      ("model", po::value(&o.model)->required(), "the filter: a run directory (its seed-*/best) or a model directory")
      ("threshold", po::value(&o.threshold)->default_value(-1), "keep the sentences scored at least this")
      ("drop-fraction", po::value(&o.drop_fraction)->default_value(-1), "drop this share of the lowest scores")
      ("batch", po::value(&o.batch)->default_value(64), "sentences scored together")
      ("device", po::value(&device)->default_value("cpu"), "cpu or cuda");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_output();
  cli.require_inputs();
  const CommonOptions& c = cli.common();
  if (o.drop_fraction >= 0) require_range("--drop-fraction", o.drop_fraction, 0, 1, false, true);
  if (o.threshold >= 0) require_range("--threshold", o.threshold, 0, 1);
  o.inputs = c.inputs;
  o.output = c.output;
  o.device = nn::parse_device(device);
  o.threads = c.threads;
  o.quiet = c.quiet;
  o.max_errors = c.max_errors;
  report_stats(c, verbalize::run_filter(o));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_tool("verbalize", [&] {
    std::string command = argc > 1 ? argv[1] : "";
    if (command == "subgraphs") return subgraphs_main(argc - 1, argv + 1);
    if (command == "render") return render_main(argc - 1, argv + 1);
    if (command == "merge") return merge_parts_command("verbalize render", argc - 1, argv + 1);
    if (command == "train") return train_main(argc - 1, argv + 1);
    if (command == "generate") return generate_main(argc - 1, argv + 1);
    if (command == "evaluate") return evaluate_main(argc - 1, argv + 1);
    if (command == "train-filter") return train_filter_main(argc - 1, argv + 1);
    if (command == "filter") return filter_main(argc - 1, argv + 1);
    if (command == "--help" || command == "-h") {
      std::cout << "Usage: " << kUsage
                << "\nSee verbalize COMMAND --help (subgraphs, render, train, generate, evaluate, train-filter, "
                   "filter), man 1 verbalize.\n";
      return 0;
    }
    if (command == "--version") {
      std::cout << "verbalize (kglm) " << kglm_version() << "\n";
      return 0;
    }
    throw UsageError(
        "expected a command: subgraphs, render, train, generate, evaluate, train-filter or filter\nusage: " +
        std::string(kUsage));
  });
}
