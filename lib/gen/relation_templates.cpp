#include "gen/relation_templates.hpp"

#include <simdjson.h>

#include <algorithm>
#include <filesystem>

#include "core/error.hpp"
#include "core/line_batcher.hpp"
#include "core/log.hpp"

namespace kglm::gen {

namespace {

// Splits on sep, keeping empty fields.
std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

std::string_view trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t") + 1 - begin);
}

std::string upper_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

// Capitals of other scripts that look like X or Y (UTF-8), with their code points.
struct Lookalike {
  std::string_view utf8;
  char letter;
  std::string_view code_point;
};
constexpr Lookalike kLookalikes[] = {
    {"\xD0\xA5", 'X', "U+0425"},  // Cyrillic Ha
    {"\xCE\xA7", 'X', "U+03A7"},  // Greek Chi
    {"\xD0\xA3", 'Y', "U+0423"},  // Cyrillic U
    {"\xCE\xA5", 'Y', "U+03A5"},  // Greek Upsilon
};

// The slot letter content starts with (X or Y, or a look-alike: its byte length in `length`), or 0.
char slot_letter(std::string_view content, size_t& length, const Lookalike*& lookalike) {
  lookalike = nullptr;
  if (!content.empty() && (content[0] == 'X' || content[0] == 'Y')) {
    length = 1;
    return content[0];
  }
  for (const Lookalike& l : kLookalikes)
    if (content.starts_with(l.utf8)) {
      length = l.utf8.size();
      lookalike = &l;
      return l.letter;
    }
  return 0;
}

Gender parse_gender(std::string_view value) {
  const std::string v = upper_ascii(value);
  if (v == "MASC") return Gender::masculine;
  if (v == "FEM") return Gender::feminine;
  if (v == "NEUT") return Gender::neuter;
  throw Error("unknown gender \"" + std::string(value) + "\" (MASC, FEM or NEUT)");
}

// [X], [Y.Loc], [X.Masc.Nom], [Y;be], [Х]; nullopt when content is not a slot.
std::optional<TemplateElement> parse_slot(std::string_view content, std::vector<std::string>& repairs) {
  size_t length = 0;
  const Lookalike* lookalike = nullptr;
  const char letter = slot_letter(content, length, lookalike);
  if (letter == 0) return std::nullopt;
  const std::string_view rest = content.substr(length);
  if (!rest.empty() && rest[0] != '.' && rest[0] != ';') return std::nullopt;
  if (rest.find_first_of("|=") != std::string_view::npos) return std::nullopt;
  TemplateElement slot;
  slot.kind = TemplateElement::Kind::slot;
  slot.entity = letter == 'X' ? Entity::subject : Entity::object;
  if (lookalike != nullptr)
    repairs.push_back("[" + std::string(content) + "] (" + std::string(lookalike->code_point) + ") read as [" +
                      std::string(1, letter) + std::string(rest) + "]");
  if (rest.empty()) return slot;
  if (rest[0] == ';') {
    if (rest != ";be") throw Error("unknown markup [" + std::string(content) + "]");
    slot.copula = true;
    return slot;
  }
  for (std::string_view feature : split(rest.substr(1), '.')) {
    const std::string f = upper_ascii(feature);
    if (f.empty()) throw Error("empty feature in [" + std::string(content) + "]");
    if (f == "MASC" || f == "FEM" || f == "NEUT") {
      slot.fixed_gender = parse_gender(f);
    } else {
      if (!slot.slot_case.empty()) throw Error("two cases in [" + std::string(content) + "]");
      slot.slot_case = f;
    }
  }
  if (slot.slot_case == "NOM") slot.slot_case.clear();  // the label's own form
  return slot;
}

// "né;X-Gender=MASC|née;X-Gender=FEM", "participé;Y-Gender=MASC;participée;Y-Gender=FEM",
// "représenté;X-Gender=MASC|représentée;X-Gender=FEM|représentés;X-Number=PL": every field that is
// not a condition starts a form, the conditions after it are that form's.
TemplateElement parse_choice(std::string_view content) {
  TemplateElement choice;
  choice.kind = TemplateElement::Kind::choice;
  bool entity_known = false;
  for (std::string_view alternative : split(content, '|')) {
    bool open = false;  // an alternative of this '|' part is being filled
    for (std::string_view field : split(alternative, ';')) {
      field = trim(field);
      if (field.empty()) continue;  // a stray ';' (fr P30: "|;située;X-Gender=FEM")
      const size_t eq = field.find('=');
      if (eq == std::string_view::npos) {
        choice.alternatives.push_back({Gender::unknown, 0, 0, std::string(field)});
        open = true;
        continue;
      }
      if (!open) {  // conditions with no form before them: the empty form
        choice.alternatives.push_back({});
        open = true;
      }
      const std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
      Entity entity;
      if (key == "X-Gender" || key == "X-Number")
        entity = Entity::subject;
      else if (key == "Y-Gender" || key == "Y-Number")
        entity = Entity::object;
      else
        throw Error("unknown feature \"" + std::string(field) + "\" in [" + std::string(content) + "]");
      if (entity_known && entity != choice.entity)
        throw Error("[" + std::string(content) + "] agrees with both X and Y");
      choice.entity = entity;
      entity_known = true;
      TemplateElement::Alternative& a = choice.alternatives.back();
      if (key.ends_with("Gender")) {
        a.gender = parse_gender(value);
      } else if (value == "SG") {
        a.number = 1;
      } else if (value == "PL") {
        a.number = 2;
      } else {
        throw Error("unknown number \"" + std::string(value) + "\" (SG or PL) in [" + std::string(content) + "]");
      }
    }
  }
  if (!entity_known) throw Error("[" + std::string(content) + "] names no X- or Y- condition");
  return choice;
}

// "human: একজন ; non-human: একটি" (bn P31), about the subject.
TemplateElement parse_human_choice(std::string_view content) {
  TemplateElement choice;
  choice.kind = TemplateElement::Kind::choice;
  choice.entity = Entity::subject;
  for (std::string_view field : split(content, ';')) {
    field = trim(field);
    const size_t colon = field.find(':');
    if (colon == std::string_view::npos)
      throw Error("no \"human:\" or \"non-human:\" in [" + std::string(content) + "]");
    const std::string_view key = trim(field.substr(0, colon));
    TemplateElement::Alternative a;
    a.form = std::string(trim(field.substr(colon + 1)));
    if (key == "human")
      a.human = 1;
    else if (key == "non-human")
      a.human = 2;
    else
      throw Error("unknown condition \"" + std::string(key) + "\" in [" + std::string(content) + "]");
    choice.alternatives.push_back(std::move(a));
  }
  return choice;
}

// "PREPLOC;Y", "ART;X-Gender", "DEF.Gen;X", "DEF;Y.Fem".
TemplateElement parse_function_word(std::string_view content) {
  const size_t semicolon = content.rfind(';');
  if (semicolon == 0 || semicolon == std::string_view::npos)
    throw Error("unknown markup [" + std::string(content) + "]");
  TemplateElement word;
  word.kind = TemplateElement::Kind::function_word;
  std::string_view word_class = content.substr(0, semicolon);
  if (const size_t dot = word_class.find('.'); dot != std::string_view::npos) {
    word.slot_case = upper_ascii(word_class.substr(dot + 1));
    word_class = word_class.substr(0, dot);
  }
  word.text = std::string(word_class);
  std::string_view ref = content.substr(semicolon + 1);
  if (ref.ends_with(".Fem")) {
    word.fixed_gender = Gender::feminine;
    ref.remove_suffix(4);
  }
  if (ref == "X" || ref == "X-Gender")
    word.entity = Entity::subject;
  else if (ref == "Y" || ref == "Y-Gender")
    word.entity = Entity::object;
  else
    throw Error("unknown markup [" + std::string(content) + "]");
  if (word.text.empty() || word.text.find_first_of(" :") != std::string::npos)
    throw Error("unknown markup [" + std::string(content) + "]");
  return word;
}

TemplateElement parse_markup(std::string_view content, std::vector<std::string>& repairs) {
  if (trim(content).empty()) throw Error("empty []");
  if (auto slot = parse_slot(content, repairs)) return std::move(*slot);
  if (content.find("human:") != std::string_view::npos) return parse_human_choice(content);
  if (content.find_first_of("|=") != std::string_view::npos) return parse_choice(content);
  return parse_function_word(content);
}

}  // namespace

bool parse_relation_id(std::string_view id, uint64_t& number) {
  if (id.size() < 2 || id.size() > 19 || id[0] != 'P' || id[1] == '0') return false;
  number = 0;
  for (char c : id.substr(1)) {
    if (c < '0' || c > '9') return false;
    number = number * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

std::string find_language_file(const std::string& dir, const std::string& lang) {
  for (const char* suffix : {".jsonl", ".jsonl.gz", ".jsonl.zst", ".jsonl.bz2"}) {
    std::string path = (std::filesystem::path(dir) / (lang + suffix)).string();
    if (std::filesystem::exists(path)) return path;
  }
  return "";
}

ParsedTemplate parse_template(std::string_view source) {
  ParsedTemplate parsed;
  parsed.source = std::string(source);
  bool has_subject = false, has_object = false;
  size_t pos = 0;
  while (pos < source.size()) {
    size_t bracket = source.find_first_of("[]", pos);
    if (bracket == std::string_view::npos) bracket = source.size();
    if (bracket > pos) {
      TemplateElement text;
      text.text = std::string(source.substr(pos, bracket - pos));
      parsed.elements.push_back(std::move(text));
    }
    if (bracket == source.size()) break;
    if (source[bracket] == ']') throw Error("unbalanced ']' at byte " + std::to_string(bracket));
    const size_t close = source.find_first_of("[]", bracket + 1);
    if (close == std::string_view::npos || source[close] == '[')
      throw Error("unbalanced '[' at byte " + std::to_string(bracket));
    TemplateElement element = parse_markup(source.substr(bracket + 1, close - bracket - 1), parsed.repairs);
    if (element.kind == TemplateElement::Kind::slot) {
      has_subject |= element.entity == Entity::subject;
      has_object |= element.entity == Entity::object;
    }
    parsed.elements.push_back(std::move(element));
    pos = close + 1;
  }
  if (!has_subject || !has_object) throw Error("template lacks [X] or [Y]");
  return parsed;
}

const TemplateElement* find_slot(const ParsedTemplate& parsed, Entity entity) {
  for (const TemplateElement& e : parsed.elements)
    if (e.kind == TemplateElement::Kind::slot && e.entity == entity) return &e;
  return nullptr;
}

RelationTemplates RelationTemplates::load_dir(const std::string& dir, const std::vector<std::string>& langs) {
  if (!std::filesystem::is_directory(dir)) throw Error(location(dir) + "not a directory");
  RelationTemplates templates;
  for (const std::string& lang : langs) {
    if (templates.has_language(lang)) continue;  // listed twice
    if (const std::string path = find_language_file(dir, lang); !path.empty()) templates.load_file(lang, path);
  }
  return templates;
}

void RelationTemplates::load_file(const std::string& lang, const std::string& path) {
  std::unordered_map<uint64_t, Loaded>& loaded = by_lang_[lang];
  simdjson::dom::parser parser;
  uint64_t lines = 0, kept = 0;
  for_each_data_line(path, [&](uint64_t line, std::string_view text) {
    ++lines;
    std::string origin = location(path, line);
    origin.resize(origin.size() - 2);  // without location()'s ": "
    std::string relation_id;
    auto skip = [&](const std::string& reason) { skipped_.push_back({lang, relation_id, origin, reason}); };
    simdjson::dom::element root;
    if (auto err = parser.parse(text.data(), text.size()).get(root))
      return skip(std::string("invalid JSON: ") + simdjson::error_message(err));
    if (!root.is_object()) return skip("not a JSON object");
    std::string_view relation, template_text;
    if (root["relation"].get(relation) != simdjson::SUCCESS) return skip("no string \"relation\"");
    relation_id = std::string(relation);
    if (root["template"].get(template_text) != simdjson::SUCCESS) return skip("no string \"template\"");
    uint64_t number = 0;
    if (!parse_relation_id(relation, number)) return skip("relation \"" + relation_id + "\" is not P<number>");
    Loaded entry;
    try {
      entry.parsed = parse_template(template_text);
    } catch (const Error& e) {
      return skip("template of " + relation_id + ": " + e.what());
    }
    entry.parsed.relation = number;
    entry.origin = origin;
    for (const std::string& repair : entry.parsed.repairs)
      repaired_.push_back(origin + ": template of " + relation_id + ": " + repair);
    ++kept;  // a template line, even if its relation is given again
    if (auto it = loaded.find(number); it != loaded.end())
      return skip("relation " + relation_id + " given again (first at " + it->second.origin + ")");
    loaded.emplace(number, std::move(entry));
  });
  // Lines but no template at all: the wrong file, or every line broken; the first reason says which.
  if (lines > 0 && kept == 0) {
    const SkippedTemplate& first = skipped_[skipped_.size() - lines];
    throw Error(first.origin + ": " + first.reason + " (no line of the file is a usable relation template)");
  }
}

const ParsedTemplate* RelationTemplates::find(std::string_view lang, uint64_t relation_number) const {
  auto by_lang = by_lang_.find(lang);
  if (by_lang == by_lang_.end()) return nullptr;
  auto it = by_lang->second.find(relation_number);
  return it == by_lang->second.end() ? nullptr : &it->second.parsed;
}

size_t RelationTemplates::size() const {
  size_t n = 0;
  for (const auto& [lang, templates] : by_lang_) n += templates.size();
  return n;
}

bool RelationTemplates::skipped_in(std::string_view lang, uint64_t relation_number) const {
  const std::string id = "P" + std::to_string(relation_number);
  return std::any_of(skipped_.begin(), skipped_.end(),
                     [&](const SkippedTemplate& s) { return s.lang == lang && s.relation == id; });
}

void report_template_problems(const RelationTemplates& templates, std::string_view unused, Stats& stats) {
  for (const SkippedTemplate& s : templates.skipped()) {
    log_warning(s.origin + ": " + s.reason +
                (s.relation.empty() ? "" : "; " + s.relation + " is not " + std::string(unused) + " in " + s.lang));
    stats.add("templates_skipped." + s.lang);
  }
  for (const std::string& repair : templates.repaired()) log_warning(repair);
}

}  // namespace kglm::gen
