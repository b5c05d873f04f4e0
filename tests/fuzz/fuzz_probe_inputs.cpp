// libFuzzer target: the probe's inputs on arbitrary bytes. The bytes as an X-FACTR fact file
// (every fact kept has Q ids and non-empty labels, in its file's relation), as an alias file, and
// as a relation template realised as a cloze in several languages and genders (a template is
// refused with an Error, or gives a prefix without trailing and a suffix without leading spaces),
// and as a file of kg-align qa's question forms (every form kept holds [X] once and fills).
// Any abort() or sanitizer report is a bug. Seeds in tests/fuzz/probe-corpus.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "fuzz_file.hpp"
#include "gen/relation_templates.hpp"
#include "gen/silver_qa.hpp"
#include "probe/cloze_text.hpp"
#include "probe/probe_facts.hpp"

namespace {

using kglm::gen::Gender;

void check_facts(const std::string& path) {
  kglm::ErrorCounter errors(kglm::ErrorLimit(UINT64_MAX), 0);
  for (uint64_t relation : {uint64_t{19}, uint64_t{0}}) {
    for (const kglm::probe::ProbeFact& f : kglm::probe::read_xfactr_facts(path, relation, errors)) {
      if (f.subject.size() < 2 || f.subject[0] != 'Q' || f.object.size() < 2 || f.object[0] != 'Q') std::abort();
      if (f.subject_label.empty() || f.object_label.empty()) std::abort();
      if (relation != 0 && f.relation != relation) std::abort();
      if (f.relation == 0) std::abort();
    }
  }
  kglm::probe::AliasTable aliases;
  aliases.load(path, errors);
}

void check_question_forms(const std::string& path) {
  kglm::gen::QuestionForms forms;
  try {
    forms.load_file(path);
  } catch (const kglm::Error&) {
    return;
  }
  for (uint64_t relation = 0; relation < 4096; ++relation) {
    const std::string* form = forms.find(relation);
    if (!form) continue;
    const size_t x = form->find("[X]");
    if (x == std::string::npos || form->find("[X]", x + 1) != std::string::npos) std::abort();
    if (kglm::gen::fill_question(*form, "S").size() != form->size() - 2) std::abort();
  }
}

void check_template(std::string_view text) {
  kglm::gen::ParsedTemplate parsed;
  try {
    parsed = kglm::gen::parse_template(text);
  } catch (const kglm::Error&) {
    return;
  }
  for (const char* lang : {"en", "fr", "es", "ru", "el", "tr", "bn", "mr"})
    for (Gender g : {Gender::unknown, Gender::masculine, Gender::feminine, Gender::neuter}) {
      kglm::gen::TemplateGaps gaps;
      kglm::gen::TemplateEntity subject, object;
      subject.label = "Subject";
      subject.gender = object.gender = g;
      object.label = "object";
      subject.classes = g == Gender::neuter ? "sovereign state,country" : "human";
      subject.human = g != Gender::neuter;
      const auto cloze = kglm::probe::fill_cloze(parsed, lang, subject, object, nullptr, &gaps);
      if (!cloze.prefix.empty() && cloze.prefix.back() == ' ') std::abort();
      if (!cloze.suffix.empty() && cloze.suffix.front() == ' ') std::abort();
      if (gaps.uninflected < 0 || gaps.missing_function_words < 0 || cloze.object.empty()) std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    const kglm::fuzz::FuzzFile file(data, size);
    if (!file.made()) return 0;
    try {
      check_facts(file.path());
      check_question_forms(file.path());
    } catch (const kglm::Error&) {
      // a stream that cannot be read (a corrupt compressed file): refused, not a crash
    }
  }
  check_template(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
