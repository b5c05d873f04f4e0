#include "train/tasks/qa_windows.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace kglm::train::tasks {

namespace {

bool ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// The positions of the n highest scores, highest first (the earlier of equal scores first).
std::vector<int32_t> top_positions(const std::vector<float>& scores, int64_t n) {
  std::vector<int32_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  const auto keep = std::min<size_t>(static_cast<size_t>(std::max<int64_t>(n, 0)), order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                    [&](int32_t a, int32_t b) {
                      const float x = scores[static_cast<size_t>(a)], y = scores[static_cast<size_t>(b)];
                      return x > y || (x == y && a < b);
                    });
  order.resize(keep);
  return order;
}

}  // namespace

void encode_qa_windows(const QaExample& example, uint32_t index, const tok::Tokenizer& tokenizer,
                       const nn::ModelConfig& config, int64_t max_len, const QaWindowOptions& options,
                       std::vector<EncodedExample>& out, EncodeReport& report) {
  const tok::SpecialTokens& sp = tokenizer.special();
  const bool bert = config.architecture == nn::Architecture::Bert;
  // run_qa strips the question's leading white space (some questions have a lot of it).
  std::string_view question = example.question;
  while (!question.empty() && ascii_space(question.front())) question.remove_prefix(1);
  tok::Encoding q, c;
  tokenizer.encode(question, q);
  std::vector<int32_t> question_ids = q.ids;
  if (static_cast<int64_t>(question_ids.size()) > options.max_query_len) {
    question_ids.resize(static_cast<size_t>(options.max_query_len));
    ++report.questions_cut;
  }
  const std::string& context = *example.context;
  tokenizer.encode(context, c);
  // Byte spans without the white space a SentencePiece '▁' carries (as the fast tokenizers' trimmed offsets).
  std::vector<uint32_t> begins(c.begin), ends(c.end);
  for (size_t t = 0; t < c.size(); ++t)
    while (begins[t] < ends[t] && ascii_space(context[begins[t]])) ++begins[t];
  const int64_t specials = bert ? 3 : 4;
  const int64_t room = max_len - specials - static_cast<int64_t>(question_ids.size());
  if (room <= options.doc_stride)
    throw UsageError("--max-len " + std::to_string(max_len) + " leaves " + std::to_string(std::max<int64_t>(room, 0)) +
                     " context tokens after a question of " + std::to_string(question_ids.size()) +
                     " tokens: a window needs more than --doc-stride " + std::to_string(options.doc_stride));
  const auto n = static_cast<int64_t>(c.size());
  const int32_t context_type = bert && config.type_vocab > 1 ? 1 : 0;
  for (int64_t first = 0;;) {
    const int64_t last = std::min(first + room, n);  // the window is [first, last)
    EncodedExample w;
    w.example = index;
    auto push = [&](int32_t id, int32_t type) {
      w.ids.push_back(id);
      w.types.push_back(type);
    };
    push(sp.bos, 0);
    for (int32_t id : question_ids) push(id, 0);
    push(sp.eos, 0);
    if (!bert) push(sp.eos, 0);
    w.context_first = static_cast<int32_t>(w.ids.size());
    for (int64_t t = first; t < last; ++t) {
      push(c.ids[static_cast<size_t>(t)], context_type);
      w.span_begin.push_back(begins[static_cast<size_t>(t)]);
      w.span_end.push_back(ends[static_cast<size_t>(t)]);
    }
    push(sp.eos, context_type);
    w.starts.push_back(static_cast<uint32_t>(w.ids.size()));
    if (!example.answers.empty() && last > first) {
      const size_t answer_begin = example.answers.front().begin, answer_end = example.answers.front().end;
      const auto k = static_cast<int64_t>(w.span_begin.size());
      if (w.span_begin.front() <= answer_begin && w.span_end.back() >= answer_end) {
        int64_t s = 0;
        while (s < k && w.span_begin[static_cast<size_t>(s)] <= answer_begin) ++s;
        int64_t e = k - 1;
        while (e >= 0 && w.span_end[static_cast<size_t>(e)] >= answer_end) --e;
        w.start_position = w.context_first + static_cast<int32_t>(s - 1);
        w.end_position = w.context_first + static_cast<int32_t>(e + 1);
      }
    }
    out.push_back(std::move(w));
    ++report.windows;
    if (last >= n) break;
    first = last - options.doc_stride;
  }
}

AnswerSpan best_answer_span(const std::vector<WindowScores>& windows, const QaDecodeOptions& options) {
  AnswerSpan best;
  for (const WindowScores& w : windows) {
    const EncodedExample& e = *w.window;
    const int64_t first = e.context_first, count = static_cast<int64_t>(e.span_begin.size());
    auto in_context = [&](int32_t t) { return t >= first && t < first + count; };
    const std::vector<int32_t> starts = top_positions(w.start, options.n_best),
                               ends = top_positions(w.end, options.n_best);
    for (int32_t s : starts) {
      if (!in_context(s)) continue;
      for (int32_t t : ends) {
        if (!in_context(t) || t < s || t - s + 1 > options.max_answer_len) continue;
        const double score = static_cast<double>(w.start[static_cast<size_t>(s)]) + w.end[static_cast<size_t>(t)];
        if (best.found && score <= best.score) continue;
        best.found = true;
        best.score = score;
        best.begin = e.span_begin[static_cast<size_t>(s - first)];
        best.end = std::max(best.begin, static_cast<size_t>(e.span_end[static_cast<size_t>(t - first)]));
      }
    }
  }
  return best;
}

}  // namespace kglm::train::tasks
