// WikiExtractor's JSON output (run with --json --links): {"id","url","title","text"} where links
// are <a href="Target%20title">anchor</a>. Converted to a Document, so existing extractions feed
// kglm like wiki-extract's own output.
#pragma once

#include <string_view>

#include "text/document.hpp"

namespace kglm::text {

// Parses one JSON line. Throws Error with the reason on bad JSON or missing fields.
// WikiExtractor writes plain text without section markup: sections stay empty and root_end is the
// end of the first paragraph. Letters glued after </a> join the anchor, as MediaWiki renders them.
Document parse_wikiextractor_record(std::string_view line);

// The text conversion alone: anchors -> spans, character references decoded.
void convert_wikiextractor_text(std::string_view html, Document& doc);

}  // namespace kglm::text
