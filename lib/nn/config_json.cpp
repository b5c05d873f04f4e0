#include "nn/config_json.hpp"

#include <simdjson.h>
#include <cerrno>
#include <cstring>

#include <charconv>
#include <cmath>
#include <fstream>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/big_json_integers.hpp"
#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/output_stream.hpp"

namespace kglm::nn {

struct ConfigJsonReader::Impl {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
};

ConfigJsonReader::ConfigJsonReader(const std::filesystem::path& path)
    : impl_(std::make_unique<Impl>()), where_(path.string()) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(std::string("cannot open model config: ") + std::strerror(errno));
  std::stringstream s;
  s << in.rdbuf();
  if (impl_->parser.parse(simdjson::padded_string(widen_big_integers(s.str()))).get(impl_->object) != simdjson::SUCCESS)
    fail("not a JSON object");
}

ConfigJsonReader::~ConfigJsonReader() = default;

namespace {

// A key, or a JSON pointer into nested objects when it starts with '/' (AllenNLP's options.json).
simdjson::simdjson_result<simdjson::dom::element> find(const simdjson::dom::object& object, const char* key) {
  if (key[0] == '/') return object.at_pointer(key);
  return object[key];
}

}  // namespace

void check_size_limits(const std::string& what, std::initializer_list<SizeLimit> sizes) {
  for (const SizeLimit& s : sizes)
    if (s.value > s.limit)
      throw Error(what + ": " + s.name + " is " + std::to_string(s.value) + "; at most " + std::to_string(s.limit) +
                  " is accepted (a damaged or mistyped file?)");
}

void ConfigJsonReader::fail(const std::string& what) const { throw Error(where_ + ": " + what); }

std::optional<std::string> ConfigJsonReader::string(const char* key) const {
  std::string_view v;
  auto e = find(impl_->object, key).get(v);
  if (e == simdjson::NO_SUCH_FIELD) return std::nullopt;
  if (e != simdjson::SUCCESS) fail(std::string("\"") + key + "\" must be a string");
  return std::string(v);
}

void ConfigJsonReader::integer(const char* key, int64_t& field, bool required) const {
  int64_t v;
  auto e = find(impl_->object, key).get(v);
  if (e == simdjson::SUCCESS) {
    field = v;
  } else if (e != simdjson::NO_SUCH_FIELD || required) {
    fail(std::string("\"") + key + "\" must be an integer");
  }
}

std::optional<int64_t> ConfigJsonReader::nullable_integer(const char* key) const {
  simdjson::dom::element element;
  if (find(impl_->object, key).get(element) != simdjson::SUCCESS || element.is_null()) return std::nullopt;
  int64_t v = 0;
  integer(key, v);
  return v;
}

void ConfigJsonReader::real(const char* key, double& field) const {
  double v;
  auto e = find(impl_->object, key).get(v);
  if (e == simdjson::SUCCESS) {
    field = v;
  } else if (e != simdjson::NO_SUCH_FIELD) {
    fail(std::string("\"") + key + "\" must be a number");
  }
}

void ConfigJsonReader::real(const char* key, float& field) const {
  double v = field;
  real(key, v);
  field = static_cast<float>(v);
}

void ConfigJsonReader::boolean(const char* key, bool& field) const {
  bool v;
  auto e = find(impl_->object, key).get(v);
  if (e == simdjson::SUCCESS) {
    field = v;
  } else if (e != simdjson::NO_SUCH_FIELD) {
    fail(std::string("\"") + key + "\" must be true or false");
  }
}

std::optional<std::vector<std::vector<int64_t>>> ConfigJsonReader::integer_arrays(const char* key) const {
  simdjson::dom::array outer;
  auto e = find(impl_->object, key).get(outer);
  if (e == simdjson::NO_SUCH_FIELD) return std::nullopt;
  auto wrong = [&] { fail(std::string("\"") + key + "\" must be an array of arrays of integers"); };
  if (e != simdjson::SUCCESS) wrong();
  std::vector<std::vector<int64_t>> rows;
  for (simdjson::dom::element row : outer) {
    simdjson::dom::array inner;
    if (row.get(inner) != simdjson::SUCCESS) wrong();
    rows.emplace_back();
    for (simdjson::dom::element v : inner) {
      int64_t value = 0;
      if (v.get(value) != simdjson::SUCCESS) wrong();
      rows.back().push_back(value);
    }
  }
  return rows;
}

std::string ConfigJsonWriter::object(int indent) const {
  std::string pad(static_cast<size_t>(indent), ' '), body;
  for (char c : members_) {
    body += c;
    if (c == '\n') body += pad;
  }
  return "{\n" + pad + body + "\n" + pad + "}";
}

void ConfigJsonWriter::field(std::string_view key, const std::string& json_value) {
  members_ += members_.empty() ? "  " : ",\n  ";
  append_json_string(members_, key);
  members_ += ": " + json_value;
}

void ConfigJsonWriter::text(std::string_view key, std::string_view value) { field(key, json_string(value)); }

namespace {

// A number as a float token: "1.0", not "1" (transformers 5 refuses an int where its config class
// declares a float, e.g. T5Config's initializer_factor).
std::string float_token(const char* begin, const char* end) {
  std::string text(begin, end);
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text;
}

}  // namespace

void ConfigJsonWriter::number(std::string_view key, double value) {
  // The shortest text that reads back as the same double: 0.1, not 0.10000000000000001. JSON has no
  // NaN or infinity: null, which the readers refuse with the key's name.
  if (!std::isfinite(value)) return field(key, "null");
  char buf[32];
  field(key, float_token(buf, std::to_chars(buf, buf + sizeof buf, value).ptr));
}

void ConfigJsonWriter::number(std::string_view key, float value) {
  // The shortest text that reads back as the same float: a dropout of 0.1f is written 0.1, not
  // 0.10000000149011612 (what the double it widens to would print).
  if (!std::isfinite(value)) return field(key, "null");
  char buf[32];
  field(key, float_token(buf, std::to_chars(buf, buf + sizeof buf, value).ptr));
}

void ConfigJsonWriter::write(const std::filesystem::path& path) const {
  write_file_atomically(path.string(), "{\n" + members_ + "\n}\n");
}

}  // namespace kglm::nn
