// Extractive QA as Hugging Face's run_qa.py builds and reads it.
//  - Windows: the question (its first --max-query-len tokens) then a window of the context, with
//    the model's special tokens (XLM-R <s> Q </s></s> C </s>, BERT [CLS] Q [SEP] C [SEP]); a context
//    longer than a window is cut into windows that share --doc-stride tokens (the tokenizers'
//    `stride`), each example giving one window or more.
//  - Targets: the first answer's first and last token in a window that holds the whole answer,
//    else the window's first token (what run_qa's prepare_train_features does).
//  - Decoding: over every window of an example, the --n-best highest start and end scores; each
//    pair of context tokens start ≤ end at most --max-answer-len tokens apart is a candidate scored
//    start + end; the best candidate's text is cut from the context by its tokens' byte spans.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/model_config.hpp"
#include "tok/tokenizer.hpp"
#include "train/tasks/task_data.hpp"

namespace kglm::train::tasks {

// Appends example `index`'s windows to out. Throws UsageError when max_len leaves a window no more
// context tokens than doc_stride (the windows could not advance).
void encode_qa_windows(const QaExample& example, uint32_t index, const tok::Tokenizer& tokenizer,
                       const nn::ModelConfig& config, int64_t max_len, const QaWindowOptions& options,
                       std::vector<EncodedExample>& out, EncodeReport& report);

struct QaDecodeOptions {
  int64_t max_answer_len = 30;  // tokens
  int64_t n_best = 20;
};

// A window's start and end scores, one per token of the window.
struct WindowScores {
  const EncodedExample* window = nullptr;
  std::vector<float> start, end;
};

struct AnswerSpan {
  bool found = false;         // false: no candidate in any window (then the answer is "")
  size_t begin = 0, end = 0;  // bytes of the context
  double score = 0;
};

AnswerSpan best_answer_span(const std::vector<WindowScores>& windows, const QaDecodeOptions& options);

}  // namespace kglm::train::tasks
