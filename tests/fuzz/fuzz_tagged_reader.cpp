// libFuzzer target: the fine-tuning tag readers and the entity chunker on arbitrary bytes. The
// bytes as a PAN-X file and as a CoNLL file (tag column 1 and the last): every sentence read has
// as many tags as words, none empty or holding whitespace; its tags through entities(): each
// entity lies inside the sentences' positions, first <= last, or the tag is refused with an
// Error. Any abort() or sanitizer report is a bug. Seeds in tests/fuzz/tagged-corpus.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "fuzz_file.hpp"
#include "train/tasks/scores.hpp"
#include "train/tasks/tagged_reader.hpp"

namespace {

using kglm::train::tasks::TaggedFormat;
using kglm::train::tasks::TaggedReadOptions;
using kglm::train::tasks::TaggedSentence;

void check(const std::vector<TaggedSentence>& sentences) {
  std::vector<std::vector<std::string>> tags;
  size_t positions = 0;
  for (const TaggedSentence& s : sentences) {
    if (s.words.empty() || s.words.size() != s.tags.size()) std::abort();
    for (const std::string& t : s.tags)
      if (t.empty() || t.find_first_of(" \t\n") != std::string::npos) std::abort();
    tags.push_back(s.tags);
    positions += s.tags.size() + 1;
  }
  try {
    for (const auto& e : kglm::train::tasks::entities(tags))
      if (e.first > e.last || e.last >= positions) std::abort();
  } catch (const kglm::Error&) {
    // a tag that is neither O nor P-TYPE
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const kglm::fuzz::FuzzFile file(data, size);
  if (!file.made()) return 0;
  const char* path = file.path();
  for (int variant = 0; variant < 3; ++variant) {
    TaggedReadOptions o;
    o.format = variant == 0 ? TaggedFormat::panx : TaggedFormat::conll;
    o.tag_column = variant == 1 ? 1 : -1;
    kglm::ErrorCounter errors(kglm::ErrorLimit(UINT64_MAX));
    try {
      check(kglm::train::tasks::read_tagged(path, o, errors));
    } catch (const kglm::Error&) {
      // not text, or no valid sentence: refused, not a crash
    }
  }
  return 0;
}
