#include "gen/relation_templates.hpp"

#include <simdjson.h>

#include <array>
#include <filesystem>

#include "core/error.hpp"
#include "core/line_batcher.hpp"

namespace kglm::gen {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// [X], [Y] and their suffixed forms ([X.Nom], [Y.Loc], [Y;be]); not [X-Gender…] or a choice.
bool is_slot(std::string_view content) {
  return (content[0] == 'X' || content[0] == 'Y') && (content.size() == 1 || content[1] == '.' || content[1] == ';') &&
         content.find_first_of("|=") == std::string_view::npos;
}

Gender parse_gender(std::string_view value) {
  if (value == "MASC") return Gender::masculine;
  if (value == "FEM") return Gender::feminine;
  if (value == "NEUT") return Gender::neuter;
  throw Error("unknown gender \"" + std::string(value) + "\" (MASC, FEM or NEUT)");
}

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

// "né;X-Gender=MASC|née;X-Gender=FEM": each alternative is a form and features, ';'-separated.
TemplateElement parse_choice(std::string_view content) {
  TemplateElement choice;
  choice.kind = TemplateElement::Kind::choice;
  bool entity_known = false;
  for (std::string_view alternative : split(content, '|')) {
    std::string_view form;
    bool has_form = false;
    Gender gender = Gender::unknown;
    bool has_feature = false;
    for (std::string_view field : split(alternative, ';')) {
      size_t eq = field.find('=');
      if (eq == std::string_view::npos) {
        // An empty field is a stray ';' (fr P30: "|;située;X-Gender=FEM").
        if (field.empty()) continue;
        if (has_form) throw Error("two forms in one alternative of [" + std::string(content) + "]");
        form = field;
        has_form = true;
        continue;
      }
      std::string_view key = field.substr(0, eq);
      std::string_view value = field.substr(eq + 1);
      TemplatePiece::Kind entity;
      if (key == "X-Gender" || key == "X-Number") {
        entity = TemplatePiece::Kind::subject;
      } else if (key == "Y-Gender" || key == "Y-Number") {
        entity = TemplatePiece::Kind::object;
      } else {
        throw Error("unknown feature \"" + std::string(field) + "\" in [" + std::string(content) + "]");
      }
      if (entity_known && entity != choice.entity) {
        throw Error("[" + std::string(content) + "] agrees with both X and Y");
      }
      choice.entity = entity;
      entity_known = true;
      has_feature = true;
      // Number features are accepted but not used: entities count as singular.
      if (key.ends_with("Gender")) gender = parse_gender(value);
    }
    if (!has_form && !has_feature) continue;  // a stray '|': nothing to choose
    choice.alternatives.emplace_back(gender, std::string(form));
  }
  if (!entity_known) throw Error("[" + std::string(content) + "] names no X-Gender or Y-Gender");
  return choice;
}

// "PREPLOC;Y", "ART;X-Gender".
TemplateElement parse_function_word(std::string_view content) {
  size_t semicolon = content.rfind(';');
  if (semicolon == 0 || semicolon == std::string_view::npos) {
    throw Error("unknown markup [" + std::string(content) + "]");
  }
  std::string_view ref = content.substr(semicolon + 1);
  TemplateElement word;
  word.kind = TemplateElement::Kind::function_word;
  word.text = std::string(content.substr(0, semicolon));
  if (ref == "X" || ref == "X-Gender") {
    word.entity = TemplatePiece::Kind::subject;
  } else if (ref == "Y" || ref == "Y-Gender") {
    word.entity = TemplatePiece::Kind::object;
  } else {
    throw Error("unknown markup [" + std::string(content) + "]");
  }
  return word;
}

TemplateElement parse_markup(std::string_view content) {
  if (content.empty()) throw Error("empty []");
  if (is_slot(content)) {
    TemplateElement slot;
    slot.kind = content[0] == 'X' ? TemplateElement::Kind::subject : TemplateElement::Kind::object;
    if (content.size() > 1) slot.text = std::string(content.substr(2));
    return slot;
  }
  if (content.find_first_of("|=") != std::string_view::npos) return parse_choice(content);
  return parse_function_word(content);
}

// Relation ids as Wikidata writes them: "P" and a number without leading zeros.
bool parse_relation(std::string_view id, uint64_t& number) {
  if (id.size() < 2 || id.size() > 19 || id[0] != 'P' || id[1] == '0') return false;
  number = 0;
  for (char c : id.substr(1)) {
    if (c < '0' || c > '9') return false;
    number = number * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

struct FunctionWord {
  std::string_view lang;
  std::string_view word_class;
  std::string_view masculine;  // also for neuter gender
  std::string_view feminine;
  std::string_view neutral;  // for an unknown gender: both forms, as in "un(e)"
  // Words of the class, space-separated: the slot is dropped right after one of them.
  std::string_view class_words;
};

// See resolve_template's comment. ARTDEF has no entry: X-FACTR drops it before proper names.
constexpr std::array kFunctionWords = {
    FunctionWord{"fr", "PREPLOC", "à", "à", "à", "à au aux en dans"},
    FunctionWord{"fr", "PREPDEF", "de", "de", "de", "de du des d'"},
    FunctionWord{"fr", "ARTIND", "un", "une", "un(e)", "un une des"},
    FunctionWord{"es", "ART", "un", "una", "un(a)", "un una unos unas el la los las"},
    FunctionWord{"es", "ARTIND", "un", "una", "un(a)", "un una unos unas"},
    FunctionWord{"es", "PREPLOC", "en", "en", "en", "en"},
    FunctionWord{"es", "PREPDEF", "de", "de", "de", "de del"},
};

const FunctionWord* find_function_word(std::string_view lang, std::string_view word_class) {
  for (const FunctionWord& w : kFunctionWords) {
    if (w.lang == lang && w.word_class == word_class) return &w;
  }
  return nullptr;
}

// The last word of text when a space separates it from what follows, else "".
std::string_view last_word(std::string_view text) {
  size_t end = text.find_last_not_of(" \t");
  if (end == std::string_view::npos || end + 1 == text.size()) return {};
  size_t start = text.find_last_of(" \t", end);
  start = start == std::string_view::npos ? 0 : start + 1;
  return text.substr(start, end + 1 - start);
}

bool contains_word(std::string_view words, std::string_view word) {
  for (std::string_view w : split(words, ' ')) {
    if (w == word) return true;
  }
  return false;
}

std::string_view function_word(const TemplateElement& element, const TemplateElement* previous, std::string_view lang,
                               Gender gender, TemplateGaps* gaps) {
  const FunctionWord* w = find_function_word(lang, element.text);
  if (w == nullptr) {
    if (gaps) ++gaps->missing_function_words;
    return {};
  }
  // Some templates write the word and the slot too (fr P31 "est un [ARTIND;Y]", P159 "est en
  // [PREPLOC;Y]"): one is enough.
  if (previous != nullptr && previous->kind == TemplateElement::Kind::text &&
      contains_word(w->class_words, last_word(previous->text))) {
    return {};
  }
  if (gender == Gender::unknown) return w->neutral;
  return gender == Gender::feminine ? w->feminine : w->masculine;
}

// The form for a gender; for an unknown one the template's neutral form: an alternative with no
// gender, else the masculine and feminine forms together ("né(e)" when the feminine extends the
// masculine, "a/b" otherwise), else the first. A NEUT form is the neuter gender's (Russian's
// "родилось"), not a neutral one.
std::string choose(const TemplateElement& choice, Gender gender) {
  if (choice.alternatives.empty()) return {};
  auto form_for = [&](Gender g) -> const std::string* {
    for (const auto& [alternative_gender, form] : choice.alternatives)
      if (alternative_gender == g) return &form;
    return nullptr;
  };
  if (gender != Gender::unknown) {
    if (const std::string* form = form_for(gender)) return *form;
    return choice.alternatives.front().second;
  }
  if (const std::string* form = form_for(Gender::unknown)) return *form;
  const std::string* masculine = form_for(Gender::masculine);
  const std::string* feminine = form_for(Gender::feminine);
  if (masculine == nullptr || feminine == nullptr || *masculine == *feminine) return choice.alternatives.front().second;
  if (feminine->starts_with(*masculine)) return *masculine + "(" + feminine->substr(masculine->size()) + ")";
  return *masculine + "/" + *feminine;
}

bool is_closing_punctuation(char c) { return c == '.' || c == ',' || c == '?' || c == '!'; }

// Collapses whitespace runs, drops a space before punctuation that ends a word, and trims the
// sentence's ends (first/last: whether this text begins/ends the sentence).
std::string normalise_spaces(std::string_view in, bool first, bool last, bool attach_punctuation) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (is_space(c)) {
      if ((out.empty() && first) || (!out.empty() && out.back() == ' ')) continue;
      out += ' ';
      continue;
    }
    bool ends_word = i + 1 == in.size() ? last : is_space(in[i + 1]);
    if (attach_punctuation && is_closing_punctuation(c) && ends_word && !out.empty() && out.back() == ' ')
      out.pop_back();
    out += c;
  }
  if (last && !out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

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
    size_t close = source.find_first_of("[]", bracket + 1);
    if (close == std::string_view::npos || source[close] == '[') {
      throw Error("unbalanced '[' at byte " + std::to_string(bracket));
    }
    TemplateElement element = parse_markup(source.substr(bracket + 1, close - bracket - 1));
    has_subject |= element.kind == TemplateElement::Kind::subject;
    has_object |= element.kind == TemplateElement::Kind::object;
    parsed.elements.push_back(std::move(element));
    pos = close + 1;
  }
  if (!has_subject || !has_object) throw Error("template lacks [X] or [Y]");
  return parsed;
}

RelationTemplates RelationTemplates::load_dir(const std::string& dir, const std::vector<std::string>& langs) {
  if (!std::filesystem::is_directory(dir)) throw Error(location(dir) + "not a directory");
  RelationTemplates templates;
  for (const std::string& lang : langs) {
    if (templates.has_language(lang)) continue;  // listed twice
    for (const char* suffix : {".jsonl", ".jsonl.gz", ".jsonl.zst", ".jsonl.bz2"}) {
      std::string path = (std::filesystem::path(dir) / (lang + suffix)).string();
      if (std::filesystem::exists(path)) {
        templates.load_file(lang, path);
        break;
      }
    }
  }
  return templates;
}

void RelationTemplates::load_file(const std::string& lang, const std::string& path) {
  // Parsed into a copy first, so that a bad file leaves this object as it was.
  std::unordered_map<uint64_t, Loaded> loaded;
  if (auto it = by_lang_.find(lang); it != by_lang_.end()) loaded = it->second;
  simdjson::dom::parser parser;
  for_each_data_line(path, [&](uint64_t line, std::string_view text) {
    auto fail = [&](const std::string& reason) { throw Error(location(path, line) + reason); };
    simdjson::dom::element root;
    if (auto err = parser.parse(text.data(), text.size()).get(root)) {
      fail(std::string("invalid JSON: ") + simdjson::error_message(err));
    }
    if (!root.is_object()) fail("not a JSON object");
    std::string_view relation, template_text;
    if (root["relation"].get(relation) != simdjson::SUCCESS) fail("no string \"relation\"");
    if (root["template"].get(template_text) != simdjson::SUCCESS) fail("no string \"template\"");
    uint64_t number = 0;
    if (!parse_relation(relation, number)) fail("relation \"" + std::string(relation) + "\" is not P<number>");
    Loaded entry;
    try {
      entry.parsed = parse_template(template_text);
    } catch (const Error& e) {
      fail("template of " + std::string(relation) + ": " + e.what());
    }
    entry.parsed.relation = number;
    entry.origin = location(path, line);
    entry.origin.resize(entry.origin.size() - 2);  // without location()'s ": "
    auto [it, inserted] = loaded.try_emplace(number, std::move(entry));
    if (!inserted) fail("relation " + std::string(relation) + " given again (first at " + it->second.origin + ")");
  });
  by_lang_[lang] = std::move(loaded);
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

std::vector<TemplatePiece> resolve_template(const ParsedTemplate& parsed, std::string_view lang, Gender subject_gender,
                                            Gender object_gender, TemplateGaps* gaps, bool attach_punctuation) {
  std::vector<TemplatePiece> pieces;
  auto append_text = [&](std::string_view text) {
    if (text.empty()) return;
    if (pieces.empty() || pieces.back().kind != TemplatePiece::Kind::text)
      pieces.push_back({TemplatePiece::Kind::text, {}});
    pieces.back().text += text;
  };
  const TemplateElement* previous = nullptr;
  for (const TemplateElement& element : parsed.elements) {
    Gender gender = element.entity == TemplatePiece::Kind::subject ? subject_gender : object_gender;
    switch (element.kind) {
      case TemplateElement::Kind::text:
        append_text(element.text);
        break;
      case TemplateElement::Kind::subject:
      case TemplateElement::Kind::object:
        // Labels are not inflected: a case other than the nominative is a gap.
        if (gaps && !element.text.empty() && element.text != "Nom") ++gaps->uninflected;
        pieces.push_back({element.kind == TemplateElement::Kind::subject ? TemplatePiece::Kind::subject
                                                                         : TemplatePiece::Kind::object,
                          {}});
        break;
      case TemplateElement::Kind::choice:
        append_text(choose(element, gender));
        break;
      case TemplateElement::Kind::function_word:
        append_text(function_word(element, previous, lang, gender, gaps));
        break;
    }
    previous = &element;
  }
  std::vector<TemplatePiece> normalised;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].kind == TemplatePiece::Kind::text) {
      pieces[i].text = normalise_spaces(pieces[i].text, i == 0, i + 1 == pieces.size(), attach_punctuation);
      if (pieces[i].text.empty()) continue;
    }
    normalised.push_back(std::move(pieces[i]));
  }
  return normalised;
}

std::string fill_template(const ParsedTemplate& parsed, std::string_view lang, std::string_view subject_label,
                          std::string_view object_label, Gender subject_gender, Gender object_gender) {
  std::string out;
  for (const TemplatePiece& piece : resolve_template(parsed, lang, subject_gender, object_gender)) {
    if (piece.kind == TemplatePiece::Kind::subject) {
      out += subject_label;
    } else if (piece.kind == TemplatePiece::Kind::object) {
      out += object_label;
    } else {
      out += piece.text;
    }
  }
  return out;
}

}  // namespace kglm::gen
