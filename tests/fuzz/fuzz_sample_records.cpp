// libFuzzer target: bytes as sample-lang's inputs — a mixed JSONL stream scanned in tokens (language
// and text fields), the same as a text file, and as a --counts table. Invariants: every record is a
// non-empty line of the input at its line number, token counts never exceed the record's bytes, the
// counting form agrees with the per-record form, and a bad counts table throws Error, nothing else.
// Any abort() or sanitizer report is a bug. Seeds in tests/fuzz/sample-corpus.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "sample/corpus.hpp"
#include "sample/plan.hpp"

namespace {

using namespace kglm::sample;

std::vector<std::string_view> lines_of(std::string_view data) {
  std::vector<std::string_view> lines;
  for (size_t pos = 0; pos < data.size();) {
    size_t nl = data.find('\n', pos);
    if (nl == std::string_view::npos) nl = data.size();
    lines.push_back(data.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

void scan_both_ways(const CorpusSource& source, std::string_view data) {
  std::vector<std::string_view> lines = lines_of(data);
  RecordScanOptions options;
  options.unit = SizeUnit::tokens;
  options.batch_bytes = 64;  // many batches, lines across batch boundaries
  options.threads = 2;
  std::map<std::string, std::pair<uint64_t, uint64_t>> per_record, counted;
  uint64_t bad = 0, bad_counted = 0;
  ScanCallbacks on;
  on.record = [&](const ScannedRecord& r) {
    if (r.line == 0 || r.line > lines.size() || lines[r.line - 1] != r.text || r.text.empty()) std::abort();
    if (r.units > r.text.size() || r.lang.empty()) std::abort();
    per_record[std::string(r.lang)].first += 1;
    per_record[std::string(r.lang)].second += r.units;
  };
  on.bad = [&](uint64_t line, std::string_view reason) {
    if (line == 0 || line > lines.size() || reason.empty()) std::abort();
    ++bad;
  };
  ScanCallbacks count;
  count.totals = [&](std::string_view lang, uint64_t records, uint64_t units) {
    counted[std::string(lang)].first += records;
    counted[std::string(lang)].second += units;
  };
  count.bad = [&](uint64_t, std::string_view) { ++bad_counted; };
  try {
    scan_records(source, options, on);
    scan_records(source, options, count);
  } catch (const kglm::Error&) {
    return;  // a mixed stream that is not JSONL
  }
  if (per_record != counted || bad != bad_counted) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = memfd_create("fuzz-input", 0);
  if (fd < 0) return 0;
  if (write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return 0;
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // Compressed-looking input would be decompressed; the line invariants are about plain input.
  bool plain = size < 2 || !((data[0] == 0x1f && data[1] == 0x8b) || (data[0] == 'B' && data[1] == 'Z') ||
                             (size >= 4 && data[0] == 0x28 && data[1] == 0xb5 && data[2] == 0x2f && data[3] == 0xfd));
  if (plain) {
    scan_both_ways({"", path, ".jsonl"}, text);
    scan_both_ways({"xx", path, ".txt"}, text);
  }
  for (SizeUnit unit : {SizeUnit::lines, SizeUnit::tokens}) {
    try {
      std::vector<LanguageSize> sizes = read_counts(path, unit);
      for (const LanguageSize& s : sizes)
        if (s.lang.empty()) std::abort();
    } catch (const kglm::Error&) {
    }
  }
  close(fd);
  return 0;
}
