#include "tok/hf_tokenizer_files.hpp"

#include <simdjson.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/big_json_integers.hpp"
#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/output_stream.hpp"

namespace kglm::tok {

std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(location(path.string()) + "cannot open: " + std::strerror(errno));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) throw Error(location(path.string()) + "read error");
  return std::move(contents).str();
}

namespace {

// A special token given as a string or as a serialized AddedToken ({"content": "...", ...}).
bool read_token_name(simdjson::dom::element value, std::string& name) {
  std::string_view text;
  if (value.get(text) == simdjson::SUCCESS || value["content"].get(text) == simdjson::SUCCESS) {
    name = text;
    return true;
  }
  return false;
}

// JSON object members in order: name and the member's value already written as JSON.
using JsonMembers = std::vector<std::pair<std::string, std::string>>;

std::string json_string(std::string_view value) {
  std::string quoted;
  append_json_string(quoted, value);
  return quoted;
}

std::string json_bool(bool value) { return value ? "true" : "false"; }

std::string json_object(const JsonMembers& members) {
  std::string out = "{";
  for (size_t i = 0; i < members.size(); ++i) {
    out += i == 0 ? "\n  " : ",\n  ";
    append_json_string(out, members[i].first);
    out += ": ";
    out += members[i].second;
  }
  out += "\n}\n";
  return out;
}

void write_config_files(const std::filesystem::path& dir, JsonMembers config, const JsonMembers& special_tokens) {
  config.insert(config.end(), special_tokens.begin(), special_tokens.end());
  write_file_atomically((dir / kTokenizerConfigFile).string(), json_object(config));
  write_file_atomically((dir / kSpecialTokensMapFile).string(), json_object(special_tokens));
}

}  // namespace

void read_bert_tokenizer_config(const std::filesystem::path& config_file, WordPieceOptions& options) {
  const std::string where = location(config_file.string());
  simdjson::padded_string json(widen_big_integers(read_whole_file(config_file)));
  simdjson::dom::parser parser;
  simdjson::dom::object root;
  if (auto error = parser.parse(json).get(root)) {
    throw Error(where + "not a JSON object: " + simdjson::error_message(error));
  }
  auto read_bool = [&](const char* key, bool& target) {
    simdjson::dom::element value;
    if (root[key].get(value) != simdjson::SUCCESS || value.is_null()) return;
    if (value.get(target) != simdjson::SUCCESS) throw Error(where + "\"" + key + "\" is not true or false");
  };
  read_bool("do_lower_case", options.lower_case);
  read_bool("tokenize_chinese_chars", options.tokenize_chinese_chars);
  // strip_accents: null (or absent) means "strip when lower-casing", as in BertTokenizer.
  simdjson::dom::element strip;
  if (root["strip_accents"].get(strip) == simdjson::SUCCESS && !strip.is_null()) {
    bool value = false;
    if (strip.get(value) != simdjson::SUCCESS) throw Error(where + "\"strip_accents\" is not true, false or null");
    options.strip_accents = value;
  }
  const std::pair<const char*, std::string*> names[] = {{"unk_token", &options.unk_token},
                                                        {"cls_token", &options.cls_token},
                                                        {"sep_token", &options.sep_token},
                                                        {"pad_token", &options.pad_token},
                                                        {"mask_token", &options.mask_token}};
  for (const auto& [key, target] : names) {
    simdjson::dom::element value;
    if (root[key].get(value) != simdjson::SUCCESS || value.is_null()) continue;
    if (!read_token_name(value, *target)) throw Error(where + "\"" + key + "\" is not a token string");
  }
}

void write_xlmr_hf_files(const std::filesystem::path& dir, std::string_view model_bytes) {
  make_directories(dir.string());
  write_file_atomically((dir / kSentencePieceModelFile).string(), model_bytes);
  const JsonMembers special_tokens = {{"bos_token", json_string("<s>")},    {"eos_token", json_string("</s>")},
                                      {"unk_token", json_string("<unk>")},  {"sep_token", json_string("</s>")},
                                      {"pad_token", json_string("<pad>")},  {"cls_token", json_string("<s>")},
                                      {"mask_token", json_string("<mask>")}};
  write_config_files(dir, {{"tokenizer_class", json_string("XLMRobertaTokenizer")}}, special_tokens);
}

void write_t5_hf_files(const std::filesystem::path& dir, std::string_view model_bytes) {
  make_directories(dir.string());
  write_file_atomically((dir / kT5SentencePieceFile).string(), model_bytes);
  const JsonMembers special_tokens = {
      {"eos_token", json_string("</s>")}, {"unk_token", json_string("<unk>")}, {"pad_token", json_string("<pad>")}};
  write_config_files(dir, {{"tokenizer_class", json_string("T5Tokenizer")}, {"extra_ids", "0"}}, special_tokens);
}

void write_bert_hf_files(const std::filesystem::path& dir, std::string_view vocab_text,
                         const WordPieceOptions& options) {
  make_directories(dir.string());
  write_file_atomically((dir / kWordPieceVocabFile).string(), vocab_text);
  const JsonMembers special_tokens = {{"unk_token", json_string(options.unk_token)},
                                      {"sep_token", json_string(options.sep_token)},
                                      {"pad_token", json_string(options.pad_token)},
                                      {"cls_token", json_string(options.cls_token)},
                                      {"mask_token", json_string(options.mask_token)}};
  const JsonMembers config = {{"tokenizer_class", json_string("BertTokenizer")},
                              {"do_lower_case", json_bool(options.lower_case)},
                              // null keeps BertTokenizer's "strip accents when lower-casing" rule.
                              {"strip_accents", options.strip_accents ? json_bool(*options.strip_accents) : "null"},
                              {"tokenize_chinese_chars", json_bool(options.tokenize_chinese_chars)}};
  write_config_files(dir, config, special_tokens);
}

}  // namespace kglm::tok
