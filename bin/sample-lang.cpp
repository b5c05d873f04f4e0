// sample-lang: exponent-smoothed language sampling (q_i ∝ p_i^α) or truncation to the smallest
// language, for multilingual corpora. See man 1 sample-lang.
#include "core/cli.hpp"
#include "core/error.hpp"
#include "sample/sample_lang.hpp"

using namespace kglm;

int main(int argc, char** argv) {
  return run_tool("sample-lang", [&] {
    ToolCli cli(
        "sample-lang",
        "sample-lang [--alpha A | --truncate] [--total N | --keep-smallest] (-o OUT | --split-by-lang DIR | --plan)\n"
        "                   --input LANG=PATH... | --input DIR | --input STREAM.jsonl",
        "Rebalances a multilingual corpus: language i of size n_i (p_i = n_i/Σn) gets the share q_i ∝ p_i^α,\n"
        "large languages are down-sampled without replacement, small ones up-sampled by whole passes plus a\n"
        "seeded selection; the result is one shuffled stream or one file per language.");
    sample::SampleLangOptions o;
    std::string unit, format;
    uint64_t total = 0, memory_mb = 0;
    bool no_shuffle = false;
    cli.allow_input_option(
        "LANG=PATH, a directory of LANG.* files, or a JSONL stream with a language field (repeatable; "
        "positional arguments too)");
    // clang-format off
    cli.add()
        ("unit", po::value(&unit)->default_value("lines"), "size unit: lines, tokens or bytes")
        ("alpha,a", po::value(&o.plan.alpha)->default_value(1.0), "smoothing exponent: q_i ∝ p_i^alpha")
        ("truncate", po::bool_switch(&o.plan.truncate), "cut every language to the size of the smallest")
        ("total", po::value(&total), "scale: N units in all (default: the input's total)")
        ("keep-smallest", po::bool_switch(&o.plan.keep_smallest),
         "scale so that the smallest language is kept whole")
        ("plan", po::bool_switch(&o.plan_only), "print the plan table (to -o or stdout) and stop")
        ("write-plan", po::value(&o.write_plan), "also write the plan table to FILE")
        ("counts", po::value(&o.counts), "language sizes from FILE (a --plan table) instead of a counting pass")
        ("split-by-lang", po::value(&o.split_dir), "write DIR/LANG<suffix of its input> per language")
        ("no-shuffle", po::bool_switch(&no_shuffle), "keep input order (copies of a record stay adjacent)")
        ("memory-mb", po::value(&memory_mb)->default_value(512), "memory for the shuffle buffer, in MB")
        ("tmp-dir", po::value(&o.tmp_dir), "temporary files (shuffle runs, spilled stdin); default: beside the output")
        ("format", po::value(&format)->default_value("auto"), "records: auto, text or jsonl")
        ("lang-field", po::value(&o.scan.lang_field)->default_value("lang"), "JSONL field with the language")
        ("text-field", po::value(&o.scan.text_field)->default_value("text"), "JSONL field whose words are the tokens")
        ("token-field", po::value(&o.scan.token_field), "JSONL integer field holding the token count")
        ("batch-mb", po::value<size_t>()->default_value(4), "input per worker task, in MB");
    // clang-format on
    if (!cli.parse(argc, argv)) return 0;
    fill_run_options(cli.common(), cli.values()["batch-mb"].as<size_t>(), o);
    if (o.inputs.empty()) throw UsageError("no inputs: give --input LANG=PATH, a directory or a JSONL stream");
    if (cli.values().count("total")) o.plan.total = total;
    if (o.plan.truncate && cli.values()["alpha"].defaulted() == false)
      throw UsageError("--truncate and --alpha are two different rules");
    if (memory_mb == 0) throw UsageError("--memory-mb must be at least 1");
    o.memory_bytes = static_cast<size_t>(memory_mb) << 20;
    o.shuffle = !no_shuffle;
    o.scan.unit = sample::parse_size_unit(unit);
    o.scan.format = sample::parse_record_format(format);
    o.scan.threads = o.threads;
    o.scan.batch_bytes = o.batch_bytes;
    report_stats(cli.common(), sample::sample_languages(o));
    return 0;
  });
}
