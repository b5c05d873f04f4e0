// The inputs of language sampling: per-language files (LANG=PATH, or a directory of LANG.* files)
// or one JSONL stream whose records carry their language in a field. A record is one non-empty
// line; its size is 1 line, its bytes (with the '\n'), or its tokens: whitespace-separated words
// of the line (text) or of a string field (JSONL), as `wc -w` counts them in the C locale, or the
// integer in a token-count field.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sample/plan.hpp"

namespace kglm::sample {

struct CorpusSource {
  std::string lang;    // empty: a mixed stream, the language is read from each record
  std::string path;    // or "-"
  std::string suffix;  // of the file name, for --split-by-lang outputs (".txt.gz", ".jsonl", "")
  std::string name;    // for messages when path is not what the user gave (spilled stdin)

  std::string shown() const { return !name.empty() ? name : path == "-" ? "stdin" : path; }
};

// Each argument is LANG=PATH, a directory (its regular files named LANG.*, hidden files skipped)
// or the path of a mixed JSONL stream. Throws UsageError on a bad argument or an empty directory.
std::vector<CorpusSource> resolve_sources(const std::vector<std::string>& args);

// ".jsonl", ".txt.gz" (a compression suffix keeps the extension before it), or "".
std::string file_suffix(std::string_view path);

enum class RecordFormat { auto_detect, text, jsonl };
RecordFormat parse_record_format(std::string_view name);
// A language code usable as a file name and statistics key: 1-32 of [A-Za-z0-9_-].
bool valid_language(std::string_view lang);
// jsonl when the first non-blank byte of `data` is '{', text otherwise; auto_detect when the data
// is blank (the next batch decides).
RecordFormat detect_format(std::string_view data);

struct RecordScanOptions {
  SizeUnit unit = SizeUnit::lines;
  RecordFormat format = RecordFormat::auto_detect;  // auto: JSONL when the first line starts with '{'
  std::string lang_field = "lang";
  std::string text_field = "text";  // JSONL: the string whose words are the tokens
  std::string token_field;          // JSONL: an integer field holding the token count instead
  unsigned threads = 1;
  size_t batch_bytes = 4 << 20;
};

struct ScannedRecord {
  uint64_t line = 0;
  std::string_view lang;  // the source's language or the record's field
  std::string_view text;  // the whole line, without '\n'
  uint64_t units = 0;
};

struct ScanCallbacks {
  std::function<void(const ScannedRecord&)> record;  // valid records, in input order
  // Instead of `record` (leave that empty): sizes per language, summed over each batch by the
  // workers, which makes a counting pass cheaper than visiting every record.
  std::function<void(std::string_view lang, uint64_t records, uint64_t units)> totals;
  std::function<void(uint64_t line, std::string_view reason)> bad;  // records that cannot be used
  std::function<void(uint64_t raw_bytes)> progress;                 // after each batch
};

// Reads the source once (batches parsed on options.threads workers, callbacks in input order).
// Empty lines are not records and are skipped silently. Returns the number of empty lines.
// Throws Error when the file cannot be read or a compressed stream is corrupt.
uint64_t scan_records(const CorpusSource& source, const RecordScanOptions& options, const ScanCallbacks& callbacks);

// Words separated by Unicode White_Space (ASCII space, \t..\r, no-break and ideographic spaces, …);
// bytes that are not valid UTF-8 count as word characters.
// The byte length of the Unicode White_Space character at text[i] (i at a byte ≥ 0x80), 0 if none.
size_t unicode_space_at(std::string_view text, size_t i);

// Calls fn(word) for each of those words, in order.
template <class F>
void for_each_whitespace_token(std::string_view text, F&& fn) {
  size_t start = 0;
  bool in_word = false;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t space = c == ' ' || (c >= '\t' && c <= '\r') ? 1 : c < 0x80 ? 0 : unicode_space_at(text, i);
    if (!space && !in_word) start = i;
    if (space && in_word) fn(text.substr(start, i - start));
    in_word = !space;
    i += space ? space : 1;
  }
  if (in_word) fn(text.substr(start));
}

uint64_t count_whitespace_tokens(std::string_view text);

}  // namespace kglm::sample
