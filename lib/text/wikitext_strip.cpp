#include "text/wikitext_strip.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "core/byte_scan.hpp"
#include "text/unicode.hpp"

namespace kglm::text::detail {

namespace {

// Tags whose content is not article text: removed with it.
const StringSet& tags_without_text() {
  static const StringSet set = {"ref",
                                "references",
                                "gallery",
                                "math",
                                "chem",
                                "ce",
                                "timeline",
                                "imagemap",
                                "score",
                                "graph",
                                "syntaxhighlight",
                                "source",
                                "pre",
                                "templatedata",
                                "templatestyles",
                                "mapframe",
                                "maplink",
                                "indicator",
                                "hiero",
                                "inputbox",
                                "categorytree",
                                "noinclude",
                                "includeonly",
                                "table",
                                "charinsert",
                                "dynamicpagelist",
                                "poll",
                                "style",
                                "script",
                                "object"};
  return set;
}

// Tags that are removed while their content stays; block-level ones become a line break.
const StringSet& inline_tags() {
  static const StringSet set = {
      "span", "small",  "big",         "sup",     "sub",  "b",         "i",    "u",         "s",    "strike", "del",
      "ins",  "em",     "strong",      "font",    "cite", "abbr",      "code", "tt",        "var",  "kbd",    "samp",
      "q",    "nowiki", "onlyinclude", "section", "bdi",  "bdo",       "mark", "time",      "data", "wbr",    "rb",
      "rp",   "rt",     "ruby",        "dfn",     "img",  "translate", "tvar", "languages", "a"};
  return set;
}
const StringSet& block_tags() {
  static const StringSet set = {"div", "p",  "br",    "hr",    "center", "blockquote", "poem",
                                "li",  "ul", "ol",    "dl",    "dt",     "dd",         "h1",
                                "h2",  "h3", "h4",    "h5",    "h6",     "caption",    "tr",
                                "td",  "th", "tbody", "thead", "tfoot",  "figure",     "figcaption"};
  return set;
}

bool starts_with_icase(std::string_view s, size_t pos, std::string_view prefix) {
  if (s.size() - pos < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    char c = s[pos + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

size_t end_of_paragraph(std::string_view s, size_t pos) {
  size_t p = s.find("\n\n", pos);
  return p == std::string_view::npos ? s.size() : p;
}

size_t end_of_line(std::string_view s, size_t pos) {
  size_t p = s.find('\n', pos);
  return p == std::string_view::npos ? s.size() : p;
}

// A parsed tag at s[pos] == '<': its lower-case name, whether it closes or self-closes, its end.
struct Tag {
  std::string name;
  bool closing = false;
  bool self_closing = false;
  size_t end = 0;
};

bool parse_tag(std::string_view s, size_t pos, Tag& tag) {
  size_t i = pos + 1;
  if (i < s.size() && s[i] == '/') {
    tag.closing = true;
    ++i;
  }
  size_t name_begin = i;
  while (i < s.size() && is_ascii_alnum(s[i]) && i - name_begin < 32) ++i;
  if (i == name_begin) return false;
  tag.name = ascii_lower(s.substr(name_begin, i - name_begin));
  if (i < s.size() && !(is_space(s[i]) || s[i] == '\n' || s[i] == '>' || s[i] == '/')) return false;
  // Attributes: up to the next '>' (quoted values may not hide it in wikitext).
  size_t close = s.find('>', i);
  if (close == std::string_view::npos || s.substr(i, close - i).find('<') != std::string_view::npos) return false;
  tag.self_closing = close > pos && s[close - 1] == '/';
  tag.end = close + 1;
  return true;
}

// The end of the closing tag </name> after pos, or npos.
size_t find_closing_tag(std::string_view s, size_t pos, std::string_view name) {
  for (;;) {
    pos = s.find("</", pos);
    if (pos == std::string_view::npos) return pos;
    if (starts_with_icase(s, pos + 2, name)) {
      size_t i = pos + 2 + name.size();
      while (i < s.size() && (is_space(s[i]) || s[i] == '\n')) ++i;
      if (i < s.size() && s[i] == '>') return i + 1;
    }
    pos += 2;
  }
}

// __NOTOC__ and the other behaviour switches: "__" upper-case letters "__".
size_t magic_word_length(std::string_view s, size_t pos) {
  size_t i = pos + 2;
  while (i < s.size() && s[i] >= 'A' && s[i] <= 'Z') ++i;
  if (i == pos + 2 || i + 1 >= s.size() || s[i] != '_' || s[i + 1] != '_') return 0;
  return i + 2 - pos;
}

// Half-open byte ranges to drop, merged and applied in one copy.
class Cuts {
 public:
  void add(size_t begin, size_t end) {
    if (begin < end) ranges_.emplace_back(begin, end);
  }
  void apply(std::string_view in, std::string& out) {
    std::sort(ranges_.begin(), ranges_.end());
    out.clear();
    out.reserve(in.size());
    size_t pos = 0;
    for (auto [b, e] : ranges_) {
      if (b > pos) out.append(in.substr(pos, b - pos));
      pos = std::max(pos, e);
    }
    if (pos < in.size()) out.append(in.substr(pos));
  }

 private:
  std::vector<std::pair<size_t, size_t>> ranges_;
};

void check_depth(size_t depth, unsigned max_depth, const char* what, size_t offset) {
  if (depth > max_depth)
    throw WikitextError(std::string(what) + " nested deeper than " + std::to_string(max_depth) + " at byte " +
                        std::to_string(offset));
}

}  // namespace

void strip_tags(std::string_view in, std::string& out, CleanReport& report) {
  static const ByteSet special("<_");
  out.clear();
  out.reserve(in.size());
  size_t pos = 0;
  while (pos < in.size()) {
    size_t next = special.find(in, pos);
    out.append(in.substr(pos, next - pos));
    if (next >= in.size()) break;
    pos = next;
    if (in[pos] == '_') {
      size_t n = in.compare(pos, 2, "__") == 0 ? magic_word_length(in, pos) : 0;
      if (n == 0) out.push_back('_');
      pos += n == 0 ? 1 : n;
      continue;
    }
    if (in.compare(pos, 4, "<!--") == 0) {
      size_t end = in.find("-->", pos + 4);
      if (end == std::string_view::npos) {
        ++report.unterminated;
        break;  // MediaWiki hides everything after an unclosed comment
      }
      pos = end + 3;
      continue;
    }
    Tag tag;
    if (!parse_tag(in, pos, tag)) {
      out.push_back('<');
      ++pos;
      continue;
    }
    if (tags_without_text().count(tag.name)) {
      pos = tag.end;
      if (tag.closing || tag.self_closing) continue;
      size_t end = find_closing_tag(in, pos, tag.name);
      if (end == std::string_view::npos) {
        ++report.unterminated;
        end = end_of_paragraph(in, pos);
      }
      pos = end;
    } else if (block_tags().count(tag.name)) {
      out.push_back('\n');
      pos = tag.end;
    } else if (inline_tags().count(tag.name)) {
      pos = tag.end;
    } else {
      out.push_back('<');  // not markup: "a <b" or an unknown tag is shown as text
      ++pos;
    }
  }
}

void strip_templates(std::string_view in, std::string& out, unsigned max_depth, CleanReport& report) {
  static const ByteSet braces("{}");
  struct Open {
    size_t pos;
    size_t count;  // unmatched '{' of this run
  };
  std::vector<Open> stack;
  Cuts cuts;
  size_t pos = 0;
  for (;;) {
    pos = braces.find(in, pos);
    if (pos >= in.size()) break;
    char c = in[pos];
    size_t run = 1;
    while (pos + run < in.size() && in[pos + run] == c) ++run;
    if (run < 2) {
      ++pos;
      continue;
    }
    if (c == '{') {
      stack.push_back({pos, run});
      check_depth(stack.size(), max_depth, "templates", pos);
    } else if (stack.empty()) {
      ++report.stray_closers;
      cuts.add(pos, pos + run);
    } else {
      size_t closes = run;
      while (closes >= 2 && !stack.empty()) {
        Open& top = stack.back();
        size_t matched = std::min(top.count, closes);
        top.count -= matched;
        closes -= matched;
        if (top.count < 2) {
          cuts.add(top.pos, pos + run - closes);
          stack.pop_back();
        }
      }
      if (stack.empty() && closes >= 2) {
        ++report.stray_closers;
        cuts.add(pos + run - closes, pos + run);
      }
    }
    pos += run;
  }
  // Unclosed openers: MediaWiki shows them as text; the rest of their line is template arguments.
  for (const Open& open : stack) {
    ++report.unterminated;
    cuts.add(open.pos, end_of_line(in, open.pos));
  }
  cuts.apply(in, out);
}

void strip_tables(std::string_view in, std::string& out, unsigned max_depth, CleanReport& report) {
  std::vector<size_t> open_tables;
  Cuts cuts;
  size_t line = 0;
  while (line < in.size()) {
    size_t eol = end_of_line(in, line);
    size_t i = line;
    while (i < eol && (is_space(in[i]) || in[i] == ':')) ++i;
    if (in.compare(i, 2, "{|") == 0) {
      open_tables.push_back(line);
      check_depth(open_tables.size(), max_depth, "tables", line);
    } else if (in.compare(i, 2, "|}") == 0) {
      if (open_tables.empty()) {
        ++report.stray_closers;
        cuts.add(line, eol);
      } else {
        if (open_tables.size() == 1) cuts.add(open_tables.front(), eol);
        open_tables.pop_back();
      }
    }
    line = eol + 1;
  }
  // MediaWiki closes open tables at the end of the page, so everything after one is table.
  if (!open_tables.empty()) {
    ++report.unterminated;
    cuts.add(open_tables.front(), in.size());
  }
  cuts.apply(in, out);
}

LinkKind classify_link_target(std::string_view target, const LinkNamespaces& namespaces) {
  target = trim(target);
  bool leading_colon = !target.empty() && target[0] == ':';
  if (leading_colon) target = trim(target.substr(1));
  size_t colon = target.find(':');
  if (colon != std::string_view::npos) {
    std::string prefix = ascii_lower(trim(target.substr(0, colon)));
    std::replace(prefix.begin(), prefix.end(), '_', ' ');
    if (namespaces.dropped.count(prefix)) return leading_colon ? LinkKind::text_only : LinkKind::dropped;
    if (namespaces.other.count(prefix)) return LinkKind::text_only;
    if (is_language_prefix(prefix)) return leading_colon ? LinkKind::text_only : LinkKind::dropped;
  }
  return LinkKind::article;
}

void strip_dropped_links(std::string_view in, std::string& out, const LinkNamespaces& namespaces, unsigned max_depth,
                         CleanReport& report) {
  Cuts cuts;
  size_t pos = 0;
  for (;;) {
    pos = in.find("[[", pos);
    if (pos == std::string_view::npos) break;
    static const ByteSet kTargetEnd("|]\n");
    size_t target_end = kTargetEnd.find(in, pos + 2);
    if (classify_link_target(in.substr(pos + 2, target_end - pos - 2), namespaces) != LinkKind::dropped) {
      pos += 2;
      continue;
    }
    // Find the matching "]]", counting the links nested in the caption.
    size_t depth = 1;
    size_t i = pos + 2;
    while (i + 1 < in.size() && depth > 0) {
      if (in[i] == '[' && in[i + 1] == '[') {
        check_depth(++depth, max_depth, "links", i);
        i += 2;
      } else if (in[i] == ']' && in[i + 1] == ']') {
        --depth;
        i += 2;
      } else {
        ++i;
      }
    }
    if (depth > 0) {
      ++report.unterminated;
      i = end_of_line(in, pos);
    }
    cuts.add(pos, i);
    pos = i;
  }
  cuts.apply(in, out);
}

}  // namespace kglm::text::detail
