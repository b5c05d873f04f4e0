// libFuzzer target: the reliability policy's parsers on arbitrary bytes. The bytes as a file head
// (classify_input: deterministic, "empty" exactly for no bytes), as a file read through
// InputStream with peek() first (the peeked bytes are exactly what read() returns first; a corrupt
// compressed stream is an Error, never a crash), as a --max-errors value (a parsed limit prints
// back to itself) and as a language code (an accepted code has no separators; a suggestion is
// itself accepted). Any abort() or sanitizer report is a bug. Seeds in tests/fuzz/input-corpus.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "fuzz_file.hpp"
#include "gen/language_codes.hpp"

namespace {

// The bytes as a file, read with peek() first and then read() to the end.
void check_stream(std::string_view bytes) {
  const kglm::fuzz::FuzzFile file(bytes.data(), bytes.size());
  if (!file.made()) return;
  const char* path = file.path();
  try {
    kglm::InputStream in(path);
    const std::string head(in.peek(4096));
    std::string all;
    char buffer[1000];
    while (size_t n = in.read(buffer, sizeof buffer)) all.append(buffer, n);
    if (all.compare(0, head.size(), head) != 0) std::abort();
    if (kglm::classify_input(head) != kglm::classify_input(all.substr(0, head.size()))) std::abort();
  } catch (const kglm::Error&) {
    // a corrupt compressed stream: reported, not a crash
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const kglm::InputKind kind = kglm::classify_input(bytes);
  if (kind != kglm::classify_input(bytes)) std::abort();
  if ((kind == kglm::InputKind::empty) != bytes.empty()) std::abort();
  if (kglm::describe_input_kind(kind, "gzip").empty()) std::abort();
  check_stream(bytes);
  try {
    const kglm::ErrorLimit limit = kglm::ErrorLimit::parse(bytes);
    if (limit.rate > 1 || (limit.rate < 0 && limit.rate != -1)) std::abort();
    if (kglm::ErrorLimit::parse(limit.to_string()).count != limit.count && limit.rate < 0) std::abort();
  } catch (const kglm::UsageError&) {
  }
  const std::string code(bytes.substr(0, 32));
  const std::string problem = kglm::gen::language_code_problem(code);
  if (problem.empty() && (code.empty() || code.find_first_of(" ,;\t\n") != std::string::npos)) std::abort();
  // A suggestion ends the message ("... did you mean 'ja'?"); the code itself is echoed before it.
  const size_t hint = problem.rfind("did you mean '");
  if (hint != std::string::npos && problem.ends_with("'?")) {
    const size_t start = hint + 14;
    const std::string suggested = problem.substr(start, problem.size() - 2 - start);
    if (!kglm::gen::language_code_problem(suggested).empty()) std::abort();
  }
  return 0;
}
