#include "train/tasks/task_eval.hpp"

#include <algorithm>
#include <numeric>

#include "train/tasks/qa_scores.hpp"
#include "train/tasks/scores.hpp"

namespace kglm::train::tasks {

namespace {

// Every window's start and end scores, then each example's best span.
std::vector<std::string> predict_answers(TaskModel& model, const TaskData& data,
                                         const std::vector<EncodedExample>& windows, std::span<const uint32_t> order,
                                         size_t step, const QaDecodeOptions& options) {
  std::vector<std::vector<WindowScores>> per_example(data.size());
  for (size_t begin = 0; begin < order.size(); begin += step) {
    const std::span<const uint32_t> batch = order.subspan(begin, std::min(step, order.size() - begin));
    const TaskBatch b = make_task_batch(TaskKind::qa, windows, batch, {}, model.config());
    const nn::Tensor host = host_logits(model.forward(b, nn::DropoutContext{}));
    const int64_t t = host.dim(1), rows = static_cast<int64_t>(batch.size());
    const float* p = host.data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const EncodedExample& w = windows[batch[static_cast<size_t>(r)]];
      const auto n = static_cast<std::ptrdiff_t>(w.ids.size());
      const float* start = p + r * t;
      const float* end = p + (rows + r) * t;
      per_example[w.example].push_back({&w, std::vector<float>(start, start + n), std::vector<float>(end, end + n)});
    }
  }
  std::vector<std::string> answers(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    const AnswerSpan span = best_answer_span(per_example[i], options);
    if (span.found) answers[i] = data.qa[i].context->substr(span.begin, span.end - span.begin);
  }
  return answers;
}

}  // namespace

TaskPredictions predict(TaskModel& model, const TaskData& data, const std::vector<EncodedExample>& encoded,
                        const LabelSet& labels, int64_t batch, const QaDecodeOptions& qa, const LabelSet* intents) {
  const TaskKind kind = data.kind;
  // Longest first, so that each batch pads little and the largest buffers are made once.
  std::vector<uint32_t> order(encoded.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return encoded[a].ids.size() > encoded[b].ids.size(); });
  TaskPredictions out;
  const auto step = static_cast<size_t>(std::max<int64_t>(batch, 1));
  if (kind == TaskKind::qa) {
    out.answers = predict_answers(model, data, encoded, order, step, qa);
    return out;
  }
  out.labels.assign(encoded.size(), -1);
  const bool tagging = kind == TaskKind::token || kind == TaskKind::slots;
  if (tagging) {
    out.tags.resize(encoded.size());
    if (intents) out.intents.resize(encoded.size());
  } else {
    out.probabilities.resize(encoded.size());
  }
  for (size_t begin = 0; begin < order.size(); begin += step) {
    const std::span<const uint32_t> examples(order.data() + begin, std::min(step, order.size() - begin));
    const TaskBatch b = make_task_batch(kind, encoded, examples, {}, model.config());
    const nn::Tensor& logits = model.forward(b, nn::DropoutContext{});
    const std::vector<int32_t> best = argmax_rows(logits);
    const std::vector<std::vector<float>> probabilities =
        tagging ? std::vector<std::vector<float>>() : softmax_rows(logits);
    const std::vector<int32_t> intent =
        intents && model.intent_logits().defined() ? argmax_rows(model.intent_logits()) : std::vector<int32_t>();
    size_t word_row = 0;  // token task: the logits' rows are the words' first tokens, in order
    for (size_t r = 0; r < examples.size(); ++r) {
      const uint32_t i = examples[r];
      if (!intent.empty()) out.intents[i] = intents->names()[static_cast<size_t>(intent[r])];
      if (!tagging) {
        out.labels[i] = best[r];
        out.probabilities[i] = probabilities[r];
        continue;
      }
      std::vector<std::string>& tags = out.tags[i];
      for (int32_t t : encoded[i].word_tokens)
        tags.push_back(t < 0 ? "O" : labels.names()[static_cast<size_t>(best[word_row++])]);
    }
  }
  return out;
}

const char* task_metric(TaskKind kind) {
  switch (kind) {
    case TaskKind::token:
    case TaskKind::slots:
      return "f1";
    case TaskKind::relation:
      return "macro_f1";
    case TaskKind::sequence:
    case TaskKind::choice:
    case TaskKind::wic:
      return "accuracy";
    case TaskKind::qa:
      return "f1";
  }
  return "?";
}

TaskScore score(const TaskData& gold, const LabelSet& labels, const TaskPredictions& predicted,
                const EntityRules& rules) {
  TaskScore s;
  s.metric = task_metric(gold.kind);
  s.examples = static_cast<int64_t>(gold.size());
  if (gold.kind == TaskKind::token || gold.kind == TaskKind::slots) {
    std::vector<std::vector<std::string>> tags;
    for (const TaggedSentence& t : gold.tagged) tags.push_back(t.tags);
    for (const SlotExample& t : gold.slots) tags.push_back(t.sentence.tags);
    const Scores e = entity_scores(tags, predicted.tags, rules);
    s.value = e.f1;
    s.details = {{"f1", e.f1}, {"precision", e.precision}, {"recall", e.recall}};
    if (!predicted.intents.empty()) {
      // The intent's accuracy, and the frame's: every tag and the intent right.
      double intent = 0, frame = 0;
      for (size_t i = 0; i < gold.slots.size(); ++i) {
        const bool right = predicted.intents[i] == gold.slots[i].intent;
        intent += right;
        frame += right && predicted.tags[i] == gold.slots[i].sentence.tags;
      }
      const auto n = static_cast<double>(std::max<size_t>(gold.slots.size(), 1));
      s.details.emplace_back("intent_accuracy", intent / n);
      s.details.emplace_back("exact_match", frame / n);
    }
    return s;
  }
  if (gold.kind == TaskKind::qa) {
    std::vector<std::vector<std::string>> answers;
    for (const QaExample& q : gold.qa) {
      answers.emplace_back();
      for (const QaAnswer& a : q.answers) answers.back().push_back(a.text);
    }
    const QaScores qa = score_answers(predicted.answers, answers, gold.langs);
    s.value = qa.f1;
    s.details = {{"f1", qa.f1}, {"exact_match", qa.exact_match}};
    s.examples = qa.questions;
    return s;
  }
  std::vector<int32_t> gold_ids(gold.size());
  for (size_t i = 0; i < gold.size(); ++i)
    gold_ids[i] = gold.kind == TaskKind::choice ? static_cast<int32_t>(gold.questions[i].label)
                                                : labels.id(gold.label(i));  // -1: a label the model lacks
  const double acc = accuracy(gold_ids, predicted.labels);
  if (gold.kind == TaskKind::relation) {
    s.value = macro_f1(gold_ids, predicted.labels);
    s.details = {{"macro_f1", s.value}, {"accuracy", acc}};
  } else {
    s.value = acc;
    s.details = {{"accuracy", acc}};
  }
  return s;
}

}  // namespace kglm::train::tasks
