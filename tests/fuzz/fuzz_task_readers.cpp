// libFuzzer target: the readers of finetune's qa, wic and slots tasks on arbitrary bytes — SQuAD
// JSON, WiC / XL-WiC TSV, and MultiATIS++ TSV, MTOP TSV and MASSIVE JSON lines. Invariants: every
// gold answer is the context's bytes at its span; every WiC word start lies inside its sentence;
// every slot example has as many tags as words, each O or a scheme prefix (B I E S L U) and a name,
// none empty, and an intent. Any abort() or sanitizer report is a bug. Seeds in tests/fuzz/task-corpus.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "fuzz_file.hpp"
#include "train/tasks/example_readers.hpp"
#include "train/tasks/slot_readers.hpp"
#include "train/tasks/squad_reader.hpp"

namespace {

using namespace kglm::train::tasks;

template <class F>
void refused_or_checked(F read) {
  try {
    read();
  } catch (const kglm::Error&) {
    // the wrong kind of file, or no valid record: refused, not a crash
  }
}

bool good_tag(const std::string& t) {
  return t == "O" || (t.size() > 2 && t[1] == '-' && std::string_view("BIESLU").find(t[0]) != std::string_view::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const kglm::fuzz::FuzzFile file(data, size);
  if (!file.made()) return 0;
  kglm::ErrorCounter errors(kglm::ErrorLimit(UINT64_MAX));
  refused_or_checked([&] {
    for (const QaExample& q : read_squad(file.path(), errors)) {
      if (!q.context || q.id.empty()) std::abort();
      for (const QaAnswer& a : q.answers)
        if (a.end < a.begin || a.end > q.context->size() || q.context->compare(a.begin, a.end - a.begin, a.text) != 0)
          std::abort();
    }
  });
  refused_or_checked([&] {
    for (const WicExample& w : read_wic(file.path(), errors))
      if (w.begin1 >= w.sentence1.size() || w.begin2 >= w.sentence2.size() || w.line == 0) std::abort();
  });
  for (SlotFormat format : {SlotFormat::multiatis, SlotFormat::mtop, SlotFormat::massive})
    refused_or_checked([&] {
      for (const SlotExample& e : read_slots(file.path(), format, errors)) {
        if (e.sentence.words.empty() || e.sentence.words.size() != e.sentence.tags.size() || e.intent.empty())
          std::abort();
        for (size_t i = 0; i < e.sentence.words.size(); ++i)
          if (e.sentence.words[i].empty() || !good_tag(e.sentence.tags[i])) std::abort();
      }
    });
  return 0;
}
