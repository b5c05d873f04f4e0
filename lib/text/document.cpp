#include "text/document.hpp"

#include <simdjson.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"

namespace kglm::text {

void append_links_json(std::string& out, const std::vector<Link>& links, size_t first, size_t last, uint32_t origin) {
  out.push_back('[');
  for (size_t i = first; i < last; ++i) {
    const Link& l = links[i];
    if (i > first) out.push_back(',');
    out += '[' + std::to_string(l.begin - origin) + ',' + std::to_string(l.end - origin) + ',';
    append_json_string(out, l.target);
    out.push_back(']');
  }
  out.push_back(']');
}

void append_document_json(std::string& out, const Document& doc) {
  out += "{\"id\":";
  append_json_string(out, doc.id);
  out += ",\"title\":";
  append_json_string(out, doc.title);
  out += ",\"text\":";
  append_json_string(out, doc.text);
  out += ",\"links\":";
  append_links_json(out, doc.links, 0, doc.links.size(), 0);
  out += ",\"sections\":[";
  for (size_t i = 0; i < doc.sections.size(); ++i) {
    const Section& s = doc.sections[i];
    if (i > 0) out.push_back(',');
    out += '[' + std::to_string(s.begin) + ',' + std::to_string(s.end) + ',';
    append_json_string(out, s.title);
    out += ',' + std::to_string(s.level) + ']';
  }
  out += "],\"root_end\":" + std::to_string(doc.root_end) + "}\n";
}

namespace {

void append_xml_attribute(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '<':
        out += "&lt;";
        break;
      default:
        out.push_back(c);
    }
  }
}

}  // namespace

void append_linked_text(std::string& out, std::string_view text, const std::vector<Link>& links, uint32_t begin,
                        uint32_t end) {
  uint32_t pos = begin;
  for (const Link& l : links) {
    if (l.end <= begin || l.begin < begin) continue;
    if (l.begin >= end) break;
    out.append(text.substr(pos, l.begin - pos));
    out += "[[";
    out += l.target;
    out.push_back('|');
    out.append(text.substr(l.begin, l.end - l.begin));
    out += "]]";
    pos = l.end;
  }
  out.append(text.substr(pos, end - pos));
}

void append_document_plain(std::string& out, const Document& doc) {
  out += "<doc id=\"";
  append_xml_attribute(out, doc.id);
  out += "\" title=\"";
  append_xml_attribute(out, doc.title);
  out += "\">\n";
  append_linked_text(out, doc.text, doc.links, 0, static_cast<uint32_t>(doc.text.size()));
  out += "\n</doc>\n";
}

void parse_linked_text(std::string_view marked, Document& doc) {
  doc.text.clear();
  doc.links.clear();
  size_t pos = 0;
  while (pos < marked.size()) {
    size_t open = marked.find("[[", pos);
    while (open != std::string_view::npos && open + 2 < marked.size() && marked[open + 2] == '[') ++open;  // "[" + link
    size_t close = open == std::string_view::npos ? open : marked.find("]]", open + 2);
    size_t bar = close == std::string_view::npos ? close : marked.find('|', open + 2);
    if (bar == std::string_view::npos || bar > close) {
      doc.text.append(marked.substr(pos));
      break;
    }
    doc.text.append(marked.substr(pos, open - pos));
    Link link;
    link.target = std::string(marked.substr(open + 2, bar - open - 2));
    link.begin = static_cast<uint32_t>(doc.text.size());
    doc.text.append(marked.substr(bar + 1, close - bar - 1));
    link.end = static_cast<uint32_t>(doc.text.size());
    doc.links.push_back(std::move(link));
    pos = close + 2;
  }
  doc.sections.clear();  // the plain form has no section markup
  doc.root_end = static_cast<uint32_t>(doc.text.size());
}

namespace {

using JsonValue = simdjson::simdjson_result<simdjson::dom::element>;

uint32_t as_u32(JsonValue e, const char* field) {
  uint64_t v = 0;
  if (e.get(v) != simdjson::SUCCESS || v > UINT32_MAX) throw Error(std::string("bad ") + field + " offset");
  return static_cast<uint32_t>(v);
}

std::string as_string(JsonValue e, const char* field) {
  std::string_view s;
  if (e.get(s) != simdjson::SUCCESS) throw Error(std::string(field) + " is not a string");
  return std::string(s);
}

}  // namespace

Document parse_document_json(std::string_view line) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto err = parser.parse(line.data(), line.size()).get(root)) throw Error(simdjson::error_message(err));
  Document doc;
  JsonValue id = root["id"];
  uint64_t numeric_id = 0;
  if (id.get(numeric_id) == simdjson::SUCCESS)
    doc.id = std::to_string(numeric_id);
  else
    doc.id = as_string(id, "id");
  doc.title = as_string(root["title"], "title");
  doc.text = as_string(root["text"], "text");
  simdjson::dom::array links, sections;
  if (root["links"].get(links) != simdjson::SUCCESS) throw Error("links is not an array");
  for (simdjson::dom::element l : links) {
    simdjson::dom::array a;
    if (l.get(a) != simdjson::SUCCESS || a.size() != 3) throw Error("a link is not [begin, end, target]");
    doc.links.push_back({as_u32(a.at(0), "link"), as_u32(a.at(1), "link"), as_string(a.at(2), "link target")});
  }
  if (root["sections"].get(sections) != simdjson::SUCCESS) throw Error("sections is not an array");
  for (simdjson::dom::element s : sections) {
    simdjson::dom::array a;
    if (s.get(a) != simdjson::SUCCESS || a.size() != 4) throw Error("a section is not [begin, end, title, level]");
    doc.sections.push_back({as_u32(a.at(0), "section"), as_u32(a.at(1), "section"), as_string(a.at(2), "section title"),
                            static_cast<int>(as_u32(a.at(3), "level"))});
  }
  doc.root_end = as_u32(root["root_end"], "root_end");
  check_document(doc);
  return doc;
}

void check_document(const Document& doc) {
  const uint32_t size = static_cast<uint32_t>(doc.text.size());
  auto on_boundary = [&](uint32_t offset) {
    return offset == size || (static_cast<unsigned char>(doc.text[offset]) & 0xC0) != 0x80;
  };
  auto check_span = [&](uint32_t b, uint32_t e, const char* what) {
    if (b > e || e > size || !on_boundary(b) || !on_boundary(e))
      throw Error(std::string(what) + " [" + std::to_string(b) + ", " + std::to_string(e) + ") is not a span of the " +
                  std::to_string(size) + "-byte text");
  };
  uint32_t previous_end = 0;
  for (const Link& l : doc.links) {
    check_span(l.begin, l.end, "link");
    if (l.begin < previous_end) throw Error("links overlap or are not in text order");
    previous_end = l.end;
  }
  for (const Section& s : doc.sections) check_span(s.begin, s.end, "section");
  check_span(0, doc.root_end, "root section");
}

}  // namespace kglm::text
