// The removal passes of the wikitext cleaner (internal to lib/text): each copies its input
// without one kind of non-text markup. Order matters and is the one clean_wikitext() uses:
// comments and tags, then templates, then tables, then dropped links.
#pragma once

#include <string>
#include <string_view>

#include "text/wikitext_markup.hpp"

namespace kglm::text::detail {

// Removes <!-- comments -->, __MAGIC_WORDS__, tags whose content is not text (<ref>, <math>,
// <gallery>, ...) with their content, and the tags of everything else (keeping the content).
void strip_tags(std::string_view in, std::string& out, CleanReport& report);

// Removes {{templates}}, {{#parser functions:}} and {{{parameters}}}, nested.
void strip_templates(std::string_view in, std::string& out, unsigned max_depth, CleanReport& report);

// Removes {| tables |} (nested; line-based as in MediaWiki).
void strip_tables(std::string_view in, std::string& out, unsigned max_depth, CleanReport& report);

// Removes [[File:…]], [[Image:…]], [[Category:…]] and interlanguage links, with nested links
// in their captions.
void strip_dropped_links(std::string_view in, std::string& out, const LinkNamespaces& namespaces, unsigned max_depth,
                         CleanReport& report);

// What a link's target prefix means.
enum class LinkKind { article, text_only, dropped };
LinkKind classify_link_target(std::string_view target, const LinkNamespaces& namespaces);

}  // namespace kglm::text::detail
