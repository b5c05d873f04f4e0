#include "gen/inflection_tables.hpp"

#include <filesystem>

#include "core/error.hpp"
#include "core/line_batcher.hpp"

namespace kglm::gen {

namespace {

bool is_number(std::string_view f) { return f == "SG" || f == "PL" || f == "DU"; }

// Features that may come with a noun's case and number without changing which form it is.
bool is_inherent(std::string_view f) {
  for (std::string_view g : {"MASC", "FEM", "NEUT", "ANIM", "INAN", "HUM", "NHUM", "MASC+FEM"})
    if (f == g) return true;
  return false;
}

std::string canonical_case(std::string_view case_name) { return case_name == "INST" ? "INS" : std::string(case_name); }

std::string key(std::string_view lemma, std::string_view case_name, bool plural) {
  std::string k(lemma);
  k += '\t';
  k += canonical_case(case_name);
  k += plural ? ";PL" : ";SG";
  return k;
}

}  // namespace

std::string_view unimorph_code(std::string_view lang) {
  struct Code {
    std::string_view lang, code;
  };
  static constexpr Code kCodes[] = {{"ru", "rus"}, {"el", "ell"}, {"tr", "tur"}, {"hu", "hun"}, {"bn", "ben"},
                                    {"fr", "fra"}, {"es", "spa"}, {"he", "heb"}, {"mr", "mar"}, {"en", "eng"},
                                    {"nl", "nld"}, {"ko", "kor"}, {"vi", "vie"}, {"yo", "yor"}, {"ja", "jpn"},
                                    {"zh", "zho"}, {"de", "deu"}, {"it", "ita"}, {"pt", "por"}, {"fi", "fin"}};
  for (const Code& c : kCodes)
    if (c.lang == lang) return c.code;
  return lang;
}

InflectionTables InflectionTables::load_dir(const std::string& dir, const std::vector<std::string>& langs) {
  if (!std::filesystem::is_directory(dir)) throw Error(location(dir) + "not a directory");
  InflectionTables tables;
  for (const std::string& lang : langs) {
    if (tables.has_language(lang)) continue;
    const std::string code(unimorph_code(lang));
    bool found = false;
    for (const std::string& name : {code, code + ".tsv", lang + ".tsv"}) {
      for (const char* suffix : {"", ".gz", ".zst", ".bz2"}) {
        const std::string path = (std::filesystem::path(dir) / (name + suffix)).string();
        if (std::filesystem::is_regular_file(path)) {
          tables.load_file(lang, path);
          found = true;
          break;
        }
      }
      if (found) break;
    }
  }
  return tables;
}

void InflectionTables::load_file(const std::string& lang, const std::string& path) {
  Table table;
  table.file = path;
  for_each_data_line(path, [&](uint64_t, std::string_view line) {
    const size_t tab1 = line.find('\t');
    const size_t tab2 = tab1 == std::string_view::npos ? tab1 : line.find('\t', tab1 + 1);
    if (tab2 == std::string_view::npos || tab1 == 0 || tab2 == tab1 + 1) {
      ++table.counts.bad_lines;
      return;
    }
    const std::string_view lemma = line.substr(0, tab1), form = line.substr(tab1 + 1, tab2 - tab1 - 1);
    std::string_view features = line.substr(tab2 + 1);
    if (const size_t tab3 = features.find('\t'); tab3 != std::string_view::npos) features = features.substr(0, tab3);
    bool noun = false, plural = false;
    std::string_view case_name;
    int cases = 0, others = 0;
    for (size_t start = 0; start <= features.size();) {
      size_t end = features.find(';', start);
      if (end == std::string_view::npos) end = features.size();
      const std::string_view f = features.substr(start, end - start);
      if (f == "N" || f == "PROPN") {
        noun = true;
      } else if (is_number(f)) {
        plural = f == "PL";
      } else if (!f.empty() && !is_inherent(f)) {
        // A case (GEN, IN+ESS, ...) or something else (PSS3S, DEF, ...): only one may be there.
        if (case_name.empty()) {
          case_name = f;
          ++cases;
        } else {
          ++others;
        }
      }
      start = end + 1;
    }
    if (!noun || cases != 1 || others != 0 || case_name.starts_with("PSS") || case_name == "DEF" ||
        case_name == "INDF") {
      ++table.counts.unused;
      return;
    }
    // The first form given for a cell is kept (UniMorph lists variants on later lines).
    if (table.forms.try_emplace(key(lemma, case_name, plural), form).second) ++table.counts.forms;
  });
  if (table.counts.forms == 0)
    throw Error(location(path) + "no noun form in UniMorph's format (lemma<TAB>form<TAB>N;CASE;NUMBER)");
  by_lang_[lang] = std::move(table);
}

std::optional<std::string> InflectionTables::find(std::string_view lang, std::string_view lemma,
                                                  std::string_view case_name, bool plural) const {
  auto t = by_lang_.find(lang);
  if (t == by_lang_.end()) return std::nullopt;
  auto it = t->second.forms.find(key(lemma, case_name, plural));
  if (it == t->second.forms.end()) return std::nullopt;
  return it->second;
}

const InflectionTables::Counts& InflectionTables::counts(std::string_view lang) const {
  static const Counts kNone;
  auto t = by_lang_.find(lang);
  return t == by_lang_.end() ? kNone : t->second.counts;
}

std::vector<std::string> InflectionTables::describe() const {
  std::vector<std::string> out;
  for (const auto& [lang, t] : by_lang_)
    out.push_back(lang + ": " + std::to_string(t.counts.forms) + " noun forms from " + t.file + " (" +
                  std::to_string(t.counts.unused) + " other entries, " + std::to_string(t.counts.bad_lines) +
                  " bad lines)");
  return out;
}

}  // namespace kglm::gen
