#include "train/tasks/tagged_reader.hpp"

#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"

namespace kglm::train::tasks {

namespace {

// The whitespace-separated fields of a CoNLL line.
std::vector<std::string_view> columns(std::string_view line) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (true) {
    pos = line.find_first_not_of(" \t", pos);
    if (pos == std::string_view::npos) return out;
    const size_t end = std::min(line.find_first_of(" \t", pos), line.size());
    out.push_back(line.substr(pos, end - pos));
    pos = end;
  }
}

// One word and its tag from a line, or the reason the line is bad.
struct Parsed {
  std::string_view word, tag, lang;
  std::string error;
};

Parsed parse_line(std::string_view line, const TaggedReadOptions& o) {
  Parsed p;
  if (o.format == TaggedFormat::panx) {
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) {
      p.error = "expected lang:word<TAB>tag (no tab)";
      return p;
    }
    const std::string_view left = line.substr(0, tab);
    const size_t colon = left.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == left.size()) {
      p.error = "expected lang:word before the tab, got \"" + std::string(left.substr(0, 40)) + "\"";
      return p;
    }
    p.lang = left.substr(0, colon);
    p.word = left.substr(colon + 1);
    p.tag = line.substr(tab + 1);
    if (p.tag.empty() || p.tag.find_first_of(" \t") != std::string_view::npos)
      p.error = "expected one tag after the tab";
    return p;
  }
  const std::vector<std::string_view> fields = columns(line);
  const int n = static_cast<int>(fields.size());
  const int column = o.tag_column < 0 ? n + o.tag_column : o.tag_column;
  if (n < 2 || column < 1 || column >= n) {
    p.error = "a word and a tag in column " + std::to_string(o.tag_column) + " need more than this line's " +
              std::to_string(n) + " column(s)";
    return p;
  }
  p.word = fields[0];
  p.tag = fields[static_cast<size_t>(column)];
  return p;
}

}  // namespace

std::vector<TaggedSentence> read_tagged(const std::string& path, const TaggedReadOptions& options,
                                        ErrorCounter& errors) {
  InputStream in(path);
  std::vector<TaggedSentence> out;
  if (skip_empty_input(require_text_input(in, "word-tagged sentences (PAN-X or CoNLL columns)"), in.name())) return out;
  const uint64_t errors_before = errors.count();
  TaggedSentence current;
  bool bad = false;  // the current sentence had a bad line: it is dropped whole
  auto end_sentence = [&] {
    if (!bad && !current.words.empty()) {
      out.push_back(std::move(current));
      errors.add_valid();
    }
    current = TaggedSentence();
    bad = false;
  };
  for_each_line(in, [&](uint64_t line_no, std::string_view line) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) return end_sentence();
    if (options.format == TaggedFormat::conll && line.starts_with("-DOCSTART-")) return end_sentence();
    if (bad) return;
    const Parsed p = parse_line(line, options);
    if (!p.error.empty()) {
      errors.record(in.name(), line_no, p.error + "; sentence skipped");
      bad = true;
      return;
    }
    if (current.words.empty()) {
      current.line = line_no;
      current.lang = options.lang.empty() ? std::string(p.lang) : options.lang;
    }
    current.words.emplace_back(p.word);
    current.tags.emplace_back(p.tag);
  });
  end_sentence();
  if (out.empty() && errors.count() > errors_before)
    throw Error(location(in.name()) + "no valid sentence; every one had a bad line");
  return out;
}

}  // namespace kglm::train::tasks
