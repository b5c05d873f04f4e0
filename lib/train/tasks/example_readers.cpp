#include "train/tasks/example_readers.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"
#include "train/tasks/squad_reader.hpp"

namespace kglm::train::tasks {

namespace {

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> out;
  size_t begin = 0;
  while (true) {
    const size_t tab = line.find('\t', begin);
    out.push_back(line.substr(begin, tab == std::string_view::npos ? std::string_view::npos : tab - begin));
    if (tab == std::string_view::npos) return out;
    begin = tab + 1;
  }
}

bool blank(std::string_view line) { return line.find_first_not_of(" \t") == std::string_view::npos; }

template <class T>
void refuse_if_all_bad(const std::vector<T>& read, const ErrorCounter& errors, uint64_t errors_before,
                       const std::string& name) {
  if (read.empty() && errors.count() > errors_before)
    throw Error(location(name) + "no valid record; every one was bad");
}

// "3" → 3 (a 1-based column number); nullopt for a name.
std::optional<size_t> column_number(const std::string& column) {
  if (column.empty() || column.size() > 4 ||
      !std::all_of(column.begin(), column.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const size_t n = std::stoul(column);
  if (n == 0) throw UsageError("TSV column numbers start at 1, not 0");
  return n;
}

// WiC's and XL-WiC's labels as one pair of names.
std::optional<std::string> wic_label(std::string_view v) {
  if (v == "1" || v == "T" || v == "True" || v == "true") return "true";
  if (v == "0" || v == "F" || v == "False" || v == "false") return "false";
  return std::nullopt;
}

// The gold file beside a file of test data without labels: WiC's X.data.txt → X.gold.txt,
// XL-WiC's *_data.txt → *_gold.txt; "" when the name has no "data".
std::string gold_path_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t at = path.rfind("data");
  if (at == std::string::npos || (slash != std::string::npos && at < slash)) return {};
  return path.substr(0, at) + "gold" + path.substr(at + 4);
}

// The byte where word `index` of a space-tokenised sentence starts; npos when there is no such word.
size_t word_start(std::string_view sentence, int64_t index) {
  size_t pos = 0;
  for (int64_t k = 0;; ++k) {
    while (pos < sentence.size() && sentence[pos] == ' ') ++pos;
    if (pos >= sentence.size()) return std::string_view::npos;
    if (k == index) return pos;
    pos = sentence.find(' ', pos);
    if (pos == std::string_view::npos) return pos;
  }
}

int64_t parse_index(std::string_view v) {
  if (v.empty() || v.size() > 9 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw Error("'" + std::string(v) + "' is not an index");
  return std::stoll(std::string(v));
}

// One line of WiC (5 columns) or XL-WiC (8 or 9); throws Error saying what is wrong.
WicExample parse_wic_line(const std::vector<std::string_view>& f) {
  WicExample e;
  e.word = std::string(f[0]);
  if (f.size() == 5) {
    const size_t dash = f[2].find('-');
    if (dash == std::string_view::npos) throw Error("the indices '" + std::string(f[2]) + "' are not I-J");
    e.sentence1 = std::string(f[3]);
    e.sentence2 = std::string(f[4]);
    e.begin1 = word_start(e.sentence1, parse_index(f[2].substr(0, dash)));
    e.begin2 = word_start(e.sentence2, parse_index(f[2].substr(dash + 1)));
    if (e.begin1 == std::string::npos || e.begin2 == std::string::npos)
      throw Error("a word index past the end of its sentence");
    return e;
  }
  e.sentence1 = std::string(f[6]);
  e.sentence2 = std::string(f[7]);
  const int64_t start1 = parse_index(f[2]), end1 = parse_index(f[3]), start2 = parse_index(f[4]),
                end2 = parse_index(f[5]);
  const int64_t b1 = code_point_offset(e.sentence1, start1), b2 = code_point_offset(e.sentence2, start2);
  if (b1 < 0 || b2 < 0 || static_cast<size_t>(b1) >= e.sentence1.size() ||
      static_cast<size_t>(b2) >= e.sentence2.size() || end1 < start1 || end2 < start2)
    throw Error("a target's character span is outside its sentence");
  e.begin1 = static_cast<size_t>(b1);
  e.begin2 = static_cast<size_t>(b2);
  if (f.size() == 9) {
    const std::optional<std::string> label = wic_label(f[8]);
    if (!label) throw Error("the label '" + std::string(f[8]) + "' is not 1/0 or T/F");
    e.label = *label;
  }
  return e;
}

}  // namespace

std::vector<WicExample> read_wic(const std::string& path, ErrorCounter& errors) {
  InputStream in(path);
  std::vector<WicExample> out;
  if (skip_empty_input(require_text_input(in, "WiC or XL-WiC TSV"), in.name())) return out;
  const uint64_t errors_before = errors.count();
  size_t width = 0;  // the file's column count: 5, 8 or 9
  for_each_line(in, [&](uint64_t n, std::string_view line) {
    if (blank(line)) return;
    const std::vector<std::string_view> fields = split_tabs(line);
    if (width == 0 && (fields.size() == 5 || fields.size() == 8 || fields.size() == 9)) width = fields.size();
    if (fields.size() != width) {
      errors.record(in.name(), n,
                    std::to_string(fields.size()) + " columns: WiC has 5, XL-WiC 9 (8 without the label)" +
                        (width ? ", and this file " + std::to_string(width) : std::string()));
      return;
    }
    try {
      WicExample e = parse_wic_line(fields);
      e.line = n;
      if (e.sentence1.empty() || e.sentence2.empty()) throw Error("an empty sentence");
      out.push_back(std::move(e));
      errors.add_valid();
    } catch (const Error& e) {
      errors.record(in.name(), n, e.what());
    }
  });
  refuse_if_all_bad(out, errors, errors_before, in.name());
  // Labels of a file without them: its gold file, line for line.
  const std::string gold = width == 9 ? std::string() : gold_path_of(path);
  if (!gold.empty() && std::filesystem::exists(gold)) {
    InputStream g(gold);
    std::vector<std::string> labels;
    for_each_line(g, [&](uint64_t n, std::string_view line) {
      const std::optional<std::string> label =
          wic_label(std::string_view(line).substr(0, line.find_last_not_of(" \r") + 1));
      if (!label) throw Error(location(g.name(), n) + "'" + std::string(line) + "' is not a label (1/0, T/F)");
      labels.push_back(*label);
    });
    for (WicExample& e : out) {
      if (e.line > labels.size()) throw Error(gold + ": fewer lines than " + path);
      e.label = labels[e.line - 1];
    }
  }
  return out;
}

std::vector<SentenceExample> read_sentence_tsv(const std::string& path, const TsvColumns& columns,
                                               ErrorCounter& errors) {
  InputStream in(path);
  std::vector<SentenceExample> out;
  if (skip_empty_input(require_text_input(in, "TSV with a header line"), in.name())) return out;
  const uint64_t errors_before = errors.count();
  std::optional<size_t> text, pair, label;
  size_t width = 0;
  // Columns given by number (1-based): a file without a header line (XTREME's XNLI and PAWS-X).
  const std::optional<size_t> text_number = column_number(columns.text), label_number = column_number(columns.label),
                              pair_number = column_number(columns.pair);
  if (text_number || label_number || pair_number) {
    if (!text_number || !label_number || (!columns.pair.empty() && !pair_number))
      throw UsageError("TSV columns are all names (a header line) or all numbers (no header): " + columns.text + ", " +
                       (columns.pair.empty() ? "" : columns.pair + ", ") + columns.label);
    text = *text_number - 1, label = *label_number - 1;
    if (pair_number) pair = *pair_number - 1;
    width = std::max({*text, pair.value_or(0), *label}) + 1;
  }
  for_each_line(in, [&](uint64_t n, std::string_view line) {
    if (blank(line)) return;
    const std::vector<std::string_view> fields = split_tabs(line);
    if (!text) {  // the header
      auto find = [&](const std::string& name) -> size_t {
        auto it = std::find(fields.begin(), fields.end(), name);
        if (it != fields.end()) return static_cast<size_t>(it - fields.begin());
        std::string names;
        for (std::string_view f : fields) names += (names.empty() ? "" : ", ") + std::string(f);
        throw Error(location(in.name(), n) + "no column \"" + name + "\" in the header (" + names + ")");
      };
      text = find(columns.text);
      if (!columns.pair.empty()) pair = find(columns.pair);
      label = find(columns.label);
      width = std::max({*text, pair.value_or(0), *label}) + 1;
      return;
    }
    if (fields.size() < width) {
      errors.record(in.name(), n, std::to_string(fields.size()) + " columns, " + std::to_string(width) + " expected");
      return;
    }
    SentenceExample e{std::string(fields[*text]), pair ? std::string(fields[*pair]) : std::string(),
                      std::string(fields[*label]), n};
    if (e.text.empty() || e.label.empty() || (pair && e.pair.empty())) {
      errors.record(in.name(), n, "an empty text or label");
      return;
    }
    out.push_back(std::move(e));
    errors.add_valid();
  });
  refuse_if_all_bad(out, errors, errors_before, in.name());
  return out;
}

RelationExample parse_marked_sentence(std::string_view sentence) {
  if (sentence.size() >= 2 && sentence.front() == '"' && sentence.back() == '"')
    sentence = sentence.substr(1, sentence.size() - 2);
  RelationExample r;
  struct Mark {
    std::string_view text;
    int entity;  // 1 or 2
    bool opens;
  };
  static constexpr Mark kMarks[] = {{"<e1>", 1, true}, {"</e1>", 1, false}, {"<e2>", 2, true}, {"</e2>", 2, false}};
  int seen[2][2] = {{0, 0}, {0, 0}};  // [entity][opens]
  int open = 0;                       // the entity whose opening marker awaits its first character
  int inside = 0;                     // the entity between its markers
  bool space = false;                 // a space goes before the next character
  std::string& text = r.text;
  auto begin_of = [&](int e) -> size_t& { return e == 1 ? r.e1_begin : r.e2_begin; };
  auto end_of = [&](int e) -> size_t& { return e == 1 ? r.e1_end : r.e2_end; };
  for (size_t i = 0; i < sentence.size();) {
    const Mark* mark = nullptr;
    for (const Mark& m : kMarks)
      if (sentence.substr(i, m.text.size()) == m.text) mark = &m;
    if (!mark) {
      const char c = sentence[i++];
      if (c == ' ' && (text.empty() || text.back() == ' ')) continue;
      if (space && !text.empty() && text.back() != ' ' && c != ' ') text += ' ';
      space = false;
      if (open && c != ' ') {
        begin_of(open) = text.size();
        open = 0;
      }
      text += c;
      continue;
    }
    // The spaces inside the markers pad them; those outside separate words.
    const bool space_before = i > 0 && sentence[i - 1] == ' ';
    i += mark->text.size();
    const bool space_after = i < sentence.size() && sentence[i] == ' ';
    while (i < sentence.size() && sentence[i] == ' ') ++i;
    while (!text.empty() && text.back() == ' ') text.pop_back();
    int& count = seen[mark->entity - 1][mark->opens ? 1 : 0];
    if (++count > 1) throw Error("<e" + std::to_string(mark->entity) + "> marked twice");
    if (mark->opens) {
      if (inside) throw Error("<e" + std::to_string(mark->entity) + "> inside <e" + std::to_string(inside) + ">");
      inside = open = mark->entity;
      space = space || space_before;
    } else {
      if (inside != mark->entity) throw Error(std::string(mark->text) + " without its opening marker");
      if (open == mark->entity) begin_of(open) = text.size();  // an empty entity
      end_of(mark->entity) = text.size();
      inside = open = 0;
      space = space_after;
    }
  }
  for (int e = 0; e < 2; ++e)
    if (!seen[e][0] || !seen[e][1])
      throw Error("no <e" + std::to_string(e + 1) + "> … </e" + std::to_string(e + 1) + ">");
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return r;
}

std::vector<RelationExample> read_relx(const std::string& path, ErrorCounter& errors) {
  InputStream in(path);
  std::vector<RelationExample> out;
  if (skip_empty_input(require_text_input(in, "RELX records (ID<TAB>\"sentence\", then the relation)"), in.name()))
    return out;
  const uint64_t errors_before = errors.count();
  std::optional<RelationExample> pending;  // a sentence waiting for its relation line
  bool skip_label = false;                 // the sentence was bad: its relation line goes too
  for_each_line(in, [&](uint64_t n, std::string_view line) {
    if (blank(line) || line.starts_with("Comment:")) return;  // SemEval-2010 task 8's third line
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) {  // a relation line
      if (pending) {
        pending->label = std::string(line.substr(line.find_first_not_of(" ")));
        out.push_back(std::move(*pending));
        errors.add_valid();
        pending.reset();
      } else if (!skip_label) {
        errors.record(in.name(), n, "a relation line without a sentence before it");
      }
      skip_label = false;
      return;
    }
    if (pending) errors.record(in.name(), pending->line, "no relation line after the sentence");
    pending.reset();
    skip_label = false;
    try {
      RelationExample r = parse_marked_sentence(line.substr(tab + 1));
      r.id = std::string(line.substr(0, tab));
      r.line = n;
      pending = std::move(r);
    } catch (const Error& e) {
      errors.record(in.name(), n, e.what());
      skip_label = true;
    }
  });
  if (pending) errors.record(in.name(), pending->line, "no relation line after the sentence");
  refuse_if_all_bad(out, errors, errors_before, in.name());
  return out;
}

}  // namespace kglm::train::tasks
