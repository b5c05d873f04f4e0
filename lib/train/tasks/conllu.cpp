#include "train/tasks/conllu.hpp"

#include <charconv>

#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"

namespace kglm::train::tasks {

namespace {

constexpr size_t kColumns = 10;

// The TAB-separated fields of a line (CoNLL-U allows spaces inside FORM and LEMMA).
size_t split_fields(std::string_view line, std::string_view* fields) {
  size_t n = 0, begin = 0;
  while (true) {
    const size_t tab = line.find('\t', begin);
    if (n < kColumns) fields[n] = line.substr(begin, tab == std::string_view::npos ? line.npos : tab - begin);
    ++n;
    if (tab == std::string_view::npos) return n;
    begin = tab + 1;
  }
}

// A non-negative decimal integer filling the whole text.
bool parse_number(std::string_view text, int64_t& value) {
  if (text.empty() || text.size() > 9 || text.front() == '+' || text.front() == '-') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

// Builds one sentence line by line, checking what the format requires.
class SentenceBuilder {
 public:
  bool empty() const { return s_.lines.empty(); }

  // The reason the line is bad, or "".
  std::string add(std::string_view line, uint64_t line_no) {
    if (s_.lines.empty()) s_.line = line_no;
    s_.lines.emplace_back(line);
    if (line.starts_with('#')) return "";
    std::string_view f[kColumns];
    const size_t n = split_fields(line, f);
    if (n != kColumns)
      return "expected 10 TAB-separated columns (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC), got " +
             std::to_string(n);
    for (size_t k = 0; k < kColumns; ++k)
      if (f[k].empty()) return "column " + std::to_string(k + 1) + " is empty (write _ for no value)";
    const std::string_view id = f[0];
    const auto next = static_cast<int64_t>(s_.words.size()) + 1;
    int64_t a = 0, b = 0;
    if (const size_t dash = id.find('-'); dash != std::string_view::npos) {
      if (!parse_number(id.substr(0, dash), a) || !parse_number(id.substr(dash + 1), b) || a < 1 || b <= a)
        return "bad multiword-token range '" + std::string(id) + "' (expected A-B with 1 <= A < B)";
      if (a != next) return "the range " + std::string(id) + " must come just before word " + std::to_string(a);
      range_end_ = std::max(range_end_, b);
      return "";
    }
    if (const size_t dot = id.find('.'); dot != std::string_view::npos) {
      if (!parse_number(id.substr(0, dot), a) || !parse_number(id.substr(dot + 1), b) || b < 1)
        return "bad empty-node ID '" + std::string(id) + "' (expected I.K with K >= 1)";
      if (a != next - 1) return "the empty node " + std::string(id) + " must follow word " + std::to_string(a);
      return "";
    }
    if (!parse_number(id, a) || a < 1) return "bad ID '" + std::string(id) + "'";
    if (a != next) return "word " + std::string(id) + " where word " + std::to_string(next) + " was expected";
    ConlluWord w;
    w.form = f[1], w.lemma = f[2], w.upos = f[3], w.xpos = f[4], w.feats = f[5];
    w.deprel = f[7], w.deps = f[8], w.misc = f[9];
    if (f[6] != "_") {
      int64_t head = 0;
      if (!parse_number(f[6], head)) return "bad HEAD '" + std::string(f[6]) + "' (a word ID, 0 for the root, or _)";
      if (head == a) return "word " + std::string(id) + " is its own head";
      w.head = static_cast<int32_t>(head);
    }
    s_.word_lines.push_back(static_cast<uint32_t>(s_.lines.size() - 1));
    s_.words.push_back(std::move(w));
    return "";
  }

  // The reason the complete sentence is bad, or "".
  std::string finish() const {
    if (s_.words.empty()) return "a sentence with no word line";
    const auto n = static_cast<int64_t>(s_.words.size());
    if (range_end_ > n)
      return "a multiword-token range ends at " + std::to_string(range_end_) + ", after the last word";
    const bool annotated = s_.words.front().head != kNoHead;
    for (const ConlluWord& w : s_.words) {
      if ((w.head != kNoHead) != annotated) return "HEAD is _ on some words only";
      if (w.head > n)
        return "HEAD " + std::to_string(w.head) + " is past the sentence's " + std::to_string(n) + " words";
    }
    return "";
  }

  // Only comment lines (a stray '# newdoc' before a blank line, say): nothing to report.
  bool only_comments() const { return s_.words.empty() && s_.word_lines.empty() && all_comments(); }

  ConlluSentence take() {
    ConlluSentence out = std::move(s_);
    s_ = ConlluSentence();
    range_end_ = 0;
    return out;
  }

 private:
  bool all_comments() const {
    for (const std::string& l : s_.lines)
      if (!l.starts_with('#')) return false;
    return true;
  }

  ConlluSentence s_;
  int64_t range_end_ = 0;
};

bool blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

}  // namespace

std::string_view ConlluSentence::universal_deprel(size_t i) const {
  const std::string_view d = words[i].deprel;
  return d.substr(0, d.find(':'));
}

std::vector<ConlluSentence> read_conllu(const std::string& path, ErrorCounter& errors) {
  InputStream in(path);
  std::vector<ConlluSentence> out;
  if (skip_empty_input(require_text_input(in, "CoNLL-U (Universal Dependencies)"), in.name())) return out;
  const uint64_t errors_before = errors.count();
  SentenceBuilder builder;
  bool bad = false;  // the current sentence had a bad line: the rest of it is skipped
  auto end_sentence = [&] {
    if (!bad && !builder.empty() && !builder.only_comments()) {
      if (const std::string why = builder.finish(); !why.empty()) {
        errors.record(in.name(), builder.take().line, why + "; sentence skipped");
      } else {
        out.push_back(builder.take());
        errors.add_valid();
      }
    }
    builder.take();
    bad = false;
  };
  for_each_line(in, [&](uint64_t line_no, std::string_view line) {
    if (blank(line)) return end_sentence();
    if (bad) return;
    if (const std::string why = builder.add(line, line_no); !why.empty()) {
      errors.record(in.name(), line_no, why + "; sentence skipped");
      bad = true;
    }
  });
  end_sentence();
  if (out.empty() && errors.count() > errors_before)
    throw Error(location(in.name()) + "no valid sentence; every one had a bad line");
  if (out.empty()) throw Error(location(in.name()) + "no CoNLL-U sentence");
  return out;
}

ConlluSentence parse_conllu_sentence(std::string_view text, std::string_view name) {
  SentenceBuilder builder;
  uint64_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view line = text.substr(pos, end - pos);
    ++line_no;
    pos = end + 1;
    if (blank(line)) {
      if (pos < text.size() && !blank(text.substr(pos))) throw Error(std::string(name) + ": more than one sentence");
      break;
    }
    if (const std::string why = builder.add(line, line_no); !why.empty())
      throw Error(std::string(name) + ":" + std::to_string(line_no) + ": " + why);
  }
  if (const std::string why = builder.finish(); !why.empty()) throw Error(std::string(name) + ":1: " + why);
  return builder.take();
}

std::string write_conllu_sentence(const ConlluSentence& s, const ConlluReplacement& r) {
  std::string text;
  size_t word = 0;
  for (size_t i = 0; i < s.lines.size(); ++i) {
    const bool is_word = word < s.word_lines.size() && s.word_lines[word] == i;
    if (!is_word || (r.upos.empty() && r.xpos.empty() && r.heads.empty() && r.deprels.empty())) {
      text += s.lines[i];
    } else {
      std::string_view f[kColumns];
      split_fields(s.lines[i], f);
      for (size_t k = 0; k < kColumns; ++k) {
        if (k > 0) text += '\t';
        if (k == 3 && !r.upos.empty())
          text += r.upos[word];
        else if (k == 4 && !r.xpos.empty())
          text += r.xpos[word];
        else if (k == 6 && !r.heads.empty())
          text += r.heads[word] == kNoHead ? std::string("_") : std::to_string(r.heads[word]);
        else if (k == 7 && !r.deprels.empty())
          text += r.deprels[word];
        else
          text += f[k];
      }
    }
    if (is_word) ++word;
    text += '\n';
  }
  return text + '\n';
}

bool looks_like_conllu(std::string_view head) {
  for (size_t pos = 0; pos < head.size();) {
    const size_t end = head.find('\n', pos);
    if (end == std::string_view::npos) return false;  // the first record line is not complete
    const std::string_view line = head.substr(pos, end - pos);
    pos = end + 1;
    if (blank(line) || line.starts_with('#')) continue;
    std::string_view f[kColumns];
    int64_t id = 0;
    const std::string_view first = line.substr(0, line.find_first_of("\t-."));
    return split_fields(line, f) == kColumns && parse_number(first, id);
  }
  return false;
}

}  // namespace kglm::train::tasks
