// libFuzzer target: wikitext through the cleaner and the sentence splitter, and text through the
// WikiExtractor, plain-form and JSONL document readers. Any exception other than WikitextError, any broken span
// invariant, or any sanitizer report is a bug. Seeds in tests/fuzz/wikitext-corpus.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "text/sentence_splitter.hpp"
#include "text/unicode.hpp"
#include "text/wikiextractor_input.hpp"
#include "text/wikitext.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // The dump reader only ever hands over valid UTF-8 (libxml2 converts and validates).
  if (size > (1 << 20) || !kglm::text::is_valid_utf8(input)) return 0;
  static kglm::text::SentenceSplitter splitter("en");
  kglm::text::Document doc;
  kglm::text::CleanOptions options;
  options.max_depth = 20;
  try {
    kglm::text::clean_wikitext(input, options, doc);
  } catch (const kglm::text::WikitextError&) {
    return 0;
  }
  kglm::text::check_document(doc);  // throws (and so crashes the fuzzer) on a broken span
  if (doc.text.find("\n\n") != std::string::npos) std::abort();
  std::vector<kglm::text::Sentence> sentences;
  splitter.split(doc, sentences);
  for (const kglm::text::Sentence& s : sentences) {
    if (s.begin >= s.end || s.end > doc.text.size()) std::abort();
    for (uint32_t l = s.first_link; l < s.last_link; ++l)
      if (doc.links[l].begin < s.begin || doc.links[l].end > s.end) std::abort();
  }
  kglm::text::Document converted;
  kglm::text::convert_wikiextractor_text(input, converted);
  kglm::text::check_document(converted);
  kglm::text::parse_linked_text(input, converted);
  kglm::text::check_document(converted);
  try {  // the JSONL reader of cs-gen and kg-align: Error for bad records, never a crash
    kglm::text::check_document(kglm::text::parse_document_json(input));
  } catch (const kglm::Error&) {
  }
  return 0;
}
