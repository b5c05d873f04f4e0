// A cleaned Wikipedia article: plain text with link spans and section boundaries, as written by
// wiki-extract (man 5 kglm-docs) and read by cs-gen and kg-align.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kglm::text {

// [begin, end) are UTF-8 byte offsets into Document::text.
struct Link {
  uint32_t begin = 0;
  uint32_t end = 0;
  std::string target;  // normalised page title, no #fragment
  bool operator==(const Link&) const = default;
};

struct Section {
  uint32_t begin = 0;  // start of the section's first line (the heading itself is not in the text)
  uint32_t end = 0;    // start of the next heading's section (minus the newline), or the text size
  std::string title;
  int level = 2;  // number of '=' of the heading
  bool operator==(const Section&) const = default;
};

struct Document {
  std::string id;  // page id (a string: WikiExtractor input may carry any id)
  std::string title;
  std::string text;  // paragraphs and list items, one per line, '\n'-separated
  std::vector<Link> links;
  std::vector<Section> sections;
  uint32_t root_end = 0;  // end of the lead section, before the first heading
  bool operator==(const Document&) const = default;
};

// One JSONL record (with the trailing newline):
// {"id","title","text","links":[[b,e,target]...],"sections":[[b,e,title,level]...],"root_end"}
void append_document_json(std::string& out, const Document& doc);

// links[first, last) as a JSON array [[begin, end, target], ...] with offsets relative to origin.
void append_links_json(std::string& out, const std::vector<Link>& links, size_t first, size_t last, uint32_t origin);

// The plain form: <doc id="…" title="…">, the text with [[target|anchor]] inline, </doc>.
void append_document_plain(std::string& out, const Document& doc);

// Text with [[target|anchor]] markers for the links in [begin, end).
void append_linked_text(std::string& out, std::string_view text, const std::vector<Link>& links, uint32_t begin,
                        uint32_t end);

// Parses one JSONL record written by append_document_json. Throws Error with the reason.
Document parse_document_json(std::string_view line);

// Reads a text with [[target|anchor]] markers (one plain <doc> body) back into text + links;
// sections are cleared and root_end is the text size.
void parse_linked_text(std::string_view marked, Document& doc);

// Throws Error when a span is out of bounds, inverted, not on a UTF-8 character boundary, or
// when links overlap or are unsorted.
void check_document(const Document& doc);

}  // namespace kglm::text
