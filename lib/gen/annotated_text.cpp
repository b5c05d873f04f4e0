#include "gen/annotated_text.hpp"

#include <cstring>

#include "core/json_writer.hpp"

namespace kglm::gen {

void AnnotatedText::append_span(std::string_view s, const char* kind, std::string_view id) {
  Span span;
  span.begin = static_cast<uint32_t>(text_.size());
  text_.append(s);
  span.end = static_cast<uint32_t>(text_.size());
  span.kind = kind;
  span.id = std::string(id);
  spans_.push_back(std::move(span));
}

void AnnotatedText::append_text(const AnnotatedText& other) {
  const uint32_t shift = static_cast<uint32_t>(text_.size());
  text_.append(other.text_);
  for (Span s : other.spans_) {
    s.begin += shift;
    s.end += shift;
    spans_.push_back(std::move(s));
  }
}

void AnnotatedText::append_triple(const std::array<std::string_view, 3>& forms,
                                  const std::array<std::string_view, 3>& ids) {
  append_span(forms[0], "entity", ids[0]);
  append(" ");
  append_span("[mask]", "link", "");
  append(" ");
  append_span(forms[1], "relation", ids[1]);
  append(" ");
  append_span("[mask]", "link", "");
  append(" ");
  if (ids[2].empty())
    append(forms[2]);  // a literal value
  else
    append_span(forms[2], "entity", ids[2]);
  append(".");
}

void AnnotatedText::append_json_open(std::string& out, std::string_view lang) const {
  out += "{\"text\":";
  append_json_string(out, text_);
  out += ",\"lang\":";
  append_json_string(out, lang);
  out += ",\"spans\":[";
  for (size_t i = 0; i < spans_.size(); ++i) {
    const Span& s = spans_[i];
    if (i > 0) out.push_back(',');
    out.push_back('[');
    append_json_uint(out, s.begin);
    out.push_back(',');
    append_json_uint(out, s.end);
    out += ",\"";
    out += s.kind;
    out += "\",";
    append_json_string(out, s.id);
    out.push_back(']');
  }
  out.push_back(']');
}

void AnnotatedText::append_json(std::string& out, std::string_view lang, std::string_view extra) const {
  append_json_open(out, lang);
  out.append(extra);
  out += "}\n";
}

std::string AnnotatedText::with_entity_markers() const {
  std::string out;
  size_t pos = 0;
  for (const Span& s : spans_) {
    if (std::strcmp(s.kind, "entity") != 0) continue;
    out.append(text_, pos, s.begin - pos);
    out += "<e>";
    out.append(text_, s.begin, s.end - s.begin);
    out += "</e>";
    pos = s.end;
  }
  out.append(text_, pos, std::string::npos);
  return out;
}

}  // namespace kglm::gen
