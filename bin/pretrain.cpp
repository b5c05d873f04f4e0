// pretrain: masked-language-model pre-training of an XLM-R / BERT encoder (CPU or CUDA), and
// `pretrain prepare`, which tokenizes text into the HDF5 token dataset it trains on.
// See man 1 pretrain, man 5 kglm-tokens and man 5 kglm-checkpoint.
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/cli.hpp"
#include "core/error.hpp"
#include "core/shipped_data.hpp"
#include "core/stats.hpp"
#include "dist/comm_bench.hpp"
#include "nn/cpu_precision.hpp"
#include "train/mask_dump.hpp"
#include "train/objectives/objective_table.hpp"
#include "train/prepare.hpp"
#include "train/pretrain.hpp"
#include "train/sentence_embeddings.hpp"
#include "train/word_vocabulary.hpp"

using namespace kglm;

namespace {

int prepare_main(int argc, char** argv) {
  ToolCli cli("pretrain prepare",
              "pretrain prepare --tokenizer MODEL_OR_DIR | --words --vocab vocab.txt [--max-len N] -o data.h5 INPUT...",
              "Tokenizes plain text lines or annotated-text JSONL into a token dataset (HDF5): ids, per-sequence\n"
              "offsets, per-token word-start and span flags, language. Lines longer than --max-len are split at word\n"
              "starts.");
  train::PrepareOptions o;
  std::string format;
  cli.allow_input_option("PATH, LANG=PATH or a directory of LANG.* files (repeatable; positional arguments too)");
  // clang-format off
  cli.add()
      ("tokenizer", po::value(&o.tokenizer),
       "SentencePiece .model (XLM-R ids), WordPiece vocab.txt, or a Hugging Face model directory")
      ("words", po::bool_switch(&o.words), "ELMo's word-level dataset: one token a word, ids of --vocab")
      ("vocab", po::value<std::string>(), "with --words: the vocab.txt of pretrain vocab")
      ("whitespace", po::bool_switch(&o.whitespace), "with --words: words are whitespace-separated (pre-tokenised)")
      ("max-len", po::value(&o.max_len)->default_value(512), "tokens per sequence, <s> and </s> included")
      ("format", po::value(&format)->default_value("auto"), "records: auto, text or jsonl (annotated text)")
      ("lang", po::value(&o.default_lang)->default_value("und"), "language of records that name none")
      ("compression", po::value(&o.compression_level)->default_value(1), "HDF5 deflate level, 0-9")
      ("shards", po::value(&o.shards)->default_value(1),
       "write N files OUTPUT-00000-of-0000N.h5 …, sequence k in file k mod N (one per rank or node to read)")
      ("shard", po::value<std::string>(),
       "write part I/N of a job array: the records that begin in bytes [I*S/N, (I+1)*S/N) of the inputs (a compressed file whole); "
       "pretrain --data reads the N parts as one dataset")
      ("batch-mb", po::value<size_t>()->default_value(4), "input per worker task, in MB");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_output();
  fill_run_options(cli.common(), cli.values()["batch-mb"].as<size_t>(), o);
  o.command_line = "pretrain " + o.command_line;  // argv[0] here is "prepare"
  if (o.inputs.empty()) throw UsageError("no inputs");
  if (o.words) {
    if (!cli.values().count("vocab") || !o.tokenizer.empty())
      throw UsageError("--words takes --vocab vocab.txt (pretrain vocab) instead of --tokenizer");
    o.tokenizer = cli.values()["vocab"].as<std::string>();
  } else if (cli.values().count("vocab") || o.whitespace) {
    throw UsageError("--vocab and --whitespace go with --words");
  }
  if (o.tokenizer.empty()) throw UsageError("--tokenizer is required");
  if (o.max_len < 3) throw UsageError("--max-len must be at least 3");
  o.format = sample::parse_record_format(format);
  if (cli.values().count("shard")) {
    o.shard = parse_shard(cli.values()["shard"].as<std::string>());
    std::vector<std::string> inputs{o.tokenizer};
    for (const sample::CorpusSource& source : sample::resolve_sources(o.inputs)) inputs.push_back(source.path);
    o.shard_run = shard_run_identity("pretrain prepare", cli.result_options(), inputs);
  }
  report_stats(cli.common(), train::run_prepare(o));
  return 0;
}

int vocab_main(int argc, char** argv) {
  ToolCli cli("pretrain vocab", "pretrain vocab [--whitespace] [--max-words N] [--counts FILE] -o vocab.txt INPUT...",
              "Counts the words of text corpora (one sentence or paragraph a line; LANG=PATH, a directory of LANG.*\n"
              "files as sample-lang writes them, or a JSONL stream with \"lang\" and \"text\") and writes an ELMo\n"
              "vocabulary: <S>, </S>, <UNK>, then the words by falling frequency. Words are ICU word-break segments\n"
              "(each language's rules), or with --whitespace the tokens of pre-tokenised text.");
  train::VocabularyOptions o;
  cli.allow_input_option("LANG=PATH, a directory of LANG.* files, or a JSONL stream (repeatable; positional too)");
  // clang-format off
  cli.add()
      ("whitespace", po::bool_switch(&o.whitespace), "split on white space (pre-tokenised text, e.g. UDPipe's)")
      ("max-words", po::value(&o.max_words)->default_value(0), "keep the N most frequent words (0: all)")
      ("min-count", po::value(&o.min_count)->default_value(1), "leave out words seen fewer times")
      ("counts", po::value(&o.counts), "also write a TSV of each kept word's count, in total and per language")
      ("batch-mb", po::value<size_t>()->default_value(4), "input per worker task, in MB");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_output();
  fill_run_options(cli.common(), cli.values()["batch-mb"].as<size_t>(), o);
  o.command_line = "pretrain " + o.command_line;
  if (o.inputs.empty()) throw UsageError("no inputs");
  report_stats(cli.common(), train::build_word_vocabulary(o));
  return 0;
}

int embed_main(int argc, char** argv) {
  ToolCli cli("pretrain embed",
              "pretrain embed --model DIR [--pool mean|cls|max] [--layer L] [--normalize] -o embeddings.h5 TEXT...\n"
              "       pretrain embed --model ELMO_DIR [--layers all|average|top] -o vectors.hdf5 SENTENCES...",
              "Sentence embeddings of text files (one sentence a line) from an encoder: a kglm checkpoint, a\n"
              "transformers BERT / XLM-R directory or a sentence-transformers model (all-MiniLM-L6-v2). Each line is\n"
              "tokenised between the special tokens, one layer's states are pooled and optionally L2-normalised;\n"
              "row i of the HDF5 dataset \"embeddings\" [lines, hidden] belongs to line i. An ELMo model directory\n"
              "(options.json + weights) gives the word vectors of whitespace-separated sentences in the layout of\n"
              "AllenNLP's elmo command: dataset \"<line>\" [layers, words, dim], and \"sentence_to_index\".");
  train::EmbedOptions o;
  std::string pool, device;
  cli.allow_input_option("text file, one sentence a line (repeatable; positional arguments too)");
  // clang-format off
  cli.add()
      ("model", po::value(&o.model), "the encoder's model directory")
      ("pool", po::value(&pool)->default_value("mean"),
       "mean (over the tokens, special ones included: sentence-transformers' mean pooling), cls or max")
      ("layer", po::value(&o.layer)->default_value(-1), "0: the embeddings' output, L: layer L's (default: the last)")
      ("normalize", po::bool_switch(&o.normalize), "L2-normalise each embedding (sentence-transformers' Normalize)")
      ("max-len", po::value(&o.max_len)->default_value(0),
       "tokens per sentence with the special ones (default: sentence_bert_config.json's max_seq_length, else the "
       "model's positions); longer sentences are truncated")
      ("layers", po::value(&o.elmo_layers)->default_value("all"),
       "an ELMo model: all (the character layer and each LSTM layer), average (their mean) or top (the last)")
      ("batch", po::value(&o.batch)->default_value(64), "sentences run together")
      ("device", po::value(&device)->default_value("cpu"), "cpu, or cuda (the process's current GPU)")
      ("precision", po::value(&o.precision)->default_value("fp32"), nn::kPrecisionHelp);
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_output();
  if (o.model.empty()) throw UsageError("--model is required");
  const CommonOptions& c = cli.common();
  o.inputs = c.inputs;
  if (o.inputs.empty()) throw UsageError("no inputs");
  o.output = c.output;
  o.pooling = train::parse_sentence_pooling(pool);
  o.device = nn::parse_device(device);
  o.threads = c.threads;
  o.quiet = c.quiet;
  o.command_line = "pretrain " + c.command_line;
  report_stats(c, train::run_embed(o));
  return 0;
}

// The --objective values (repeatable, each a comma list) as one list; checks every name now, so
// that a typo is a usage error before the dataset is read.
std::string objective_spec(const std::vector<std::string>& values, const std::string& entity_objective) {
  std::string spec;
  for (const std::string& v : values) spec += (spec.empty() ? "" : ",") + v;
  train::make_objective_table(entity_objective, spec);
  return spec;
}

// Training and `masks` read one dataset given by --data, never positional inputs.
void require_dataset(const std::string& data, const CommonOptions& c) {
  if (data.empty()) throw UsageError("--data is required");
  if (!c.inputs.empty()) throw UsageError("unexpected argument '" + c.inputs.front() + "' (did you mean --data?)");
}

constexpr const char* kObjectiveHelp =
    "KIND=OBJECTIVE,...: how each kind of sequence is masked (kinds: text, annotated, kmlm, kmlm-parallel,\n"
    "kmlm-alias, reasoning-3, reasoning-4, entitycs; groups reasoning, kmlm-all; objectives: mlm, knowledge,\n"
    "reasoning, wep, pep-mrs, pep-ms, pep-m, and +mlm forms of the last four)";

int masks_main(int argc, char** argv) {
  ToolCli cli(
      "pretrain masks", "pretrain masks --data data.h5 [--objective KIND=OBJ,...] -n N [--seed S] -o masks.jsonl",
      "Writes the masking decisions of the training objectives for N rows of a token dataset (ids, flags,\n"
      "spans, the corrupted input, and what every predicted position became), to check the rules from outside.");
  train::MaskDumpOptions o;
  std::vector<std::string> objectives;
  // clang-format off
  cli.add()
      ("data", po::value(&o.data), "token dataset written by pretrain prepare")
      ("objective", po::value(&objectives)->composing(), kObjectiveHelp)
      ("entity-objective", po::value(&o.entity_objective), "objective of EntityCS sentences (default pep-ms+mlm)")
      ("mask-prob", po::value(&o.masking.probability)->default_value(0.15), "mlm and knowledge: share of tokens to predict")
      ("rows,n", po::value(&o.rows)->default_value(1000), "rows to write (sequence i mod N of the dataset)");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_output();
  const CommonOptions& c = cli.common();
  require_range("--mask-prob", o.masking.probability, 0, 1, true);
  require_dataset(o.data, c);
  o.objectives = objective_spec(objectives, o.entity_objective);
  o.seed = c.seed;
  o.output = c.output;
  report_stats(c, train::run_mask_dump(o));
  return 0;
}

int train_main(int argc, char** argv) {
  ToolCli cli(
      "pretrain",
      "pretrain --data data.h5 (--init HF_DIR | --layers L --hidden H --heads A --ffn F | --resume CKPT)\n"
      "                --batch B --steps S --lr LR --out CKPT_DIR [--log metrics.jsonl]\n"
      "       pretrain --architecture elmo --options options.json --data words.h5 --steps S --out MODEL_DIR\n"
      "       pretrain prepare --tokenizer MODEL_OR_DIR --max-len N -o data.h5 INPUT...\n"
      "       pretrain masks --data data.h5 [--objective KIND=OBJ,...] -n N -o masks.jsonl\n"
      "       mpirun -np N pretrain comm-bench [--device cpu|cuda]",
      "Masked-language-model pre-training of an XLM-R or BERT encoder with each source's objective (whole-word\n"
      "MLM, KMLM knowledge and reasoning, EntityCS WEP/PEP; L = L_MLM + α(L_K + L_R)), with AdamW, linear warm-up and "
      "decay, gradient clipping and accumulation; writes Hugging Face\n"
      "checkpoints that --resume continues bit-identically. With --architecture elmo: ELMo's bidirectional LM\n"
      "(character CNN, projected LSTMs, sampled softmax, Adagrad) as bilm-tf trains it, on a word-level dataset;\n"
      "writes AllenNLP's options.json + weights.hdf5 + vocab.txt.");
  train::PretrainOptions o;
  std::vector<std::string> objectives;
  std::string device, save_dtype;
  // clang-format off
  cli.add()
      ("data", po::value(&o.data),
       "token dataset written by pretrain prepare: a file, a comma-separated list or a quoted glob of files (shards)")
      ("cache-mb", po::value(&o.cache_mb)->default_value(4096),
       "token data held in memory per rank; a larger dataset is read in blocks as training needs them")
      ("device", po::value(&device)->default_value("cpu"), "cpu, or cuda (the process's current GPU)")
      ("precision", po::value(&o.precision),
       "fp32 (default), bf16 or fp16 (dynamic loss scaling): the compute dtype on cuda (bf16: Ampere+); on the cpu "
       "bf16 runs the matrix products in bfloat16 (AVX512_BF16 or AMX CPUs), fp16 is refused; weights, gradients "
       "and AdamW's moments stay fp32 (when resuming, the checkpoint's)")
      ("save-dtype", po::value(&save_dtype)->default_value("f32"),
       "dtype of model.safetensors: f32, bf16 or fp16 (AdamW's state stays f32)")
      ("tokenizer", po::value(&o.tokenizer), "tokenizer whose files go into checkpoints (default: the dataset's)")
      ("init", po::value(&o.init), "start from this Hugging Face model directory")
      ("resume", po::value(&o.resume), "continue the run saved in this checkpoint directory")
      ("out", po::value(&o.out), "checkpoint directory (replaced atomically at each save)")
      ("log", po::value(&o.log), "metrics JSONL: one line per step, one per evaluation")
      ("drawn", po::value(&o.drawn),
       "TSV: how often each sequence was drawn into this run's batches (sequence, input, source_line, held_out, draws)")
      ("tensorboard", po::value(&o.tensorboard),
       "DIR: TensorBoard event files holding every number of the metrics log (a resumed run adds a file)")
      ("architecture", po::value(&o.architecture),
       "xlm-roberta or bert (default: from the tokenizer), or elmo (a word-level dataset; needs --options)")
      ("options", po::value(&o.elmo_options),
       "elmo: bilm-tf's options.json (shipped: elmo/options-small.json, elmo/options-paper.json): the model's sizes, "
       "dropout, windows per batch, unroll steps, negative samples, softmax words, clipping")
      ("layers", po::value(&o.layers)->default_value(4), "encoder layers (random init)")
      ("hidden", po::value(&o.hidden)->default_value(256), "hidden size (random init)")
      ("heads", po::value(&o.heads)->default_value(4), "attention heads (random init)")
      ("ffn", po::value(&o.ffn)->default_value(1024), "feed-forward size (random init)")
      ("max-positions", po::value(&o.max_positions)->default_value(0),
       "position embeddings (0: the dataset's max length, + 2 for XLM-R)")
      ("dropout", po::value(&o.dropout)->default_value(0.1f), "hidden and attention dropout")
      ("batch", po::value(&o.batch), "sequences per micro-batch (default 32; when resuming, the checkpoint's)")
      ("accumulate", po::value(&o.accumulate), "micro-batches per optimizer step (default 1)")
      ("steps", po::value(&o.steps)->default_value(1000), "optimizer steps in all (a resumed run counts from 0)")
      ("lr", po::value(&o.optimizer.lr)->default_value(1e-4), "peak learning rate (elmo: Adagrad's, default 0.2)")
      ("warmup", po::value(&o.optimizer.warmup_steps)->default_value(0), "linear warm-up steps")
      ("decay-steps", po::value(&o.optimizer.total_steps)->default_value(0),
       "the linear decay reaches 0 at this step (default: --steps)")
      ("weight-decay", po::value(&o.optimizer.weight_decay)->default_value(0.01), "AdamW decoupled weight decay")
      ("beta1", po::value(&o.optimizer.beta1)->default_value(0.9), "AdamW β1")
      ("beta2", po::value(&o.optimizer.beta2)->default_value(0.999), "AdamW β2")
      ("adam-eps", po::value(&o.optimizer.eps)->default_value(1e-8), "AdamW ε")
      ("clip", po::value(&o.optimizer.max_grad_norm)->default_value(1.0),
       "clip the global gradient norm (0: off; elmo: the options' all_clip_norm_val)")
      ("mask-prob", po::value(&o.masking.probability)->default_value(0.15),
       "mlm and knowledge: share of tokens to predict")
      ("objective", po::value(&objectives)->composing(), kObjectiveHelp)
      ("entity-objective", po::value(&o.entity_objective),
       "objective of EntityCS sentences: wep, pep-mrs, pep-ms, pep-m, or one with +mlm (default pep-ms+mlm)")
      ("kmlm-alpha", po::value(&o.kmlm_alpha), "α of KMLM's L = L_MLM + α(L_K + L_R) (default 0.3)")
      ("train-layers", po::value(&o.train_layers),
       "all (default), last:K (the embeddings, the last K layers and the MLM head) or last:K,frozen-embeddings")
      ("lang-alpha", po::value(&o.lang_alpha)->default_value(-1),
       "one language per batch with q ∝ p^alpha (negative: mixed batches)")
      ("eval-fraction", po::value(&o.eval_fraction)->default_value(0.01), "held-out share of the sequences")
      ("eval-max", po::value(&o.eval_max)->default_value(1000), "at most this many held-out sequences")
      ("eval-every", po::value(&o.eval_every)->default_value(0), "held-out perplexity every N steps (0: at the end)")
      ("save-every", po::value(&o.save_every)->default_value(0), "checkpoint every N steps (0: at the end)")
      ("log-every", po::value(&o.log_every)->default_value(10), "progress line on stderr every N steps")
      ("bucket-mb", po::value(&o.bucket_mb)->default_value(25),
       "MPI ranks: gradients are summed across ranks in buckets of this many MB, during the backward pass")
      ("zero", po::value(&o.zero)->default_value(0),
       "1: ZeRO stage 1, AdamW's moments sharded across the MPI ranks (checkpoints hold them whole)");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  const CommonOptions& c = cli.common();
  o.seed = c.seed;
  o.seed_given = cli.values().count("seed") && !cli.values()["seed"].defaulted();
  if (cli.values().count("batch") && o.batch < 1) throw UsageError("--batch must be at least 1");
  constexpr double kInf = std::numeric_limits<double>::infinity();
  require_range("--lr", o.optimizer.lr, 0, kInf, true);
  require_range("--weight-decay", o.optimizer.weight_decay, 0, kInf);
  require_range("--beta1", o.optimizer.beta1, 0, 1, false, true);
  require_range("--beta2", o.optimizer.beta2, 0, 1, false, true);
  require_range("--adam-eps", o.optimizer.eps, 0, kInf, true);
  require_range("--clip", o.optimizer.max_grad_norm, 0, kInf);
  require_range("--mask-prob", o.masking.probability, 0, 1, true);
  if (cli.values().count("kmlm-alpha")) require_range("--kmlm-alpha", o.kmlm_alpha, 0, kInf);
  o.objectives = objective_spec(objectives, o.entity_objective);
  require_range("--dropout", o.dropout, 0, 1, false, true);
  require_range("--eval-fraction", o.eval_fraction, 0, 1, false, true);
  if (!o.drawn.empty() && !o.resume.empty())
    throw UsageError("--drawn counts the draws of one run from its start: not with --resume");
  if (!o.drawn.empty() && o.architecture == "elmo")
    throw UsageError("--drawn is for the masked-LM trainer, not --architecture elmo");
  for (auto [name, value] : {std::pair<const char*, int64_t>{"--warmup", o.optimizer.warmup_steps},
                             {"--decay-steps", o.optimizer.total_steps},
                             {"--eval-max", o.eval_max},
                             {"--eval-every", o.eval_every},
                             {"--save-every", o.save_every},
                             {"--log-every", o.log_every},
                             {"--max-positions", o.max_positions}})
    if (value < 0) throw UsageError(std::string(name) + " must be ≥ 0");
  for (auto [name, value] : {std::pair<const char*, int64_t>{"--layers", o.layers},
                             {"--hidden", o.hidden},
                             {"--heads", o.heads},
                             {"--ffn", o.ffn}})
    if (value < 1) throw UsageError(std::string(name) + " must be ≥ 1");
  if (cli.values().count("accumulate") && o.accumulate < 1) throw UsageError("--accumulate must be at least 1");
  require_range("--bucket-mb", o.bucket_mb, 0, kInf, true);
  if (o.architecture == "elmo") {  // Adagrad as bilm-tf: its learning rate, the options' clipping
    if (cli.values()["lr"].defaulted()) o.optimizer.lr = 0.2;
    if (cli.values()["clip"].defaulted()) o.optimizer.max_grad_norm = -1;
    o.elmo_options = find_data_path(o.elmo_options, "options");
  } else if (!o.elmo_options.empty()) {
    throw UsageError("--options is ELMo's options.json: give --architecture elmo with it");
  }
  o.device = nn::parse_device(device);
  if (save_dtype == "f32" || save_dtype == "fp32") {
    o.save_dtype = nn::DType::F32;
  } else if (save_dtype == "bf16") {
    o.save_dtype = nn::DType::BF16;
  } else if (save_dtype == "fp16" || save_dtype == "f16") {
    o.save_dtype = nn::DType::F16;
  } else {
    throw UsageError("--save-dtype must be f32, bf16 or fp16, not '" + save_dtype + "'");
  }
  o.threads = c.threads;
  o.quiet = c.quiet;
  o.stats_file = c.stats_file;
  o.command_line = c.command_line;
  require_dataset(o.data, c);
  if (o.out.empty()) throw UsageError("--out is required");
  return train::run_pretrain(o);
}

}  // namespace

// comm-bench: the communicator's all-reduce on this job's ranks, size by size, and the fitted
// latency and bandwidth (the inputs of the scaling model in pretrain(1)).
int comm_bench_main(int argc, char** argv) {
  ToolCli cli("pretrain comm-bench",
              "mpirun -np N pretrain comm-bench [--device cpu|cuda] [--min-bytes B] [--max-bytes B] [--iterations K]",
              "Times the all-reduce that data-parallel pretrain sums its gradients with (MPI on the host, NCCL on\n"
              "GPUs) at sizes from --min-bytes to --max-bytes (×4 each), on every rank of the job; rank 0 prints the\n"
              "time, algorithm and bus bandwidth of each size and the fitted latency + bytes/bandwidth line.");
  std::string device;
  uint64_t min_bytes = 0, max_bytes = 0;
  int iterations = 0;
  // clang-format off
  cli.add()
      ("device", po::value(&device)->default_value("cpu"), "cpu (MPI) or cuda (NCCL)")
      ("min-bytes", po::value(&min_bytes)->default_value(4096), "smallest buffer")
      ("max-bytes", po::value(&max_bytes)->default_value(uint64_t{256} << 20), "largest buffer")
      ("iterations", po::value(&iterations)->default_value(20), "timed all-reduces per size");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  const std::unique_ptr<dist::Communicator> comm = dist::make_communicator(nn::parse_device(device));
  const std::vector<dist::AllReduceTiming> timings = dist::time_all_reduce(*comm, min_bytes, max_bytes, iterations);
  const dist::AllReduceModel model = dist::fit_all_reduce(timings);
  if (comm->rank() != 0) return 0;
  Stats stats;
  stats.set("ranks", comm->size());
  std::printf("%d ranks (%s), %d iterations\n%12s %12s %12s %12s\n", comm->size(), comm->backend(), iterations, "bytes",
              "time us", "algbw GB/s", "busbw GB/s");
  for (const dist::AllReduceTiming& t : timings) {
    std::printf("%12llu %12.1f %12.3f %12.3f\n", static_cast<unsigned long long>(t.bytes), t.seconds * 1e6,
                t.algorithm_gbps(), t.bus_gbps(comm->size()));
    stats.set("us." + std::to_string(t.bytes), static_cast<int64_t>(t.seconds * 1e6));
  }
  std::printf("fit: %.1f us + bytes / %.3f GB/s\n", model.latency_s * 1e6, model.bytes_per_s / 1e9);
  stats.set("latency_ns", static_cast<int64_t>(model.latency_s * 1e9));
  stats.set("bytes_per_s", static_cast<int64_t>(model.bytes_per_s));
  if (!cli.common().stats_file.empty()) stats.write_json(cli.common().stats_file);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "masks") == 0)
    return run_tool("pretrain masks", [&] { return masks_main(argc - 1, argv + 1); });
  if (argc > 1 && std::strcmp(argv[1], "comm-bench") == 0)
    return run_tool("pretrain comm-bench", [&] { return comm_bench_main(argc - 1, argv + 1); });
  if (argc > 1 && std::strcmp(argv[1], "prepare") == 0)
    return run_tool("pretrain prepare", [&] { return prepare_main(argc - 1, argv + 1); });
  if (argc > 1 && std::strcmp(argv[1], "vocab") == 0)
    return run_tool("pretrain vocab", [&] { return vocab_main(argc - 1, argv + 1); });
  if (argc > 1 && std::strcmp(argv[1], "embed") == 0)
    return run_tool("pretrain embed", [&] { return embed_main(argc - 1, argv + 1); });
  return run_tool("pretrain", [&] { return train_main(argc, argv); });
}
