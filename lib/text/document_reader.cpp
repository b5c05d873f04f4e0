#include "text/document_reader.hpp"

#include "core/error.hpp"
#include "text/html_entities.hpp"

namespace kglm::text {

DocumentReader::DocumentReader(InputStream& input) : batcher_(input) {}

bool DocumentReader::next_line(std::string_view& line, uint64_t& number) {
  while (offset_ >= batch_.size) {
    if (!batcher_.next(batch_)) {
      if (!batcher_.stream_error().empty()) throw Error(batcher_.stream_error());
      return false;
    }
    offset_ = 0;
    line_ = batch_.first_line;
  }
  std::string_view all = batch_.lines();
  size_t end = std::min(all.find('\n', offset_), all.size());
  line = all.substr(offset_, end - offset_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  number = line_++;
  offset_ = end + 1;
  return true;
}

namespace {

// The value of attribute name="…" in a <doc …> header, entity references decoded.
bool attribute(std::string_view header, std::string_view name, std::string& value) {
  std::string key = " " + std::string(name) + "=\"";
  size_t start = header.find(key);
  if (start == std::string_view::npos) return false;
  start += key.size();
  size_t end = header.find('"', start);
  if (end == std::string_view::npos) return false;
  value.clear();
  append_entities_decoded(value, header.substr(start, end - start));
  return true;
}

}  // namespace

bool DocumentReader::read_plain(std::string_view header, Document& doc, std::string& error) {
  if (!attribute(header, "id", doc.id) || !attribute(header, "title", doc.title)) {
    error = "a <doc> header without id=\"…\" and title=\"…\"";
    doc.id.clear();
  }
  std::string body;
  std::string_view line;
  uint64_t number;
  bool first = true;
  while (next_line(line, number)) {
    if (line == "</doc>") {
      parse_linked_text(body, doc);
      return true;
    }
    if (!first) body.push_back('\n');
    body.append(line);
    first = false;
  }
  error = "the input ends inside a <doc> block";
  doc.id.clear();
  return true;
}

bool DocumentReader::next(Document& doc, uint64_t& line, std::string& error) {
  error.clear();
  std::string_view text;
  for (;;) {
    if (!next_line(text, line)) return false;
    if (text.find_first_not_of(" \t") != std::string_view::npos) break;
  }
  if (form_ == Form::unknown) form_ = text.substr(0, 4) == "<doc" ? Form::plain : Form::json;
  if (form_ == Form::plain) {
    if (text.substr(0, 5) != "<doc ") {
      error = "expected a <doc …> line";
      doc.id.clear();
      return true;
    }
    return read_plain(text, doc, error);
  }
  try {
    doc = parse_document_json(text);
  } catch (const Error& e) {
    error = e.what();
    doc.id.clear();
  }
  return true;
}

}  // namespace kglm::text
