// Reads wiki-extract's documents in either form: JSONL (man 5 kglm-docs) or the plain <doc> blocks
// with [[target|anchor]] links; the form is recognised from the first non-blank line.
#pragma once

#include <cstdint>
#include <string>

#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"
#include "text/document.hpp"

namespace kglm::text {

class DocumentReader {
 public:
  explicit DocumentReader(InputStream& input);

  // The next document and the line it starts on; false at the end. A bad record sets `error`
  // (and returns true with an empty doc.id), so callers can count it and go on.
  bool next(Document& doc, uint64_t& line, std::string& error);

 private:
  bool next_line(std::string_view& line, uint64_t& number);
  bool read_plain(std::string_view header, Document& doc, std::string& error);

  LineBatcher batcher_;
  LineBatch batch_;
  size_t offset_ = 0;
  uint64_t line_ = 0;
  enum class Form { unknown, json, plain } form_ = Form::unknown;
};

}  // namespace kglm::text
