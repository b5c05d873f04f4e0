// Annotated text (DESIGN.md, man 5 kglm-annotated): text with typed spans over UTF-8 byte
// offsets, the record every generator writes and pretrain's data preparation reads.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kglm::gen {

struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
  const char* kind = "entity";  // entity, relation, link, answer
  std::string id;               // Q.../P... ("" for link slots)
};

// Builds a text and its spans piece by piece.
class AnnotatedText {
 public:
  void append(std::string_view s) { text_.append(s); }
  // Appends s as a span of kind with id.
  void append_span(std::string_view s, const char* kind, std::string_view id);
  // KMLM's sentence for a triple: "h [mask] r [mask] t." with entity, link, relation, link,
  // entity spans. ids: the entity, relation and entity ids; an empty object id marks a literal
  // value, which gets no span.
  void append_triple(const std::array<std::string_view, 3>& forms, const std::array<std::string_view, 3>& ids);
  // Appends other's text and spans (shifted).
  void append_text(const AnnotatedText& other);
  void clear() {
    text_.clear();
    spans_.clear();
  }
  const std::string& text() const { return text_; }
  const std::vector<Span>& spans() const { return spans_; }

  // {"text":…,"lang":…,"spans":[[b,e,kind,id],…] without the closing brace: the caller appends
  // its own members and "}\n".
  void append_json_open(std::string& out, std::string_view lang) const;
  // {"text":…,"lang":…,"spans":[[b,e,kind,id],…] followed by `extra` (",\"k\":v…" JSON members,
  // possibly empty) and "}\n".
  void append_json(std::string& out, std::string_view lang, std::string_view extra) const;
  // The text with <e>…</e> around entity spans (EntityCS's marked form).
  std::string with_entity_markers() const;

 private:
  std::string text_;
  std::vector<Span> spans_;
};

}  // namespace kglm::gen
