#include "train/tasks/task_data.hpp"

#include <algorithm>
#include <set>

#include "core/input_stream.hpp"
#include "nn/ops/cross_entropy.hpp"
#include "train/tasks/qa_windows.hpp"

namespace kglm::train::tasks {

namespace {

// The first line of `path` that is neither blank nor a CoNLL -DOCSTART- line (format sniffing;
// stdin cannot be read twice, so it needs --format).
std::string first_record_line(const std::string& path) {
  if (path == "-") throw UsageError("stdin: give --format (the format is sniffed from files only)");
  InputStream in(path);
  const std::string_view head = in.peek(1 << 16);
  size_t begin = 0;
  while (begin < head.size()) {
    size_t end = head.find('\n', begin);
    if (end == std::string_view::npos) end = head.size();
    const std::string_view line = head.substr(begin, end - begin);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos && !line.starts_with("-DOCSTART-"))
      return std::string(line);
    begin = end + 1;
  }
  return {};
}

// PAN-X lines are "lang:word<TAB>tag" with a lower-case language code before the first colon.
bool looks_like_panx(std::string_view line) {
  const size_t colon = line.find(':'), tab = line.find('\t');
  if (colon == std::string_view::npos || tab == std::string_view::npos || colon > tab || colon < 2 || colon > 12)
    return false;
  return std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(colon),
                     [](char c) { return (c >= 'a' && c <= 'z') || c == '-' || c == '_'; });
}

std::string resolved_format(TaskKind kind, const std::string& path, const std::string& format) {
  if (format != "auto") return format;
  switch (kind) {
    case TaskKind::token:
      return looks_like_panx(first_record_line(path)) ? "panx" : "conll";
    case TaskKind::sequence:
      return "tsv";
    case TaskKind::relation:
      return first_record_line(path).starts_with("{") ? "jsonl" : "relx";
    case TaskKind::choice:
      return "xlr";
    case TaskKind::qa:
      return "squad";
    case TaskKind::wic:
      return "wic";
    case TaskKind::slots: {
      const std::string first = first_record_line(path);
      if (first.starts_with("{")) return "massive";
      return first.find("utterance") != std::string::npos && first.find("slot_labels") != std::string::npos
                 ? "multiatis"
                 : "mtop";
    }
  }
  return format;
}

void refuse_format(TaskKind kind, const std::string& format, const char* allowed) {
  throw UsageError(std::string("--format ") + format + " is not a format of the " + task_name(kind) + " task (" +
                   allowed + ")");
}

// The first token of the byte range [begin, end) of the encoded text: the first token ending
// after `begin` (an empty range: the first token at or after it). -1 when there is none.
int64_t first_token_of(const tok::Encoding& enc, size_t begin) {
  for (size_t i = 0; i < enc.size(); ++i)
    if (enc.end[i] > begin || enc.begin[i] >= begin) return static_cast<int64_t>(i);
  return -1;
}

// Appends a sequence of one or two segments with the model's special tokens: XLM-R <s> A </s>
// (</s> B </s>), BERT [CLS] A [SEP] (B [SEP]) with segment ids 0 and 1 (when the model has them).
// The longer segment loses tokens from its end until the whole fits max_len (longest first, as
// Hugging Face truncates). Returns whether anything was cut; kept_a, when given, receives how many
// of A's tokens were kept.
bool append_segments(std::vector<int32_t> a, std::vector<int32_t> b, bool pair, const tok::SpecialTokens& sp,
                     const nn::ModelConfig& config, int64_t max_len, EncodedExample& out, size_t* kept_a = nullptr) {
  const bool bert = config.architecture == nn::Architecture::Bert;
  const size_t specials = !pair ? 2 : bert ? 3 : 4;
  const size_t room = max_len > static_cast<int64_t>(specials) ? static_cast<size_t>(max_len) - specials : 0;
  bool cut = false;
  while (a.size() + b.size() > room) {
    cut = true;
    (a.size() >= b.size() ? a : b).pop_back();
  }
  if (kept_a) *kept_a = a.size();
  const int32_t second_type = bert && config.type_vocab > 1 ? 1 : 0;
  auto push = [&](int32_t id, int32_t type) {
    out.ids.push_back(id);
    out.types.push_back(type);
  };
  push(sp.bos, 0);
  for (int32_t id : a) push(id, 0);
  push(sp.eos, 0);
  if (pair) {
    if (!bert) push(sp.eos, 0);
    for (int32_t id : b) push(id, second_type);
    push(sp.eos, second_type);
  }
  out.starts.push_back(static_cast<uint32_t>(out.ids.size()));
  return cut;
}

// A tagged sentence as <s> words </s>, each word's tag on its first token (kIgnoreIndex on the
// others); the words past max_len are cut (their word_tokens -1).
void encode_words(const TaggedSentence& s, const LabelSet& labels, const tok::Tokenizer& tokenizer, int64_t max_len,
                  EncodeReport& report, EncodedExample& e) {
  const tok::SpecialTokens& sp = tokenizer.special();
  tok::Encoding enc;
  const size_t room = static_cast<size_t>(std::max<int64_t>(max_len - 2, 0));
  e.ids.push_back(sp.bos);
  e.token_labels.push_back(nn::kIgnoreIndex);
  bool cut = false;
  for (size_t w = 0; w < s.words.size(); ++w) {
    tokenizer.encode(s.words[w], enc);
    const size_t pieces = std::max<size_t>(enc.size(), 1);  // a word of no tokens stands as <unk>
    if (cut || e.ids.size() - 1 + pieces > room) {
      cut = true;
      e.word_tokens.push_back(-1);
      continue;
    }
    e.word_tokens.push_back(static_cast<int32_t>(e.ids.size()));
    const int32_t tag = labels.id(s.tags[w]);
    if (tag < 0) ++report.unknown_labels;
    for (size_t p = 0; p < pieces; ++p) {
      e.ids.push_back(enc.size() == 0 ? sp.unk : enc.ids[p]);
      e.token_labels.push_back(p == 0 && tag >= 0 ? tag : nn::kIgnoreIndex);
    }
  }
  e.ids.push_back(sp.eos);
  e.token_labels.push_back(nn::kIgnoreIndex);
  e.types.assign(e.ids.size(), 0);
  e.starts.push_back(static_cast<uint32_t>(e.ids.size()));
  report.truncated += cut;
}

// XLR's question with the choice in place of its "?" (the asked relation), or after it.
std::string question_with(const std::string& question, const std::string& choice) {
  const size_t mark = question.find(" ? ");
  if (mark == std::string::npos) return question + " " + choice;
  return question.substr(0, mark + 1) + choice + question.substr(mark + 2);
}

}  // namespace

TaskKind parse_task(const std::string& name) {
  for (TaskKind k : {TaskKind::token, TaskKind::sequence, TaskKind::relation, TaskKind::choice, TaskKind::qa,
                     TaskKind::wic, TaskKind::slots})
    if (name == task_name(k)) return k;
  throw UsageError("--task must be token, sequence, relation, choice, qa, wic or slots, not '" + name + "'");
}

const char* task_name(TaskKind kind) {
  switch (kind) {
    case TaskKind::token:
      return "token";
    case TaskKind::sequence:
      return "sequence";
    case TaskKind::relation:
      return "relation";
    case TaskKind::choice:
      return "choice";
    case TaskKind::qa:
      return "qa";
    case TaskKind::wic:
      return "wic";
    case TaskKind::slots:
      return "slots";
  }
  return "?";
}

std::string TaskData::label(size_t i) const {
  switch (kind) {
    case TaskKind::token:
      return {};
    case TaskKind::sequence:
      return sentences[i].label;
    case TaskKind::relation:
      return relations[i].label;
    case TaskKind::choice:
      return std::to_string(questions[i].label);
    case TaskKind::qa:
      return {};
    case TaskKind::wic:
      return wic[i].label;
    case TaskKind::slots:
      return slots[i].intent;
  }
  return {};
}

TaskData read_task_data(TaskKind kind, const std::string& path, const std::string& lang, const ReadOptions& options,
                        ErrorCounter& errors) {
  TaskData d;
  d.kind = kind;
  d.path = path;
  const std::string format = resolved_format(kind, path, options.format);
  auto langs_from = [&](const auto& records) {
    for (const auto& r : records) d.langs.push_back(lang.empty() ? r.lang : lang);
  };
  switch (kind) {
    case TaskKind::token:
      if (format != "panx" && format != "conll") refuse_format(kind, format, "panx, conll");
      d.tagged = read_tagged(
          path, {format == "panx" ? TaggedFormat::panx : TaggedFormat::conll, options.tag_column, lang}, errors);
      langs_from(d.tagged);
      break;
    case TaskKind::sequence:
      if (format != "tsv") refuse_format(kind, format, "tsv");
      d.sentences = read_sentence_tsv(path, options.columns, errors);
      d.langs.assign(d.sentences.size(), lang);
      break;
    case TaskKind::relation:
      if (format != "relx" && format != "jsonl") refuse_format(kind, format, "relx, jsonl");
      d.relations = format == "relx" ? read_relx(path, errors) : read_annotated_relations(path, errors);
      langs_from(d.relations);
      break;
    case TaskKind::choice: {
      if (format != "xlr") refuse_format(kind, format, "xlr");
      d.questions = read_xlr(path, errors);
      // A batch holds one sequence per choice of each question: every question needs as many.
      const size_t choices = d.questions.empty() ? 0 : d.questions.front().choices.size();
      std::erase_if(d.questions, [&](const ChoiceExample& q) {
        if (q.choices.size() == choices) return false;
        errors.record(
            path, q.line,
            std::to_string(q.choices.size()) + " choices, the file's first question has " + std::to_string(choices));
        return true;
      });
      langs_from(d.questions);
      break;
    }
    case TaskKind::qa:
      if (format != "squad") refuse_format(kind, format, "squad");
      d.qa = read_squad(path, errors, options.strict);
      for (QaExample& q : d.qa) q.lang = lang;
      d.langs.assign(d.qa.size(), lang);
      break;
    case TaskKind::wic:
      if (format != "wic") refuse_format(kind, format, "wic");
      d.wic = read_wic(path, errors);
      d.langs.assign(d.wic.size(), lang);
      break;
    case TaskKind::slots: {
      if (format != "multiatis" && format != "mtop" && format != "massive")
        refuse_format(kind, format, "multiatis, mtop, massive");
      d.slots = read_slots(path,
                           format == "massive" ? SlotFormat::massive
                           : format == "mtop"  ? SlotFormat::mtop
                                               : SlotFormat::multiatis,
                           errors);
      for (const SlotExample& e : d.slots) d.langs.push_back(lang.empty() ? e.sentence.lang : lang);
      break;
    }
  }
  if (d.size() == 0) throw Error(path + ": no examples");
  return d;
}

LabelSet::LabelSet(std::vector<std::string> names) : names_(std::move(names)) {
  for (size_t i = 0; i < names_.size(); ++i)
    if (!ids_.emplace(names_[i], static_cast<int32_t>(i)).second) throw UsageError("label '" + names_[i] + "' twice");
}

LabelSet LabelSet::from_data(const TaskData& data) {
  std::set<std::string> names;
  if (data.kind == TaskKind::token) {
    for (const TaggedSentence& s : data.tagged) names.insert(s.tags.begin(), s.tags.end());
  } else if (data.kind == TaskKind::slots) {
    for (const SlotExample& s : data.slots) names.insert(s.sentence.tags.begin(), s.sentence.tags.end());
  } else if (data.kind != TaskKind::choice && data.kind != TaskKind::qa) {
    for (size_t i = 0; i < data.size(); ++i)
      if (!data.label(i).empty()) names.insert(data.label(i));  // wic test data may have none
  }
  return LabelSet(std::vector<std::string>(names.begin(), names.end()));
}

LabelSet LabelSet::intents_of(const TaskData& data) {
  std::set<std::string> names;
  for (const SlotExample& s : data.slots) names.insert(s.intent);
  return LabelSet(std::vector<std::string>(names.begin(), names.end()));
}

int32_t LabelSet::id(const std::string& name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? -1 : it->second;
}

std::vector<EncodedExample> encode_task_data(const TaskData& data, const LabelSet& labels,
                                             const tok::Tokenizer& tokenizer, const nn::ModelConfig& config,
                                             int64_t max_len, EncodeReport& report, const QaWindowOptions& qa,
                                             const LabelSet* intents) {
  if (data.kind == TaskKind::qa) {
    std::vector<EncodedExample> windows;
    for (size_t i = 0; i < data.qa.size(); ++i)
      encode_qa_windows(data.qa[i], static_cast<uint32_t>(i), tokenizer, config, max_len, qa, windows, report);
    return windows;
  }
  const tok::SpecialTokens& sp = tokenizer.special();
  std::vector<EncodedExample> out(data.size());
  tok::Encoding enc;
  auto ids_of = [&](std::string_view text) {
    tokenizer.encode(text, enc);
    return enc.ids;
  };
  auto label_id = [&](const LabelSet& set, const std::string& name) {
    const int32_t id = set.id(name);
    if (id < 0) ++report.unknown_labels;
    return id < 0 ? nn::kIgnoreIndex : id;
  };
  for (size_t i = 0; i < data.size(); ++i) {
    EncodedExample& e = out[i];
    switch (data.kind) {
      case TaskKind::token:
        encode_words(data.tagged[i], labels, tokenizer, max_len, report, e);
        break;
      case TaskKind::slots:
        encode_words(data.slots[i].sentence, labels, tokenizer, max_len, report, e);
        if (intents) e.label = label_id(*intents, data.slots[i].intent);
        break;
      case TaskKind::sequence: {
        const SentenceExample& s = data.sentences[i];
        report.truncated += append_segments(ids_of(s.text), s.pair.empty() ? std::vector<int32_t>() : ids_of(s.pair),
                                            !s.pair.empty(), sp, config, max_len, e);
        e.label = label_id(labels, s.label);
        break;
      }
      case TaskKind::relation: {
        const RelationExample& r = data.relations[i];
        tokenizer.encode(r.text, enc);
        const int64_t t1 = first_token_of(enc, r.e1_begin), t2 = first_token_of(enc, r.e2_begin);
        report.truncated += append_segments(enc.ids, {}, false, sp, config, max_len, e);
        // +1: after <s>. An entity past the end (cut, or at the text's end) takes the last token.
        const auto last = static_cast<int64_t>(e.ids.size()) - 2;
        auto place = [&](int64_t t) {
          if (t < 0 || t + 1 > last) {
            ++report.entities_cut;
            return static_cast<int32_t>(std::max<int64_t>(last, 0));
          }
          return static_cast<int32_t>(t + 1);
        };
        e.e1 = place(t1);
        e.e2 = place(t2);
        e.label = label_id(labels, r.label);
        break;
      }
      case TaskKind::choice: {
        const ChoiceExample& q = data.questions[i];
        bool cut = false;
        const std::vector<int32_t> context = ids_of(q.context);
        for (const std::string& choice : q.choices)
          cut |= append_segments(context, ids_of(question_with(q.question, choice)), true, sp, config, max_len, e);
        report.truncated += cut;
        e.label = static_cast<int32_t>(q.label);
        break;
      }
      case TaskKind::wic: {
        const WicExample& w = data.wic[i];
        tokenizer.encode(w.sentence1, enc);
        const std::vector<int32_t> first = enc.ids;
        const int64_t t1 = first_token_of(enc, w.begin1);
        tokenizer.encode(w.sentence2, enc);
        const int64_t t2 = first_token_of(enc, w.begin2);
        size_t kept_first = 0;
        report.truncated += append_segments(first, enc.ids, true, sp, config, max_len, e, &kept_first);
        // The word's first token in each segment (after <s>; after A's tokens and its separators).
        const bool bert = config.architecture == nn::Architecture::Bert;
        const auto kept1 = static_cast<int64_t>(kept_first);
        const int64_t second = kept1 + (bert ? 2 : 3), end = static_cast<int64_t>(e.ids.size()) - 1;
        auto place = [&](int64_t t, int64_t offset, int64_t last) {
          if (t < 0 || offset + t > last) {
            ++report.entities_cut;
            return static_cast<int32_t>(std::max<int64_t>(last, 0));
          }
          return static_cast<int32_t>(offset + t);
        };
        e.e1 = place(t1, 1, kept1);
        e.e2 = place(t2, second, end - 1);
        e.label = w.label.empty() ? nn::kIgnoreIndex : label_id(labels, w.label);
        break;
      }
      case TaskKind::qa:
        break;  // above
    }
  }
  return out;
}

TaskBatch make_task_batch(TaskKind kind, const std::vector<EncodedExample>& data, std::span<const uint32_t> examples,
                          BatchRows rows, const nn::ModelConfig& config) {
  rows.end = std::min(rows.end, examples.size());
  rows.begin = std::min(rows.begin, rows.end);
  TaskBatch b;
  b.examples = static_cast<int64_t>(rows.end - rows.begin);
  b.choices = b.examples > 0 ? static_cast<int64_t>(data[examples[rows.begin]].sequences()) : 1;
  const uint64_t first_sequence = rows.begin * static_cast<uint64_t>(b.choices);
  std::vector<std::vector<int32_t>> ids, types;
  std::vector<int32_t> targets, token_rows, entity_rows, end_targets, intent_targets;
  std::vector<int64_t> token_numbers;
  int64_t row0 = 0;  // the packed row of the sequence's first token
  for (int64_t r = 0; r < b.examples; ++r) {
    const EncodedExample& e = data[examples[rows.begin + static_cast<size_t>(r)]];
    if (static_cast<int64_t>(e.sequences()) != b.choices)
      throw Error("a batch of examples with different numbers of choices");
    for (int64_t k = 0; k < b.choices; ++k) {
      const auto begin = static_cast<std::ptrdiff_t>(e.starts[static_cast<size_t>(k)]);
      const auto n = static_cast<std::ptrdiff_t>(e.length(static_cast<size_t>(k)));
      ids.emplace_back(e.ids.begin() + begin, e.ids.begin() + begin + n);
      types.emplace_back(e.types.begin() + begin, e.types.begin() + begin + n);
      if (kind == TaskKind::token || kind == TaskKind::slots) {
        // The head reads the words' first tokens (the rows that carry labels), in word order.
        const uint64_t sequence = first_sequence + static_cast<uint64_t>(ids.size() - 1);
        for (int32_t t : e.word_tokens) {
          if (t < 0) continue;
          token_rows.push_back(static_cast<int32_t>(row0 + t));
          token_numbers.push_back(static_cast<int64_t>(nn::token_number(sequence, static_cast<uint64_t>(t))));
          targets.push_back(e.token_labels[static_cast<size_t>(t)]);
        }
      }
      if (kind == TaskKind::relation || kind == TaskKind::wic) {
        entity_rows.push_back(static_cast<int32_t>(row0 + e.e1));
        entity_rows.push_back(static_cast<int32_t>(row0 + e.e2));
      }
      row0 += n;
    }
    if (kind == TaskKind::qa) {
      targets.push_back(e.start_position);
      end_targets.push_back(e.end_position);
    } else if (kind == TaskKind::slots) {
      intent_targets.push_back(e.label);
    } else if (kind != TaskKind::token) {
      targets.push_back(e.label);
    }
  }
  targets.insert(targets.end(), end_targets.begin(), end_targets.end());
  for (int32_t t : targets) b.counted += t != nn::kIgnoreIndex;
  for (int32_t t : intent_targets) b.intent_counted += t != nn::kIgnoreIndex;
  if (kind == TaskKind::slots)
    b.intent_targets = nn::Tensor::from<int32_t>({static_cast<int64_t>(intent_targets.size())}, intent_targets);
  b.encoder = nn::pack_sequences(ids, types, config);
  b.targets = nn::Tensor::from<int32_t>({static_cast<int64_t>(targets.size())}, targets);
  if (kind == TaskKind::token || kind == TaskKind::slots) {
    b.token_rows = nn::Tensor::from<int32_t>({static_cast<int64_t>(token_rows.size())}, token_rows);
    b.token_numbers = nn::Tensor::from<int64_t>({static_cast<int64_t>(token_numbers.size())}, token_numbers);
  }
  if (kind == TaskKind::relation || kind == TaskKind::wic)
    b.entity_rows = nn::Tensor::from<int32_t>({static_cast<int64_t>(entity_rows.size())}, entity_rows);
  return b;
}

}  // namespace kglm::train::tasks
