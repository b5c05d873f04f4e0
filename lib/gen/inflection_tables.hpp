// Noun inflection tables in UniMorph's format (lemma TAB form TAB features, e.g.
// "Франция\tФранции\tN;GEN;SG"), the data X-FACTR's neural inflector was trained on, read for
// `probe --inflections DIR` and `verbalize render --inflections DIR`: case-marked template slots
// ([X.Gen], [Y.Loc]) take the label's form from them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kglm::gen {

class InflectionTables {
 public:
  // For each language of langs, loads the first of DIR/<UniMorph code> (UniMorph's own file name:
  // rus, ell, tur, hun, ben, fra, spa, heb, mar, ...), DIR/<code>.tsv, DIR/<lang>.tsv, each
  // optionally compressed (.gz, .zst, .bz2); a language without a file has no table. Throws Error
  // when dir is not a directory, and as load_file does.
  static InflectionTables load_dir(const std::string& dir, const std::vector<std::string>& langs);

  // Reads a UniMorph file for lang. Noun entries (N or PROPN) whose features are one case and a
  // number, and nothing else but gender or animacy, are kept; other entries (verbs, possessed
  // forms, ...) are counted as unused; a line without three tab-separated fields is counted as bad
  // and skipped. Throws Error with the file's name when no line is a noun form (the wrong file).
  void load_file(const std::string& lang, const std::string& path);

  bool has_language(std::string_view lang) const { return by_lang_.find(lang) != by_lang_.end(); }
  // The form of lemma in case_name (UniMorph's name: "GEN", "IN+ESS"; "INST" is read as "INS")
  // and number, or nullopt.
  std::optional<std::string> find(std::string_view lang, std::string_view lemma, std::string_view case_name,
                                  bool plural) const;

  struct Counts {
    uint64_t forms = 0, unused = 0, bad_lines = 0;
  };
  const Counts& counts(std::string_view lang) const;
  // "ru: 123456 noun forms (rus)" per language, for the log.
  std::vector<std::string> describe() const;

 private:
  struct Table {
    std::unordered_map<std::string, std::string> forms;  // "lemma\tCASE;NUM" -> form
    Counts counts;
    std::string file;
  };
  std::map<std::string, Table, std::less<>> by_lang_;
};

// UniMorph's language code (ISO 639-3) for a two-letter code, or the code itself.
std::string_view unimorph_code(std::string_view lang);

}  // namespace kglm::gen
