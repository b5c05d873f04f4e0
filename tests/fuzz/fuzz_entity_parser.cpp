// libFuzzer target: one dump line through the entity parser, then the serializer round trip
// used by shard stores. Build with -DKGLM_FUZZ=ON (clang); seeds in tests/fuzz/corpus.
#include <cstdint>
#include <cstring>
#include <string>

#include "kg/entity_parser.hpp"

namespace {
kglm::kg::ParseOptions make_options() {
  kglm::kg::ParseOptions o;
  o.all_langs = true;
  o.all_sites = true;
  return o;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kglm::kg::ParseOptions options = make_options();
  static kglm::kg::EntityParser parser(options);
  // The parser may read padding past the input, as it does inside a line batch.
  std::string buffer(reinterpret_cast<const char*>(data), size);
  buffer.append(simdjson::SIMDJSON_PADDING, '\0');
  kglm::kg::ParseResult result;
  kglm::kg::StringArena strings;
  parser.parse(buffer.data(), size, buffer.size(), strings, result);
  if (result.status == kglm::kg::ParseStatus::kept) {
    std::string bytes;
    kglm::kg::serialize(result.record, bytes);
    kglm::kg::StringArena arena;
    kglm::kg::EntityRecord back = kglm::kg::deserialize(bytes, arena);
    std::string again;
    kglm::kg::serialize(back, again);
    if (again != bytes) __builtin_trap();
  }
  return 0;
}
