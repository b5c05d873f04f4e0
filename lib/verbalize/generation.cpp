#include "verbalize/generation.hpp"

#include <chrono>
#include <cmath>

#include "core/json_writer.hpp"
#include "core/log.hpp"
#include "core/output_stream.hpp"
#include "gen/annotated_text.hpp"
#include "nn/cpu_precision.hpp"
#include "nn/threads.hpp"
#include "verbalize/verbalizer_model.hpp"
#include "verbalize/verbalizer_records.hpp"

namespace kglm::verbalize {

namespace {

// KELM's JSON line of a generated sentence, into `line`: the input's id and subject (when it has
// them), triples, serialized_triples, gen_sentence, and its reference sentence (when it has one).
void kelm_record(const GenerationInput& in, const std::string& sentence, std::string& line) {
  line.clear();
  line += '{';
  if (!in.id.empty()) {
    line += "\"id\":";
    append_json_string(line, in.id);
    line += ',';
  }
  if (!in.subject.empty()) {
    line += "\"subject\":";
    append_json_string(line, in.subject);
    line += ',';
  }
  if (!in.triples_json.empty()) line += "\"triples\":" + in.triples_json + ",";
  line += "\"serialized_triples\":";
  append_json_string(line, in.serialized);
  line += ",\"gen_sentence\":";
  append_json_string(line, sentence);
  if (!in.reference.empty()) {
    line += ",\"sentence\":";
    append_json_string(line, in.reference);
  }
  line += "}\n";
}

}  // namespace

Stats generate_sentences(const GenerateOptions& o) {
  if (o.model.empty()) throw UsageError("--model DIR is required");
  if (o.inputs.empty()) throw UsageError("subgraphs or aligned records are required (FILE...)");
  if (o.output.empty()) throw UsageError("-o OUTPUT is required");
  if (o.batch < 1) throw UsageError("--batch must be ≥ 1");
  if (o.batch_tokens < 0) throw UsageError("--batch-tokens must be 0 (off) or a token budget");
  nn::set_compute_threads(static_cast<int>(o.threads));
  nn::require_device(o.device);
  nn::use_precision(o.precision, o.device);
  const auto start = std::chrono::steady_clock::now();
  Verbalizer v = load_verbalizer(o.model, o.device);
  DecodeOptions how = o.decode;
  if (how.max_len == 0) how.max_len = v.max_target_len;
  how.seed = o.seed;
  const int64_t max_source = o.max_source_len > 0 ? o.max_source_len : v.max_source_len;

  ErrorCounter errors(o.max_errors);
  Stats stats;
  // The inputs stream through in batches of --batch inputs, or, with --batch-tokens N, of as many
  // as keep their source tokens within N (batches are packed: the real tokens are their cost):
  // memory holds one batch, whatever the input's size. The output is atomic, so a run refused at the end (too many bad
  // records, nothing usable) leaves none.
  OutputStream out(o.output);  // empty inputs: an empty output
  std::unique_ptr<OutputStream> text_out;
  if (!o.text_output.empty()) text_out = std::make_unique<OutputStream>(o.text_output);
  int64_t truncated = 0, generated_tokens = 0, empty = 0;
  uint64_t done = 0;          // inputs decoded and written: the next one's position, its sampling stream
  double decode_seconds = 0;  // in decode(): the model's work, without loading, tokenizing and writing
  std::string line;
  std::vector<GenerationInput> batch;
  std::vector<std::vector<int32_t>> sources;
  size_t source_tokens = 0;
  uint64_t flushes = 0;
  auto flush = [&] {
    if (batch.empty()) return;
    std::vector<uint64_t> keys;
    for (size_t i = 0; i < batch.size(); ++i) keys.push_back(done + i);  // the record's position: its sampling stream
    const auto decode_start = std::chrono::steady_clock::now();
    const std::vector<std::vector<int32_t>> outputs = decode(*v.model, make_source_batch(sources), how, keys);
    decode_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - decode_start).count();
    for (size_t i = 0; i < batch.size(); ++i) {
      const GenerationInput& in = batch[i];
      const std::vector<int32_t>& tokens = outputs[i];
      generated_tokens += static_cast<int64_t>(tokens.size());
      const std::string sentence = v.tokenizer->decode(tokens);
      if (sentence.empty()) ++empty;
      kelm_record(in, sentence, line);
      out.write(line);
      if (text_out && !sentence.empty()) {
        gen::AnnotatedText text;
        text.append(sentence);
        line.clear();
        std::string extra = ",\"id\":";
        append_json_string(extra, in.id.empty() ? std::to_string(in.line) : in.id);
        text.append_json(line, o.lang, extra);
        text_out->write(line);
      }
    }
    done += batch.size();
    batch.clear();
    sources.clear();
    source_tokens = 0;
    if (!o.quiet && ++flushes % 50 == 0) log_info(std::to_string(done) + " sentences");
  };
  for (const std::string& path : o.inputs)
    for_each_generation_input(path, errors, stats, [&](GenerationInput&& in) {
      std::vector<int32_t> source = encode_text(*v.tokenizer, in.serialized, max_source, truncated);
      if (o.batch_tokens > 0 && !batch.empty() && source_tokens + source.size() > static_cast<size_t>(o.batch_tokens))
        flush();
      source_tokens += source.size();
      sources.push_back(std::move(source));
      batch.push_back(std::move(in));
      if (o.batch_tokens == 0 && static_cast<int64_t>(batch.size()) == o.batch) flush();
    });
  flush();
  if (!o.quiet) log_info(std::to_string(done) + " sentences");
  errors.finish(o.inputs);
  const int64_t skipped = stats.get("skipped_empty_subgraph") + stats.get("skipped_missing_label");
  if (done == 0 && skipped > 0)
    throw Error("nothing to verbalize: all " + std::to_string(skipped) + " records were skipped (see the counts)");
  out.close();
  if (text_out) text_out->close();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stats.set("sentences", static_cast<int64_t>(done));
  stats.set("empty_sentences", empty);
  stats.set("generated_tokens", generated_tokens);
  stats.set("inputs_truncated", truncated);
  stats.set("bad_records", static_cast<int64_t>(errors.count()));
  stats.set("milliseconds", static_cast<int64_t>(1000 * seconds));
  stats.set("decode_milliseconds", std::llround(1000 * decode_seconds));
  if (seconds > 0) stats.set("sentences_per_s", std::llround(static_cast<double>(done) / seconds));
  return stats;
}

}  // namespace kglm::verbalize
