// Streaming reader of MediaWiki XML export dumps (pages-articles, multistream parts, history
// dumps) with libxml2's SAX2 push parser, so any encoding the XML declares (UTF-8, UTF-16, ...)
// is read and memory stays bounded by one page.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/input_stream.hpp"
#include "text/wikitext.hpp"

namespace kglm::text {

struct WikiPage {
  std::string id;
  int64_t ns = 0;
  std::string title;
  std::string text;            // wikitext of the last revision
  bool redirect = false;       // a <redirect/> element was present
  std::string redirect_title;  // its title attribute
  uint64_t line = 0;           // line of <page> in the XML
};

class MediaWikiDumpReader {
 public:
  explicit MediaWikiDumpReader(InputStream& input);
  // A shard of a dump (wiki_extract's --shard): the parser reads `prefix` (the dump's header,
  // <mediawiki> and <siteinfo>), then the input, then `suffix` (the closing </mediawiki>).
  MediaWikiDumpReader(InputStream& input, std::string prefix, std::string suffix);
  ~MediaWikiDumpReader();
  MediaWikiDumpReader(const MediaWikiDumpReader&) = delete;
  MediaWikiDumpReader& operator=(const MediaWikiDumpReader&) = delete;

  // The next page; false at the end of the document. Malformed or truncated XML throws Error with
  // the file and line, after every complete page before it has been returned.
  bool next(WikiPage& page);

  // English defaults plus the namespaces declared in <siteinfo>.
  const LinkNamespaces& namespaces() const;
  // Decompressed XML bytes read from the input so far (not counting a prefix or suffix).
  uint64_t bytes_read() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kglm::text
