// Reading a JSON-lines file of records: each non-blank line one JSON object, parsed by the caller;
// a bad line is reported as FILE:LINE through the ErrorCounter and skipped, and a file whose every
// record was bad is refused.
#pragma once

#include <simdjson.h>

#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"

namespace kglm {

// Calls parse(root) on every non-blank line's JSON object and hands each record to consume(), in
// file order, as it is read (memory: one record); a line that is not JSON, or whose parse()
// throws, is reported and skipped. Refuses a file whose every record was bad.
template <class T>
void for_each_jsonl_record(const std::string& path, const char* what,
                           const std::function<T(simdjson::dom::element)>& parse, ErrorCounter& errors,
                           const std::function<void(T&&)>& consume) {
  InputStream in(path);
  if (skip_empty_input(require_text_input(in, what), in.name())) return;
  const uint64_t errors_before = errors.count();
  uint64_t valid = 0;
  simdjson::dom::parser parser;
  for_each_line(in, [&](uint64_t n, std::string_view line) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    simdjson::dom::element root;
    if (auto err = parser.parse(line.data(), line.size(), true).get(root)) {
      errors.record(in.name(), n, std::string("not JSON: ") + simdjson::error_message(err));
      return;
    }
    T record;
    try {
      if (!root.is_object()) throw Error("not a JSON object");
      record = parse(root);
      record.line = n;
    } catch (const Error& e) {
      errors.record(in.name(), n, e.what());
      return;
    }
    errors.add_valid();
    ++valid;
    consume(std::move(record));
  });
  if (valid == 0 && errors.count() > errors_before)
    throw Error(location(in.name()) + "no valid record; every one was bad");
}

// All the records of a file (for_each_jsonl_record), in a vector.
template <class T>
std::vector<T> read_jsonl_records(const std::string& path, const char* what,
                                  const std::function<T(simdjson::dom::element)>& parse, ErrorCounter& errors) {
  std::vector<T> out;
  for_each_jsonl_record<T>(path, what, parse, errors, [&](T&& record) { out.push_back(std::move(record)); });
  return out;
}

// A string member of a record; Error when it is required and absent or not a string.
inline std::string string_field(simdjson::dom::element root, const char* key, bool required = true) {
  std::string_view v;
  if (root[key].get(v) == simdjson::SUCCESS) return std::string(v);
  if (required) throw Error(std::string("no string field \"") + key + "\"");
  return {};
}

}  // namespace kglm
