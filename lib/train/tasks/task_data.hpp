// A fine-tuning task's data: the examples of one file in any format the task reads, their labels,
// their encoding into token ids for the model, and the batches built from them.
//  - token:    a label on the first sub-token of each word, the others ignored (NER, POS, slots);
//  - sequence: one text or a pair (XNLI, PAWS-X, intent), a label each;
//  - relation: a text with two entities and the relation between them (RELX);
//  - choice:   a context, a question and its choices, one sequence per choice (XLR);
//  - slots:    words with slot tags (as the token task) and an intent per utterance (MultiATIS++,
//              MTOP, MASSIVE);
//  - wic:      two sentences that use a word and whether in one sense (XL-WiC, WiC);
//  - qa:       a question about a context, its answer a span of the context (SQuAD, XQuAD, MLQA,
//              TyDiQA-GoldP); an example is a window of the context (qa_windows.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "nn/encoder.hpp"
#include "tok/tokenizer.hpp"
#include "train/mlm_batch.hpp"
#include "train/tasks/example_readers.hpp"
#include "train/tasks/jsonl_readers.hpp"
#include "train/tasks/slot_readers.hpp"
#include "train/tasks/squad_reader.hpp"
#include "train/tasks/tagged_reader.hpp"

namespace kglm::train::tasks {

enum class TaskKind : uint8_t { token, sequence, relation, choice, qa, wic, slots };
TaskKind parse_task(const std::string& name);  // UsageError for another name
const char* task_name(TaskKind kind);

// How to read a task's files: the format (auto: from the content) and its settings.
struct ReadOptions {
  std::string format = "auto";  // token: panx, conll; sequence: tsv; relation: relx, jsonl; choice: xlr; qa: squad;
                                // wic: wic; slots: multiatis, mtop, massive
  int tag_column = -1;          // conll
  TsvColumns columns;           // tsv
  bool strict = false;          // squad: refuse repeated question ids (else: warn, rename the repeats ID-2, ID-3, …)
};

// The examples of one file, of one task. lang: LANG of LANG=PATH, else each record's own.
struct TaskData {
  TaskKind kind = TaskKind::token;
  std::string path;
  std::vector<TaggedSentence> tagged;
  std::vector<SentenceExample> sentences;
  std::vector<RelationExample> relations;
  std::vector<ChoiceExample> questions;
  std::vector<QaExample> qa;
  std::vector<WicExample> wic;
  std::vector<SlotExample> slots;
  std::vector<std::string> langs;  // per example (empty strings where unknown)

  size_t size() const { return langs.size(); }
  // The gold label of example i ("" for the token and qa tasks, whose labels are spans; slots: the
  // intent).
  std::string label(size_t i) const;
};

TaskData read_task_data(TaskKind kind, const std::string& path, const std::string& lang, const ReadOptions& options,
                        ErrorCounter& errors);

// The label vocabulary: ids in a fixed order (--labels, a checkpoint's, or the training data's
// labels sorted), so that every run and every rank numbers them alike.
class LabelSet {
 public:
  LabelSet() = default;
  explicit LabelSet(std::vector<std::string> names);
  // The labels of the training data, sorted (byte order): token and slots the tags, the others the
  // examples' labels; the choice and qa tasks have none.
  static LabelSet from_data(const TaskData& data);
  // slots: the training data's intents, sorted.
  static LabelSet intents_of(const TaskData& data);
  int32_t id(const std::string& name) const;  // -1 when absent
  const std::vector<std::string>& names() const { return names_; }
  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
  std::map<std::string, int32_t> ids_;
};

// One example as the model reads it. Choice examples hold one sequence per choice.
struct EncodedExample {
  std::vector<int32_t> ids, types;    // every sequence, one after the other; types: BERT's segments
  std::vector<uint32_t> starts{0};    // sequence k is [starts[k], starts[k + 1])
  std::vector<int32_t> token_labels;  // token, slots: per token; kIgnoreIndex but on words' first tokens
  std::vector<int32_t> word_tokens;   // token, slots: each word's first token, -1 when --max-len cut it
  int32_t label = -100;               // the other tasks, slots' intent (kIgnoreIndex when unknown to the LabelSet)
  int32_t e1 = 0, e2 = 0;             // relation: the entities' first tokens; wic: the word's, in each sentence
  // qa: a window of an example's context after its question. The window's context tokens are
  // [context_first, context_first + span_begin.size()), with their byte spans in the context; the
  // training targets are the answer's first and last token (0, the first token, when the window
  // does not hold the whole answer).
  uint32_t example = 0;
  int32_t context_first = 0;
  std::vector<uint32_t> span_begin, span_end;
  int32_t start_position = 0, end_position = 0;
  size_t sequences() const { return starts.size() - 1; }
  size_t length(size_t k) const { return starts[k + 1] - starts[k]; }
};

struct EncodeReport {
  uint64_t truncated = 0;       // examples longer than --max-len, cut
  uint64_t entities_cut = 0;    // relation, wic: an entity or word beyond --max-len (its first kept token stands in)
  uint64_t unknown_labels = 0;  // gold labels the LabelSet does not have (ignored by the loss)
  uint64_t questions_cut = 0;   // qa: questions longer than --max-query-len, cut
  uint64_t windows = 0;         // qa: the windows of the examples' contexts
};

// qa: how contexts are cut into windows (Hugging Face run_qa's settings).
struct QaWindowOptions {
  int64_t doc_stride = 128;    // tokens shared by consecutive windows
  int64_t max_query_len = 64;  // question tokens kept
};

// Encodes every example with `tokenizer` for a model of `config` in sequences of at most max_len
// tokens (special tokens included); qa: every window of every example, in order; slots: the
// intents numbered by `intents` (none: no intent targets).
std::vector<EncodedExample> encode_task_data(const TaskData& data, const LabelSet& labels,
                                             const tok::Tokenizer& tokenizer, const nn::ModelConfig& config,
                                             int64_t max_len, EncodeReport& report, const QaWindowOptions& qa = {},
                                             const LabelSet* intents = nullptr);

// A batch of examples: every sequence of every example, packed (no padding); a data-parallel rank
// numbers its sequences as the global batch does.
struct TaskBatch {
  nn::EncoderBatch encoder;
  nn::Tensor targets;         // I32: token, slots [M] (one per word, token_rows), qa [2B] (starts, ends), else [B]
  nn::Tensor intent_targets;  // slots: I32 [B]
  int64_t intent_counted = 0;
  nn::Tensor token_rows;     // token, slots: I32 [M], the packed row of each word's first token, in order
  nn::Tensor token_numbers;  // token, slots: I64 [M], their tokens' dropout numbers
  nn::Tensor entity_rows;    // relation, wic: I32 [2B], e1's and e2's row of each example
  int64_t examples = 0, choices = 1;
  int64_t counted = 0;  // targets that count (not kIgnoreIndex)
};

TaskBatch make_task_batch(TaskKind kind, const std::vector<EncodedExample>& data, std::span<const uint32_t> examples,
                          BatchRows rows, const nn::ModelConfig& config);

}  // namespace kglm::train::tasks
