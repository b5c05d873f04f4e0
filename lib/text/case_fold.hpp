// Case-insensitive matching of names in sentences: text is folded code point by code point
// (ICU simple case folding, every Unicode space as ' ', typographic apostrophes as '\'') and each
// folded byte remembers where it came from, so matches map back to byte offsets of the original.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kglm::text {

class FoldedText {
 public:
  // Folds text (valid UTF-8; invalid bytes are kept as they are).
  void assign(std::string_view text);
  const std::string& folded() const { return folded_; }
  // Byte offset in the original text of folded byte i (i may be folded().size()).
  uint32_t original(size_t i) const { return origin_[i]; }

 private:
  std::string folded_;
  std::vector<uint32_t> origin_;
};

// The folded form of s, as FoldedText would fold it.
std::string fold_case(std::string_view s);

// How a name is matched: folded (case-insensitively); exact (its own case only: names of at most 3
// code points and names without lower-case letters, acronyms such as "USA", "NASA"); or not at all
// (names of at most 3 code points without an upper-case letter, such as "in", "it": Wikidata keeps
// language and country codes as aliases, and they collide with common words).
enum class NameMatch { folded, exact, unused };
NameMatch classify_name(std::string_view name);

}  // namespace kglm::text
