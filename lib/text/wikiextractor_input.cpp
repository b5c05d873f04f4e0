#include "text/wikiextractor_input.hpp"

#include <simdjson.h>

#include "core/error.hpp"
#include "text/html_entities.hpp"
#include "text/wikitext.hpp"

namespace kglm::text {

void convert_wikiextractor_text(std::string_view html, Document& doc) {
  doc.text.clear();
  doc.links.clear();
  doc.sections.clear();
  size_t pos = 0;
  while (pos < html.size()) {
    size_t open = html.find("<a href=\"", pos);
    size_t href_end = open == std::string_view::npos ? open : html.find("\">", open + 9);
    size_t close = href_end == std::string_view::npos ? href_end : html.find("</a>", href_end + 2);
    if (close == std::string_view::npos) {
      append_entities_decoded(doc.text, html.substr(pos));
      break;
    }
    append_entities_decoded(doc.text, html.substr(pos, open - pos));
    std::string href;
    append_entities_decoded(href, html.substr(open + 9, href_end - open - 9));
    Link link;
    link.begin = static_cast<uint32_t>(doc.text.size());
    append_entities_decoded(doc.text, html.substr(href_end + 2, close - href_end - 2));
    pos = close + 4;
    size_t trail = pos;
    while (trail < html.size() && html[trail] >= 'a' && html[trail] <= 'z') ++trail;
    doc.text.append(html.substr(pos, trail - pos));
    pos = trail;
    link.end = static_cast<uint32_t>(doc.text.size());
    link.target = normalize_title(href);
    if (link.end > link.begin && !link.target.empty()) doc.links.push_back(std::move(link));
  }
  size_t paragraph_end = doc.text.find('\n');
  doc.root_end = static_cast<uint32_t>(paragraph_end == std::string::npos ? doc.text.size() : paragraph_end);
}

Document parse_wikiextractor_record(std::string_view line) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto err = parser.parse(line.data(), line.size()).get(root)) throw Error(simdjson::error_message(err));
  Document doc;
  std::string_view s;
  uint64_t number = 0;
  if (root["id"].get(s) == simdjson::SUCCESS)
    doc.id = std::string(s);
  else if (root["id"].get(number) == simdjson::SUCCESS)
    doc.id = std::to_string(number);
  else
    throw Error("missing \"id\"");
  if (root["title"].get(s) != simdjson::SUCCESS) throw Error("missing \"title\"");
  doc.title = std::string(s);
  if (root["text"].get(s) != simdjson::SUCCESS) throw Error("missing \"text\"");
  convert_wikiextractor_text(s, doc);
  return doc;
}

}  // namespace kglm::text
