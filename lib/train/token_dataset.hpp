// The token dataset that `pretrain prepare` writes and pretraining reads (man 5 kglm-tokens): every
// sequence tokenized once, with its special tokens, per-token flags (word start, span kinds) and
// span indices, so that masking objectives can run on ids alone.
//
// HDF5 layout (format "kglm-tokens", version 1); N sequences, T tokens in all:
//   /tokens/ids            int32  [T]    token ids, each in [0, vocab_size)
//   /tokens/flags          uint8  [T]    TokenFlag bits
//   /tokens/span           int32  [T]    the span the token belongs to: its index in the record's
//                                        "spans" list (annotated text), -1 for none
//   /sequences/offsets     uint64 [N+1]  sequence i is tokens [offsets[i], offsets[i+1]); offsets[0]
//                                        = 0, non-decreasing, offsets[N] = T
//   /sequences/lang        uint16 [N]    index into /languages
//   /sequences/kind        uint8  [N]    SequenceKind
//   /sequences/source_line uint64 [N]    1-based line of the record in its input
//   /sequences/input       uint16 [N]    which input: index into the input_names attribute
//   /languages             string table (h5::StringColumnWriter: offsets + blob), in order of first use
// Root attributes: format, format_version, tokenizer_kind ("sentencepiece" | "wordpiece"),
// tokenizer_source, vocab_size, bos_id, eos_id, pad_id, unk_id, mask_id (-1 when the tokenizer has
// none), max_len, and the provenance of every kglm output (h5::write_provenance).
// Every sequence is bos, tokens..., eos with at most max_len tokens.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/provenance.hpp"
#include "h5/h5.hpp"
#include "tok/tokenizer.hpp"
#include "train/token_block_cache.hpp"

namespace kglm::train {

inline constexpr const char* kTokenFormat = "kglm-tokens";
inline constexpr int64_t kTokenFormatVersion = 1;

// Bits of /tokens/flags.
enum TokenFlag : uint8_t {
  kWordStart = 1u << 0,     // the token starts a word (whole-word masking)
  kInEntity = 1u << 1,      // overlaps an entity span
  kInRelation = 1u << 2,    // overlaps a relation span
  kLinkSlot = 1u << 3,      // overlaps a link span (KMLM's [mask] linking slot: no loss)
  kInAnswer = 1u << 4,      // overlaps an answer span
  kSpecialToken = 1u << 5,  // bos, eos, pad, mask or unk id: never a masking target
};

// /sequences/kind: where a sequence comes from, told by pretrain prepare from the record's fields
// (man 5 kglm-annotated), so that each can get its own masking objective.
enum class SequenceKind : uint8_t {
  text = 0,           // a line of plain text
  annotated = 1,      // annotated text of no particular generator (verbalize render, ...)
  kmlm = 2,           // cs-gen kmlm, code-switched ("triple")
  kmlm_parallel = 3,  // cs-gen kmlm --mode parallel ("triple" and "group")
  kmlm_alias = 4,     // cs-gen kmlm --alias, alias-replaced ("alias": true)
  reasoning_3 = 5,    // kg-cycles --text, a 3-cycle ("cycle", "kind": 3)
  reasoning_4 = 6,    // kg-cycles --text, a 4-cycle with a diagonal ("cycle", "kind": 4)
  entitycs = 7,       // cs-gen entitycs ("en_sentence")
};
inline constexpr uint8_t kSequenceKindCount = 8;
const char* sequence_kind_name(SequenceKind kind);  // "text", "annotated", "kmlm", ...

// What the root attributes say about the tokenizer and the sequences.
struct TokenDatasetInfo {
  tok::TokenizerKind tokenizer_kind = tok::TokenizerKind::SentencePiece;
  std::string tokenizer_source;    // absolute, canonical: the dataset may be used from anywhere
  std::string tokenizer_checksum;  // tok::vocabulary_checksum(); empty in datasets of older kglm
  int32_t vocab_size = 0;
  tok::SpecialTokens special;
  uint32_t max_len = 0;
};
TokenDatasetInfo dataset_info(const tok::Tokenizer& tokenizer, uint32_t max_len);

// Sequences in the making, e.g. one worker's share of the input: tokens are pushed one by one and
// end_sequence() closes a sequence. Languages are kept as names here; the writer numbers them.
struct SequenceBatch {
  std::vector<int32_t> ids;
  std::vector<uint8_t> flags;
  std::vector<int32_t> span;
  std::vector<uint64_t> ends;  // per sequence: its end in ids
  std::vector<uint16_t> lang;  // index into languages (of this batch)
  std::vector<uint8_t> kind;
  std::vector<uint64_t> source_line;
  std::vector<uint16_t> input;
  std::vector<std::string> languages;

  size_t size() const { return ends.size(); }
  void push_token(int32_t id, uint8_t flag_bits, int32_t span_index) {
    ids.push_back(id);
    flags.push_back(flag_bits);
    span.push_back(span_index);
  }
  // The tokens pushed since the previous end_sequence() form one sequence.
  void end_sequence(std::string_view language, SequenceKind k, uint64_t line, uint16_t input_index);
  void clear();
};

// Writes NAME.tmp.<pid> and renames it to NAME in finish(); destroyed unfinished, it removes the
// temporary file. Datasets are chunked and compressed as they grow (h5::ColumnWriter).
class TokenDatasetWriter {
 public:
  TokenDatasetWriter(const std::string& path, const TokenDatasetInfo& info, const Provenance& provenance);
  ~TokenDatasetWriter();
  TokenDatasetWriter(const TokenDatasetWriter&) = delete;
  TokenDatasetWriter& operator=(const TokenDatasetWriter&) = delete;

  // Throws Error on a sequence longer than max_len or not framed by bos ... eos, an id outside the
  // vocabulary or an input index beyond the provenance's inputs: bugs of the caller, not bad records.
  void append(const SequenceBatch& batch);
  // Marks the file as shard `shard` of `shards` of one prepare run, `run` (root attributes shard,
  // shards, prepare_run), so that readers can refuse shards of two runs mixed under one name.
  void set_shard(size_t shard, size_t shards, const std::string& run);
  // Marks the file as part `part` of a job array's run `run` (pretrain prepare --shard; root
  // attributes shard_index, shard_count, shard_run), which TokenDataset takes only as a whole set;
  // first_bytes (attribute shard_first_byte): per input, the byte its part begins at, where the
  // part's source_line numbers count from.
  void set_job_part(const Shard& part, const std::string& run, const std::vector<int64_t>& first_bytes);
  // finish() = close() (everything written, the file closed) then commit() (renamed into place).
  void finish();
  void close();
  void commit();

  uint64_t sequences() const { return sequences_; }
  uint64_t tokens() const { return tokens_; }
  const std::vector<std::string>& languages() const { return languages_; }
  const std::vector<uint64_t>& language_sequences() const { return language_sequences_; }  // per language

 private:
  struct Columns;
  uint16_t language_index(const std::string& name);

  TokenDatasetInfo info_;
  Provenance provenance_;
  size_t input_count_;
  AtomicPath atomic_;  // declared before the file: removed only after the file is closed
  h5::File file_;
  std::unique_ptr<Columns> columns_;
  std::vector<std::string> languages_;
  std::map<std::string, uint16_t, std::less<>> language_of_;
  std::vector<uint64_t> language_sequences_;
  int64_t shard_ = 0, shards_ = 1;
  std::string run_;
  Shard job_part_;
  std::string job_run_;
  std::vector<int64_t> job_first_bytes_;
  uint64_t sequences_ = 0;
  uint64_t tokens_ = 0;
};

// One sequence of a dataset: views of its tokens, which it keeps alive (`storage`, a copy out of
// the dataset's block cache), so a Sequence stays valid whatever the dataset reads next.
struct Sequence {
  std::span<const int32_t> ids;
  std::span<const uint8_t> flags;
  std::span<const int32_t> span;
  uint16_t lang = 0;
  SequenceKind kind = SequenceKind::text;
  uint64_t source_line = 0;
  uint16_t input = 0;
  std::shared_ptr<const void> storage;
  size_t size() const { return ids.size(); }
};

struct TokenDatasetOptions {
  // Token blocks kept in memory (TokenBlockCache). A dataset whose tokens fit is read whole, and
  // every token checked, when it is opened; a larger one streams: each rank reads the blocks of
  // the sequences it trains on, and a bad token is reported when its block is read.
  uint64_t cache_bytes = UINT64_MAX;
};

// A token dataset: one file, or several read as one (pretrain prepare --shards, or any datasets of
// the same tokenizer), sequences numbered across them in order. The per-sequence columns (offsets,
// language, kind, source line, input: 21 bytes a sequence) are held in memory; the tokens (9
// bytes each) are read in blocks through the cache.
class TokenDataset {
 public:
  // Validates the layout and the values (see the top of this file); throws Error naming the file
  // and what is wrong.
  static TokenDataset open(const std::string& path, const TokenDatasetOptions& options = {});
  static TokenDataset open(const std::vector<std::string>& paths, const TokenDatasetOptions& options = {});

  size_t size() const { return kind_.size(); }
  Sequence sequence(size_t i) const;
  size_t length(size_t i) const;  // sequence(i).size(), without reading its tokens
  uint16_t lang(size_t i) const { return lang_.at(i); }
  uint64_t source_line(size_t i) const { return source_line_.at(i); }
  uint16_t input(size_t i) const { return input_.at(i); }
  SequenceKind kind(size_t i) const { return static_cast<SequenceKind>(kind_.at(i)); }
  uint64_t total_tokens() const { return offsets_.back(); }
  bool streaming() const { return !whole_; }  // the tokens did not fit in the cache
  TokenCacheStats cache_stats() const { return cache_->stats(); }
  size_t files() const { return files_.size(); }
  const std::vector<std::string>& languages() const { return languages_; }
  const TokenDatasetInfo& info() const { return info_; }
  int32_t vocab_size() const { return info_.vocab_size; }
  const tok::SpecialTokens& special() const { return info_.special; }
  uint32_t max_len() const { return info_.max_len; }
  tok::TokenizerKind tokenizer_kind() const { return info_.tokenizer_kind; }
  const std::string& tokenizer_source() const { return info_.tokenizer_source; }
  const std::string& tokenizer_checksum() const { return info_.tokenizer_checksum; }
  const Provenance& provenance() const { return provenance_; }

 private:
  struct File;  // an open file: its token columns and where its sequences and tokens start
  const File& file_of(size_t sequence) const;
  std::shared_ptr<const TokenBlock> block(const File& f, uint64_t index) const;
  void add_file(const std::string& path);
  void check_shard_runs() const;
  void check_job_parts() const;
  void check_framing(size_t i, const Sequence& s) const;

  TokenDatasetInfo info_;
  Provenance provenance_;
  std::vector<std::string> languages_;
  std::vector<std::shared_ptr<File>> files_;
  std::vector<ShardPart> job_parts_;  // the files that are parts of a pretrain prepare --shard run
  struct ShardOfRun {
    std::string path, run;
  };
  std::vector<ShardOfRun> shard_runs_;  // the files that are shards of a prepare run
  std::vector<uint64_t> offsets_{0};    // [N + 1]: sequence i is tokens [offsets_[i], offsets_[i + 1])
  std::vector<uint16_t> lang_;
  std::vector<uint8_t> kind_;
  std::vector<uint64_t> source_line_;
  std::vector<uint16_t> input_;
  std::shared_ptr<TokenBlockCache> cache_;
  bool whole_ = false;
};

}  // namespace kglm::train
