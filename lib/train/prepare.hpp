// pretrain prepare: tokenizes plain text lines or annotated-text JSONL records (man 5
// kglm-annotated) into a token dataset (man 5 kglm-tokens). Records are tokenized in parallel
// batches and written in input order, so the output is the same whatever --threads.
//
// The pretrain main fills PrepareOptions and reports the result like every data tool:
//   train::PrepareOptions o;
//   fill_run_options(cli.common(), batch_mb, o);  // inputs, -o, --threads, --max-errors, --quiet, ...
//   o.tokenizer = ...; o.max_len = ...; o.format = sample::parse_record_format(format); ...
//   report_stats(cli.common(), train::run_prepare(o));  // prints the statistics, writes --stats FILE
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/cli.hpp"
#include "core/shard.hpp"
#include "core/stats.hpp"
#include "sample/corpus.hpp"
#include "tok/tokenizer.hpp"
#include "train/token_dataset.hpp"

namespace kglm::train {

struct PrepareOptions : RunOptions {
  // From RunOptions: inputs (PATH, '-' for stdin, LANG=PATH, or a directory of LANG.* files; each
  // gzip, bzip2, zstd or plain), output (the .h5 file; not '-'), threads, batch_bytes (input per
  // worker task), max_errors (bad records tolerated), seed (recorded in the provenance only),
  // quiet (no progress bar), command_line (provenance).
  std::string tokenizer;  // a SentencePiece .model, a WordPiece vocab.txt or an HF model directory
  // ELMo's word-level dataset: `tokenizer` is an ELMo vocab.txt (pretrain vocab), every word one
  // token (tok/word_vocabulary_tokenizer.hpp); ICU word breaks, or white space with `whitespace`.
  bool words = false, whitespace = false;
  // Tokens per sequence, bos and eos included (>= 3). Longer plain text and generic annotated text are
  // split at word starts; a longer structured record (kept_whole) is dropped whole and counted.
  uint32_t max_len = 512;
  // text: one record per line; jsonl: annotated text; auto: per file, JSONL when its first
  // non-blank line starts with '{'.
  sample::RecordFormat format = sample::RecordFormat::auto_detect;
  // The language of records that name none: plain text without LANG=, JSONL without "lang".
  // LANG=PATH (or a LANG.* file of a directory) overrides both the record's "lang" and this.
  std::string default_lang = "und";
  size_t shards = 1;  // > 1: OUTPUT-00000-of-0000N.h5 …, sequence k in file k mod N
  // A job array's part: the records in a byte share of the inputs (core/line_shard), the
  // part recorded in the file so that `pretrain --data` takes exactly the parts of one run.
  Shard shard;
  std::string shard_run;      // shard_run_identity
  int compression_level = 1;  // deflate level of the HDF5 datasets (0 = none, up to 9)
};

// Tokenizes the inputs into options.output. Bad records (not JSON, no "text", spans that do not fit
// the text, an unknown span kind, a bad "lang") are skipped, counted and reported with file:line;
// Error past options.max_errors, on an unreadable input, or a corrupt compressed stream (no output
// is left then). Statistics: lines, empty_lines, records, annotated_records, bad_records,
// empty_records (no tokens), split_lines, sequences, tokens (stored, with bos/eos), text_tokens,
// unk_tokens, unk_per_million (of text_tokens), spans, languages, sequences.LANG per language,
// records.KIND per generator, records_too_long.KIND and longest_dropped_tokens when structured
// records did not fit (with one warning line saying how many and the longest).
Stats run_prepare(const PrepareOptions& options);

// Whether a record of this kind is kept whole or not at all: its objective reads whole spans (KMLM's
// triples and their masks, the entities and relations of a reasoning cycle, EntityCS's code-switched
// entities), so a piece of it cut off could hold a relation without its entities, or nothing to
// predict. Plain text and generic annotated text are split.
bool kept_whole(SequenceKind kind);

// The building blocks, shared with tests and later data tools.

// A span of an annotated record: UTF-8 byte offsets into the text and its TokenFlag bit.
struct RecordSpan {
  uint64_t begin = 0, end = 0;
  uint8_t flag = 0;
};

// kInEntity, kInRelation, kLinkSlot or kInAnswer for the span kinds of kglm-annotated; 0 otherwise.
uint8_t span_kind_flag(std::string_view kind);

// Why the spans do not fit the text (begin > end, beyond the text, an offset inside a UTF-8
// character), naming the first bad span; "" when they all fit.
std::string check_spans(std::string_view text, std::span<const RecordSpan> spans);

// Where n = word_start.size() tokens are cut into pieces of at most `budget` tokens: the end of
// every piece, the last one n. Each cut is the last word start that keeps the piece within budget;
// a word longer than the budget is cut at the budget.
std::vector<size_t> split_at_word_starts(std::span<const uint8_t> word_start, size_t budget);

// Tokenizes records into sequences; one per worker thread (it keeps scratch buffers).
class SequenceBuilder {
 public:
  SequenceBuilder(const tok::Tokenizer& tokenizer, uint32_t max_len);

  struct Result {
    size_t sequences = 0;  // 0 when the text has no tokens or was too long to keep whole
    size_t text_tokens = 0;
    size_t unk_tokens = 0;
    bool too_long = false;  // a kept_whole record longer than max_len: nothing appended
  };
  // Appends the sequences of text to out: bos, tokens, eos, split at word starts when longer than
  // max_len (a kept_whole kind: nothing appended, too_long set). A token belongs to a span when their byte ranges
  // overlap (a token of no bytes: when its position is inside the span); its span index is the first such span's index
  // in `spans`. The spans must have passed check_spans.
  Result build(std::string_view text, std::span<const RecordSpan> spans, std::string_view lang, SequenceKind kind,
               uint64_t line, uint16_t input, SequenceBatch& out);

 private:
  void mark_spans(std::span<const RecordSpan> spans);

  const tok::Tokenizer& tokenizer_;
  uint32_t budget_;  // tokens per sequence without bos and eos
  tok::Encoding encoding_;
  std::vector<uint8_t> flags_;
  std::vector<int32_t> span_;
};

}  // namespace kglm::train
