#include "text/wikitext.hpp"

#include <algorithm>
#include <array>

#include "core/byte_scan.hpp"
#include "text/html_entities.hpp"
#include "text/unicode.hpp"
#include "text/wikitext_strip.hpp"

namespace kglm::text {

using detail::LinkKind;

// ---- titles ----

namespace {

// %XX sequences decoded when the result is valid UTF-8 (as MediaWiki does for link targets).
std::string percent_decode(std::string_view s) {
  if (s.find('%') == std::string_view::npos) return std::string(s);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    int hi = 0, lo = 0;
    if (s[i] == '%' && i + 2 < s.size() && (hi = hex_digit_value(s[i + 1])) >= 0 &&
        (lo = hex_digit_value(s[i + 2])) >= 0) {
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return is_valid_utf8(out) ? out : std::string(s);
}

}  // namespace

std::string normalize_title(std::string_view raw) {
  std::string decoded;
  if (raw.find('&') != std::string_view::npos) {
    append_entities_decoded(decoded, raw, true);
    raw = decoded;
  }
  std::string percent;
  if (raw.find('%') != std::string_view::npos) {
    percent = percent_decode(raw);
    raw = percent;
  }
  raw = raw.substr(0, raw.find('#'));
  std::string title;
  title.reserve(raw.size());
  for (char c : raw) {
    if (c == '_' || is_space(c) || c == '\n') {
      if (!title.empty() && title.back() != ' ') title.push_back(' ');
    } else {
      title.push_back(c);
    }
  }
  if (!title.empty() && title.back() == ' ') title.pop_back();
  if (!title.empty() && title[0] >= 'a' && title[0] <= 'z') {
    title[0] = static_cast<char>(title[0] - 'a' + 'A');
    return title;
  }
  return static_cast<unsigned char>(title.empty() ? 0 : title[0]) < 0x80 ? title : upper_first(title);
}

std::string redirect_target(std::string_view wikitext) {
  std::string_view s = trim(wikitext);
  if (s.size() < 9 || ascii_lower(s.substr(0, 9)) != "#redirect") return {};
  s.remove_prefix(9);
  while (!s.empty() && (is_space(s.front()) || s.front() == ':' || s.front() == '\n')) s.remove_prefix(1);
  if (s.substr(0, 2) != "[[") return {};
  size_t end = s.find_first_of("|]\n", 2);
  if (end == std::string_view::npos) return {};
  std::string_view target = trim(s.substr(2, end - 2));
  if (!target.empty() && target[0] == ':') target.remove_prefix(1);
  return normalize_title(target);
}

// ---- rendering ----

namespace {

bool is_url_start(std::string_view s) {
  static const char* kProtocols[] = {"http://",   "https://", "ftp://",       "ftps://", "//",
                                     "mailto:",   "irc://",   "ircs://",      "news:",   "gopher://",
                                     "telnet://", "nntp://",  "svn://",       "git://",  "mms://",
                                     "sftp://",   "ssh://",   "urn:",         "geo:",    "tel:",
                                     "sms:",      "xmpp:",    "worldwind://", "magnet:", "bitcoin:"};
  for (const char* p : kProtocols) {
    std::string_view proto(p);
    if (s.size() >= proto.size() && ascii_lower(s.substr(0, proto.size())) == proto) return true;
  }
  return false;
}

// Characters that keep title text from being a link target.
bool has_invalid_title_chars(std::string_view s) {
  static const ByteSet kInvalid("<>[]{}|");
  return kInvalid.find(s, 0) < s.size();
}

// The pipe trick: [[Help:Foo (bar)|]] shows "Foo".
std::string pipe_trick(std::string_view target) {
  size_t colon = target.find(':');
  if (colon != std::string_view::npos) target.remove_prefix(colon + 1);
  size_t paren = target.find(" (");
  if (paren != std::string_view::npos && !target.empty() && target.back() == ')') target = target.substr(0, paren);
  size_t comma = target.find(", ");
  if (comma != std::string_view::npos) target = target.substr(0, comma);
  return std::string(trim(target));
}

// Accumulates text with collapsed spaces, lines created lazily so empty lines never appear.
class Sink {
 public:
  explicit Sink(std::string& out) : out_(out) {}
  void space() { pending_space_ = true; }
  void new_line() {
    need_newline_ = !out_.empty();
    pending_space_ = false;
  }
  void append(std::string_view s) {
    if (s.empty()) return;
    if (need_newline_) {
      out_.push_back('\n');
      need_newline_ = false;
    } else if (pending_space_ && !out_.empty() && out_.back() != '\n') {
      out_.push_back(' ');
    }
    pending_space_ = false;
    out_.append(s);
  }
  // Text that may contain blanks, collapsed on the way: one tight loop instead of a call per word.
  void append_words(std::string_view s) {
    // Fast path: single spaces between words, the usual case, is copied as it is.
    static const ByteSet kOtherBlanks("\t\r\f\v");
    bool leading = !s.empty() && is_space(s.front());
    bool trailing = !s.empty() && is_space(s.back());
    std::string_view middle = trim(s);  // s holds no line breaks
    if (!middle.empty() && kOtherBlanks.find_padded(middle, 0) == middle.size() &&
        find_repeated_padded(middle, ' ') == middle.size()) {
      if (leading) pending_space_ = true;
      append(middle);
      pending_space_ = trailing;
      return;
    }
    size_t old = out_.size();
    out_.resize(old + s.size() + 2);
    char* const begin = out_.data();
    char* dst = begin + old;
    // Locals, not members: stores through dst could alias members and keep them out of registers.
    bool pending = pending_space_;
    bool newline = need_newline_;
    bool line_start = dst == begin || dst[-1] == '\n';
    for (char c : s) {
      if (static_cast<unsigned char>(c) <= ' ' && is_space(c)) {
        pending = true;
        continue;
      }
      if (newline) {
        *dst++ = '\n';
        newline = false;
      } else if (pending && !line_start) {
        *dst++ = ' ';
      }
      pending = false;
      line_start = false;
      *dst++ = c;
    }
    pending_space_ = pending;
    need_newline_ = newline;
    out_.resize(static_cast<size_t>(dst - begin));
  }
  size_t size() const { return out_.size(); }

 private:
  std::string& out_;
  bool pending_space_ = false;
  bool need_newline_ = false;
};

class Renderer {
 public:
  Renderer(const LinkNamespaces& namespaces, Document& doc) : namespaces_(namespaces), doc_(doc), sink_(doc.text) {}

  void render(std::string_view wikitext) {
    bool in_paragraph = false;
    size_t pos = 0;
    while (pos <= wikitext.size()) {
      size_t eol = wikitext.find('\n', pos);
      if (eol == std::string_view::npos) eol = wikitext.size();
      render_line(wikitext.substr(pos, eol - pos), in_paragraph);
      pos = eol + 1;
    }
    finish_sections();
  }

 private:
  void render_line(std::string_view line, bool& in_paragraph) {
    std::string_view content = trim(line);
    if (content.empty()) {
      in_paragraph = false;
      return;
    }
    int level = 0;
    std::string_view title;
    if (parse_heading(content, level, title)) {
      in_paragraph = false;
      start_section(level, title);
      return;
    }
    if (content.substr(0, 4) == "----") {
      in_paragraph = false;
      return;
    }
    char first = content[0];
    if (first == '*' || first == '#' || first == ':' || first == ';') {
      in_paragraph = false;
      while (!content.empty() && (content[0] == '*' || content[0] == '#' || content[0] == ':' || content[0] == ';'))
        content.remove_prefix(1);
      sink_.new_line();
      render_inline(content, sink_, &doc_.links);
      return;
    }
    if (in_paragraph)
      sink_.space();
    else
      sink_.new_line();
    in_paragraph = true;
    render_inline(content, sink_, &doc_.links);
  }

  static bool parse_heading(std::string_view s, int& level, std::string_view& title) {
    if (s.size() < 3 || s.front() != '=' || s.back() != '=') return false;
    size_t lead = s.find_first_not_of('=');
    if (lead == std::string_view::npos) return false;
    size_t trail = s.size() - 1 - s.find_last_not_of('=');
    size_t n = std::min<size_t>({lead, trail, 6});
    title = trim(s.substr(n, s.size() - 2 * n));
    if (title.empty()) return false;
    level = static_cast<int>(n);
    return true;
  }

  void start_section(int level, std::string_view wikititle) {
    std::string title;
    Sink title_sink(title);
    render_inline(wikititle, title_sink, nullptr);
    Section section;
    section.title = std::move(title);
    section.level = level;
    section.end = static_cast<uint32_t>(sink_.size());  // the heading's position; see finish_sections
    doc_.sections.push_back(std::move(section));
    sink_.new_line();
  }

  void finish_sections() {
    const uint32_t size = static_cast<uint32_t>(doc_.text.size());
    doc_.root_end = doc_.sections.empty() ? size : doc_.sections.front().end;
    for (size_t i = 0; i < doc_.sections.size(); ++i) {
      uint32_t at = doc_.sections[i].end;
      uint32_t end = i + 1 < doc_.sections.size() ? doc_.sections[i + 1].end : size;
      uint32_t begin = at == 0 ? 0 : at + 1;  // past the newline that starts its first line
      doc_.sections[i].begin = std::min(begin, end);
      doc_.sections[i].end = end;
    }
  }

  // One line of inline markup: links, external links, quotes, character references. s must be
  // followed by ByteSet::kPadding readable bytes (it is a view into the padded page buffer).
  void render_inline(std::string_view s, Sink& sink, std::vector<Link>* links) {
    static const ByteSet kSpecial("[]'&");
    size_t i = 0;
    while (i < s.size()) {
      size_t run = kSpecial.find_padded(s, i);
      if (run > i) {
        sink.append_words(s.substr(i, run - i));
        i = run;
        continue;
      }
      char c = s[i];
      if (c == '[' && s.compare(i, 3, "[[[") == 0) {
        sink.append("[");  // "[[[x]]]" is a bracket before the link [[x]]
        ++i;
      } else if (c == '[') {
        i = s.compare(i, 2, "[[") == 0 ? render_internal_link(s, i, sink, links) : render_external_link(s, i, sink);
      } else if (c == ']') {
        if (s.compare(i, 2, "]]") == 0) {
          i += 2;  // a stray "]]" is dropped
        } else {
          sink.append("]");
          ++i;
        }
      } else if (c == '\'') {
        i = render_quotes(s, i, sink);
      } else {  // '&'
        uint32_t cp;
        size_t n = decode_entity(s.substr(i), cp);
        if (n == 0) {
          sink.append("&");
          ++i;
        } else {
          // Spaces and control characters (&#10; included) are blanks: lines stay lines.
          if (cp <= 0x20 || cp == 0x7F || cp == 0xA0 || cp == 0x2002 || cp == 0x2003 || cp == 0x2009) {
            sink.space();
          } else {
            std::string utf8;
            append_utf8(utf8, cp);
            sink.append(utf8);
          }
          i += n;
        }
      }
    }
  }

  // '' italic, ''' bold, ''''' both: removed. Four quotes are an apostrophe plus bold; longer
  // runs keep the extra apostrophes, as MediaWiki does.
  static size_t render_quotes(std::string_view s, size_t i, Sink& sink) {
    size_t n = 0;
    while (i + n < s.size() && s[i + n] == '\'') ++n;
    if (n == 1) sink.append("'");
    if (n == 4) sink.append("'");
    if (n > 5) sink.append(std::string(n - 5, '\''));
    return i + n;
  }

  // [http://example.org label] -> label; a bare [http://example.org] -> nothing.
  size_t render_external_link(std::string_view s, size_t i, Sink& sink) {
    // The closing ']' is the first one outside internal links of the label.
    size_t close = i + 1;
    for (int depth = 0; close < s.size(); ++close) {
      if (s.compare(close, 2, "[[") == 0) {
        ++depth;
        ++close;
      } else if (depth > 0 && s.compare(close, 2, "]]") == 0) {
        --depth;
        ++close;
      } else if (s[close] == ']' && depth == 0) {
        break;
      }
    }
    if (close >= s.size() || !is_url_start(s.substr(i + 1))) {
      sink.append("[");
      return i + 1;
    }
    std::string_view inner = s.substr(i + 1, close - i - 1);
    size_t space = inner.find_first_of(" \t");
    if (space != std::string_view::npos) render_inline(inner.substr(space + 1), sink, nullptr);
    return close + 1;
  }

  size_t render_internal_link(std::string_view s, size_t i, Sink& sink, std::vector<Link>* links) {
    // The link ends at the first "]]"; another "[[" first means this one is not a link.
    size_t j = i + 2;
    while (j + 1 < s.size() && !((s[j] == ']' && s[j + 1] == ']') || (s[j] == '[' && s[j + 1] == '['))) ++j;
    if (j + 1 >= s.size() || s[j] == '[') return i + 2;  // unclosed: the brackets are dropped
    std::string_view inner = s.substr(i + 2, j - i - 2);
    size_t after = j + 2;
    size_t bar = inner.find('|');
    std::string_view target = trim(inner.substr(0, bar));
    LinkKind kind = detail::classify_link_target(target, namespaces_);
    if (kind == LinkKind::dropped) return after;
    if (!target.empty() && target[0] == ':') target = trim(target.substr(1));
    std::string normalized = normalize_title(target);
    if (normalized.empty() || has_invalid_title_chars(normalized) || target[0] == '#') kind = LinkKind::text_only;

    std::string shown;
    Sink shown_sink(shown);
    if (bar == std::string_view::npos) {
      render_inline(target, shown_sink, nullptr);
    } else {
      std::string_view anchor = trim(inner.substr(bar + 1));
      if (anchor.empty()) {
        std::string trick = pipe_trick(target);
        size_t length = trick.size();
        trick.append(ByteSet::kPadding, '\0');  // render_inline's precondition
        render_inline(std::string_view(trick).substr(0, length), shown_sink, nullptr);
      } else {
        render_inline(anchor, shown_sink, nullptr);
      }
    }
    if (shown.empty()) return after;
    // The link trail: letters glued to "]]" are part of the anchor (English rule: a-z).
    size_t trail = after;
    while (trail < s.size() && s[trail] >= 'a' && s[trail] <= 'z') ++trail;
    shown.append(s.substr(after, trail - after));
    sink.append(shown);
    if (kind == LinkKind::article && links != nullptr) {
      uint32_t end = static_cast<uint32_t>(sink.size());
      links->push_back({static_cast<uint32_t>(end - shown.size()), end, std::move(normalized)});
    }
    return trail;
  }

  const LinkNamespaces& namespaces_;
  Document& doc_;
  Sink sink_;
};

}  // namespace

void clean_wikitext(std::string_view wikitext, const CleanOptions& options, Document& doc, CleanReport* report) {
  static const LinkNamespaces kEnglish = LinkNamespaces::english();
  const LinkNamespaces& namespaces = options.namespaces ? *options.namespaces : kEnglish;
  if (wikitext.size() >= UINT32_MAX) throw WikitextError("page text is larger than 4 GB");
  CleanReport local;
  CleanReport& r = report ? *report : local;
  std::string a, b;
  detail::strip_tags(wikitext, a, r);
  detail::strip_templates(a, b, options.max_depth, r);
  detail::strip_tables(b, a, options.max_depth, r);
  detail::strip_dropped_links(a, b, namespaces, options.max_depth, r);
  doc.text.clear();
  doc.links.clear();
  doc.sections.clear();
  doc.text.reserve(b.size());
  const size_t length = b.size();
  b.append(ByteSet::kPadding, '\0');  // lets the renderer scan whole vectors
  Renderer(namespaces, doc).render(std::string_view(b).substr(0, length));
}

}  // namespace kglm::text
