// libFuzzer target: ELMo's files on arbitrary bytes. The bytes as options.json (refused with an
// Error, or options that validate), as an ELMo run's trainer_state.json (an Error, or a state whose
// sizes are in range and whose cursors match its batch), as vocab.txt (an Error, or <S>, </S>,
// <UNK> first and every word found again by its id), and as a word whose character ids must be
// bilm-tf's layout (begin-of-word first, every id below 261). Any abort() or sanitizer report is a
// bug. Seeds in tests/fuzz/elmo-corpus.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "fuzz_file.hpp"
#include "nn/elmo_characters.hpp"
#include "nn/elmo_options.hpp"
#include "tok/word_vocabulary_tokenizer.hpp"
#include "train/elmo_trainer_state.hpp"

namespace {

void check_options(const char* path) {
  try {
    kglm::nn::read_elmo_options(path).validate();
  } catch (const kglm::Error&) {
  }
}

void check_state(const void* data, size_t size) {
  namespace fs = std::filesystem;
  char dir[] = "/tmp/kglm-fuzz-state-XXXXXX";
  if (::mkdtemp(dir) == nullptr) return;
  const fs::path file = fs::path(dir) / "trainer_state.json";
  if (FILE* f = std::fopen(file.c_str(), "wb")) {
    if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
    try {
      const kglm::train::ElmoTrainerState s = kglm::train::read_elmo_trainer_state(dir);
      if (s.batch < 1 || s.unroll < 1 || s.vocabulary < 1 || s.cursors.size() != static_cast<size_t>(s.batch))
        std::abort();
    } catch (const kglm::Error&) {
    }
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

void check_vocabulary(const char* path) {
  try {
    const kglm::tok::WordVocabularyTokenizer v(path, true);
    if (v.vocab_size() < 3 || v.piece(0) != "<S>" || v.piece(1) != "</S>" || v.piece(2) != "<UNK>") std::abort();
    for (int32_t id = 0; id < v.vocab_size(); ++id)
      if (v.piece_to_id(v.piece(id)) != id) std::abort();
  } catch (const kglm::Error&) {
  }
}

void check_characters(std::string_view word) {
  std::vector<int32_t> ids(50);
  kglm::nn::elmo_character_ids(word, 50, 261, ids.data());
  if (ids[0] != kglm::nn::kBeginWordChar) std::abort();
  for (int32_t id : ids)
    if (id < 0 || id > kglm::nn::kPaddingChar) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_characters(std::string_view(reinterpret_cast<const char*>(data), size));
  check_state(data, size);
  const kglm::fuzz::FuzzFile file(data, size);
  if (!file.made()) return 0;
  check_options(file.path());
  check_vocabulary(file.path());
  return 0;
}
