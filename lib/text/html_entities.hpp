// HTML character references (&amp; &nbsp; &#8211; &#x2013;) as they occur in wikitext.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kglm::text {

// Decodes the character reference at the start of s (which begins with '&'). Returns its length
// in bytes and sets cp, or returns 0 when s does not start with a valid reference. Named
// references are looked up in libxml2's HTML 4 entity table.
size_t decode_entity(std::string_view s, uint32_t& cp);

// Appends s with every character reference decoded; with nbsp_as_space, U+00A0 becomes ' '.
void append_entities_decoded(std::string& out, std::string_view s, bool nbsp_as_space = false);

}  // namespace kglm::text
