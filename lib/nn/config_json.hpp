// Hugging Face config.json files: flat JSON objects of numbers, strings and booleans, read field by
// field with errors that name the file and the key, and written atomically. A key that starts
// with '/' is a JSON pointer into nested objects (AllenNLP's options.json: "/lstm/dim").
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kglm::nn {

// A size of a model's configuration and its upper bound. The bounds lie far above every released
// model, so that a damaged or mistyped number in config.json or options.json is refused before any
// memory is allocated (a num_hidden_layers of 2000000000 built layers until memory ran out).
struct SizeLimit {
  const char* name;
  int64_t value;
  int64_t limit;
};
// Throws Error "what: NAME is V; at most L is accepted" for the first size over its bound.
void check_size_limits(const std::string& what, std::initializer_list<SizeLimit> sizes);

class ConfigJsonReader {
 public:
  // Reads and parses the file; kglm::Error "PATH: …" when it cannot be read or is not an object.
  explicit ConfigJsonReader(const std::filesystem::path& path);
  ~ConfigJsonReader();

  // Each reader leaves `field` as it was when the key is absent (unless required) and throws when
  // the key holds another type.
  std::optional<std::string> string(const char* key) const;
  void integer(const char* key, int64_t& field, bool required = false) const;
  void real(const char* key, double& field) const;
  void real(const char* key, float& field) const;
  void boolean(const char* key, bool& field) const;
  // An integer that may be JSON null (HF's "num_decoder_layers": null): nullopt then, or when absent.
  std::optional<int64_t> nullable_integer(const char* key) const;

  // An array of arrays of integers (options.json's "/char_cnn/filters"); nullopt when absent.
  std::optional<std::vector<std::vector<int64_t>>> integer_arrays(const char* key) const;

  [[noreturn]] void fail(const std::string& what) const;  // kglm::Error "PATH: what"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string where_;
};

// Collects `"key": value` members in order and writes them as one object.
class ConfigJsonWriter {
 public:
  void field(std::string_view key, const std::string& json_value);
  void field(std::string_view key, int64_t value) { field(key, std::to_string(value)); }
  void text(std::string_view key, std::string_view value);
  // The shortest text that reads back as the same value, always a float token ("1.0", not "1").
  void number(std::string_view key, double value);
  void number(std::string_view key, float value);
  void boolean(std::string_view key, bool value) { field(key, value ? "true" : "false"); }
  // The object as JSON text, nested `indent` spaces deeper (a member of another writer's object).
  std::string object(int indent) const;
  // Writes the object to `path` atomically.
  void write(const std::filesystem::path& path) const;

 private:
  std::string members_;
};

}  // namespace kglm::nn
