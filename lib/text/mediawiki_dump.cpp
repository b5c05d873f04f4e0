#include "text/mediawiki_dump.hpp"

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <vector>

#include "core/error.hpp"
#include "text/html_entities.hpp"

namespace kglm::text {

namespace {

constexpr size_t kChunk = 1 << 20;

bool is(const xmlChar* name, const char* expected) {
  return std::strcmp(reinterpret_cast<const char*>(name), expected) == 0;
}

}  // namespace

struct MediaWikiDumpReader::State {
  InputStream& input;
  xmlParserCtxtPtr parser = nullptr;
  std::deque<WikiPage> ready;
  WikiPage page;
  std::string* capture = nullptr;  // where character data goes, if anywhere
  std::string ns_text;
  std::string namespace_name;
  int namespace_key = 0;
  int depth = 0;
  int page_depth = -1;  // depth of the open <page>, -1 outside one
  bool in_revision = false;
  bool finished = false;
  std::string error;  // first XML error, with its line
  uint64_t error_line = 0;
  uint64_t bytes = 0;
  LinkNamespaces namespaces = LinkNamespaces::english();
  std::vector<char> buffer = std::vector<char>(kChunk);

  std::string prefix, suffix;  // fed before and after the input

  State(InputStream& in, std::string before, std::string after)
      : input(in), prefix(std::move(before)), suffix(std::move(after)) {}

  // The next chunk of XML into buffer: the prefix, the input, the suffix; 0 at the end.
  size_t next_chunk() {
    std::string* extra = !prefix.empty() ? &prefix : nullptr;
    if (!extra) {
      const size_t n = input.read(buffer.data(), buffer.size());
      bytes += n;
      if (n > 0 || suffix.empty()) return n;
      extra = &suffix;
    }
    const size_t n = std::min(extra->size(), buffer.size());
    std::memcpy(buffer.data(), extra->data(), n);
    extra->erase(0, n);
    return n;
  }

  void start(const xmlChar* name, int nb_attributes, const xmlChar** attributes) {
    ++depth;
    if (page_depth < 0) {
      if (is(name, "page")) {
        page = WikiPage{};
        page.line = static_cast<uint64_t>(xmlSAX2GetLineNumber(parser));
        page_depth = depth;
        in_revision = false;
      } else if (is(name, "namespace")) {
        namespace_key = 0;
        namespace_name.clear();
        std::string key = attribute(nb_attributes, attributes, "key");
        if (!key.empty()) namespace_key = std::atoi(key.c_str());
        capture = &namespace_name;
      }
      return;
    }
    if (depth == page_depth + 1) {
      if (is(name, "title")) {
        capture = &page.title;
      } else if (is(name, "ns")) {
        ns_text.clear();
        capture = &ns_text;
      } else if (is(name, "id")) {
        capture = &page.id;
      } else if (is(name, "redirect")) {
        page.redirect = true;
        page.redirect_title = attribute(nb_attributes, attributes, "title");
      } else if (is(name, "revision")) {
        in_revision = true;
      }
    } else if (in_revision && depth == page_depth + 2 && is(name, "text")) {
      page.text.clear();  // history dumps: the last revision wins
      capture = &page.text;
    }
  }

  void end(const xmlChar* name) {
    capture = nullptr;
    if (page_depth < 0) {
      if (is(name, "namespace")) namespaces.add(namespace_key, namespace_name);
    } else if (depth == page_depth) {
      ready.push_back(std::move(page));
      page_depth = -1;
    } else if (depth == page_depth + 1) {
      if (is(name, "ns")) page.ns = std::atoll(ns_text.c_str());
      if (is(name, "revision")) in_revision = false;
    }
    --depth;
  }

  static std::string attribute(int n, const xmlChar** attributes, const char* wanted) {
    // SAX2 passes 5 pointers per attribute: localname, prefix, URI, value begin, value end.
    for (int i = 0; i < n; ++i) {
      const xmlChar** a = attributes + 5 * i;
      if (!is(a[0], wanted)) continue;
      // Entity references in attribute values arrive as character references ("&#38;").
      std::string_view raw(reinterpret_cast<const char*>(a[3]), static_cast<size_t>(a[4] - a[3]));
      std::string value;
      append_entities_decoded(value, raw);
      return value;
    }
    return {};
  }

  // Feeds the parser until a page is ready or the input ends.
  void feed() {
    while (ready.empty() && !finished && error.empty()) {
      size_t n = next_chunk();
      if (parser == nullptr) create_parser();
      int rc = xmlParseChunk(parser, buffer.data(), static_cast<int>(n), n == 0 ? 1 : 0);
      if (rc != 0 && error.empty()) record_error(xmlCtxtGetLastError(parser));
      if (n == 0) {
        finished = true;
        // libxml2 words an early end of input as "Extra content at the end of the document".
        if (!error.empty() && depth > 0) error = "the input ends inside an element (truncated?); libxml2: " + error;
      }
    }
  }

  void create_parser() {
    xmlSAXHandler sax;
    std::memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = [](void* ctx, const xmlChar* localname, const xmlChar*, const xmlChar*, int, const xmlChar**,
                            int nb_attributes, int,
                            const xmlChar** attributes) { self(ctx).start(localname, nb_attributes, attributes); };
    sax.endElementNs = [](void* ctx, const xmlChar* localname, const xmlChar*, const xmlChar*) {
      self(ctx).end(localname);
    };
    sax.characters = [](void* ctx, const xmlChar* ch, int len) {
      State& s = self(ctx);
      if (s.capture) s.capture->append(reinterpret_cast<const char*>(ch), static_cast<size_t>(len));
    };
    sax.cdataBlock = sax.characters;
    sax.serror = [](void* ctx, xmlErrorPtr e) {
      State& s = self(ctx);
      if (e && e->level >= XML_ERR_ERROR && s.error.empty()) s.record_error(e);
    };
    parser = xmlCreatePushParserCtxt(&sax, this, nullptr, 0, input.name().c_str());
    if (parser == nullptr) throw Error(input.name() + ": cannot create an XML parser");
    xmlCtxtUseOptions(parser, XML_PARSE_HUGE | XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR);
  }

  // libxml2 hands every callback the user data given at creation: this State.
  static State& self(void* ctx) { return *static_cast<State*>(ctx); }

  void record_error(const xmlError* e) {
    error = e && e->message ? e->message : "malformed XML";
    while (!error.empty() && (error.back() == '\n' || error.back() == ' ')) error.pop_back();
    error_line = e ? static_cast<uint64_t>(e->line) : 0;
  }
};

MediaWikiDumpReader::MediaWikiDumpReader(InputStream& input) : MediaWikiDumpReader(input, {}, {}) {}

MediaWikiDumpReader::MediaWikiDumpReader(InputStream& input, std::string prefix, std::string suffix)
    : state_(std::make_unique<State>(input, std::move(prefix), std::move(suffix))) {}

MediaWikiDumpReader::~MediaWikiDumpReader() {
  if (state_->parser) xmlFreeParserCtxt(state_->parser);
}

bool MediaWikiDumpReader::next(WikiPage& page) {
  state_->feed();
  if (!state_->ready.empty()) {
    page = std::move(state_->ready.front());
    state_->ready.pop_front();
    return true;
  }
  if (!state_->error.empty())
    throw Error(location(state_->input.name(), state_->error_line) + "XML error: " + state_->error);
  return false;
}

const LinkNamespaces& MediaWikiDumpReader::namespaces() const { return state_->namespaces; }

uint64_t MediaWikiDumpReader::bytes_read() const { return state_->bytes; }

}  // namespace kglm::text
