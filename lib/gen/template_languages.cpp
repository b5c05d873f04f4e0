#include "gen/template_languages.hpp"

#include <unicode/uchar.h>
#include <unicode/uscript.h>
#include <unicode/utf8.h>

#include <array>
#include <vector>

namespace kglm::gen {

namespace {

std::vector<UChar32> code_points(std::string_view s) {
  std::vector<UChar32> out;
  for (int32_t i = 0, n = static_cast<int32_t>(s.size()); i < n;) {
    UChar32 c;
    U8_NEXT(s.data(), i, n, c);
    out.push_back(c);
  }
  return out;
}

std::string_view first_word(std::string_view label) {
  const size_t space = label.find(' ');
  return space == std::string_view::npos ? label : label.substr(0, space);
}

// The last code point of s, as UTF-8 ("" for an empty s).
std::string_view last_char(std::string_view s) {
  if (s.empty()) return {};
  int32_t i = static_cast<int32_t>(s.size());
  UChar32 c;
  U8_PREV(s.data(), 0, i, c);
  (void)c;
  return s.substr(static_cast<size_t>(i));
}

bool ends_with_any(std::string_view word, std::initializer_list<std::string_view> endings) {
  for (std::string_view e : endings)
    if (word.ends_with(e)) return true;
  return false;
}

bool is_one_of(std::string_view c, std::initializer_list<std::string_view> set) {
  for (std::string_view s : set)
    if (c == s) return true;
  return false;
}

bool has_class(const TemplateEntity& e, std::string_view word) { return e.classes.find(word) != std::string::npos; }

// X-FACTR's French gender guess from the first word's ending (a list of feminine and masculine
// endings, longest first; masculine when none matches).
Gender french_gender(std::string_view label) {
  const std::string_view w = first_word(label);
  if (ends_with_any(w, {"ouille", "aisse", "ousse", "aille", "eille", "ouche", "anche"})) return Gender::feminine;
  if (ends_with_any(w, {"asse", "esse", "isse", "ance", "anse", "ence", "once", "enne", "onne", "aine", "eine",
                        "erne", "ande", "ende", "onde", "arde", "orde", "euse", "ouse", "aise", "oise", "ache",
                        "iche", "ehce", "oche", "uche", "iere", "eure", "atte", "otte", "oute", "orte", "ante",
                        "ente", "inte", "onte", "alle", "elle", "ille", "olle", "appe", "ampe", "ombe", "igue"}))
    return Gender::feminine;
  if (ends_with_any(w, {"aume", "isme", "ours", "euil", "ueil"})) return Gender::masculine;
  if (ends_with_any(w, {"aie", "oue", "eue", "ace", "ece", "ice", "une", "ine", "ade", "ase",
                        "ese", "ise", "yse", "ose", "use", "ave", "eve", "ive", "ete", "ête"}))
    return Gender::feminine;
  if (ends_with_any(w, {"and", "ant", "ent", "int", "ond", "ont", "eau", "aud", "aut", "ais", "ait", "out",
                        "oux", "age", "ege", "ème", "ome", "est", "eul", "all", "air", "erf", "ert", "arc",
                        "ars", "art", "our", "ord", "ors", "ort", "oir", "eur", "ail", "eil", "ing"}))
    return Gender::masculine;
  if (ends_with_any(w, {"te", "ée", "ie", "ue"})) return Gender::feminine;
  return Gender::masculine;
}

Gender spanish_gender(std::string_view label) {
  const std::string_view w = first_word(label);
  if (w.ends_with("o")) return Gender::masculine;
  if (w.ends_with("a") || ends_with_any(w, {"ción", "sión", "dad", "tad", "umbre"})) return Gender::feminine;
  return Gender::masculine;
}

// X-FACTR's Russian rule on the whole label's last letter. Its feminine test names the Latin "a";
// the Cyrillic "а" is meant (Москва, Франция) and is taken here too.
Gender russian_gender(std::string_view label) {
  const std::string_view c = last_char(label);
  if (is_one_of(c, {"a", "а", "я"})) return Gender::feminine;
  if (is_one_of(c, {"о", "е", "ё"})) return Gender::neuter;
  return Gender::masculine;
}

Gender greek_gender(std::string_view label) {
  const std::string_view w = first_word(label);
  if (is_one_of(last_char(w), {"η", "ή", "α"})) return Gender::feminine;
  if (ends_with_any(w, {"ος", "ης", "ής", "ας", "άς", "ός", "ήλ"})) return Gender::masculine;
  return Gender::neuter;
}

Agreement french(const TemplateEntity& e) {
  Agreement a;
  a.gender = e.gender;
  if (e.gender != Gender::unknown) return a;
  a.gender = french_gender(e.label);
  // The first class word found decides, in X-FACTR's order.
  if (has_class(e, "state") || has_class(e, "country"))
    a.country = true;
  else if (has_class(e, "business") || has_class(e, "enterprise"))
    a.gender = Gender::feminine;
  else if (has_class(e, "city"))
    a.city = true;
  else if (has_class(e, "human"))
    a.gender = Gender::masculine;
  else if (has_class(e, "island") || has_class(e, "musical group") || has_class(e, "record label"))
    ;
  else if (has_class(e, "language"))
    a.gender = Gender::masculine;
  else if (has_class(e, "sports team") || has_class(e, "automobile manufacturer") || has_class(e, "football club"))
    a.gender = Gender::feminine;
  return a;
}

Agreement spanish(const TemplateEntity& e) {
  Agreement a;
  a.gender = e.gender;
  if (e.gender != Gender::unknown) return a;
  a.gender = spanish_gender(e.label);
  if (has_class(e, "human")) a.gender = Gender::masculine;
  if (has_class(e, "state") || has_class(e, "country")) {
    a.gender = Gender::feminine;
  } else if (has_class(e, "musical group")) {
    a.gender = Gender::masculine;
    a.plural = true;
  } else if (has_class(e, "record label") || has_class(e, "football club")) {
    a.gender = Gender::feminine;
  }
  return a;
}

Agreement greek(const TemplateEntity& e) {
  Agreement a;
  a.gender = e.gender;
  if (a.gender == Gender::unknown) {
    a.gender = greek_gender(e.label);
    if (a.gender == Gender::neuter) {
      const std::string_view last = last_char(e.label);
      if (has_class(e, "state") || has_class(e, "country")) {
        if (!is_one_of(last, {"ν", "ο", "ό"})) a.gender = Gender::feminine;
      } else if (has_class(e, "business") || has_class(e, "enterprise")) {
        a.gender = Gender::feminine;
      } else if (has_class(e, "city")) {
        if (!is_one_of(last, {"ι", "ο"})) a.gender = Gender::feminine;
      } else if (has_class(e, "human")) {
        a.gender = Gender::masculine;
      } else if (has_class(e, "island")) {
        a.gender = Gender::feminine;
      } else if (has_class(e, "literary work")) {
      } else if (has_class(e, "musical group")) {
        a.gender = Gender::masculine;
        a.plural = true;
      } else if (has_class(e, "record label")) {
        a.gender = Gender::feminine;
      } else if (has_class(e, "language")) {
        a.plural = true;
      } else if (has_class(e, "sports team") || has_class(e, "automobile manufacturer") ||
                 has_class(e, "football club")) {
        a.gender = Gender::feminine;
      }
    }
  }
  // A label in "-ες" reads as a feminine plural (X-FACTR: "ές" too for the object; both here).
  if (e.label.ends_with("ες") || e.label.ends_with("ές")) {
    a.gender = Gender::feminine;
    a.plural = true;
  }
  return a;
}

// Greek articles: definite, indefinite and "σε" + definite, by gender, number and case.
struct GreekArticle {
  std::string_view kind;  // DEF, INDEF, PREPDEF
  std::string_view case_name;
  // masculine, feminine, neuter; singular then plural
  std::array<std::string_view, 3> singular, plural;
};
constexpr GreekArticle kGreekArticles[] = {
    {"DEF", "NOM", {"ο", "η", "το"}, {"οι", "οι", "τα"}},
    {"DEF", "GEN", {"του", "της", "του"}, {"των", "των", "των"}},
    {"DEF", "ACC", {"τον", "την", "το"}, {"τους", "τις", "τα"}},
    {"PREPDEF", "GEN", {"στου", "στης", "στου"}, {"στων", "στων", "στων"}},
    {"PREPDEF", "ACC", {"στον", "στην", "στο"}, {"στους", "στις", "στα"}},
    {"INDEF", "NOM", {"ένας", "μία", "ένα"}, {"ένας από τους", "μία από τις", "ένα από τα"}},
    {"INDEF", "GEN", {"ενός", "μίας", "ενός"}, {"ενός από τους", "μίας από τις", "ενός από τα"}},
    {"INDEF", "ACC", {"έναν", "μία", "ένα"}, {"έναν από τους", "μία από τις", "ένα από τα"}},
};

std::optional<std::string> greek_article(std::string_view kind, const Agreement& a, std::string_view case_name) {
  const std::string_view c = case_name.empty() ? "NOM" : case_name;
  const size_t g = a.gender == Gender::feminine ? 1 : a.gender == Gender::neuter ? 2 : 0;
  for (const GreekArticle& article : kGreekArticles)
    if (article.kind == kind && article.case_name == c)
      return std::string(a.plural ? article.plural[g] : article.singular[g]);
  return std::nullopt;
}

bool french_vowel_start(std::string_view word) {
  // X-FACTR's test: a lower-case vowel first (a capital never elides there).
  for (std::string_view v : {"a", "o", "i", "e", "u", "y", "à", "è", "ù", "é", "â", "ê", "î", "ô", "û"})
    if (word.starts_with(v)) return true;
  return false;
}

std::optional<std::string> french_word(std::string_view word_class, const Agreement& a, std::string_view next_word) {
  const bool feminine = a.gender == Gender::feminine;
  if (word_class == "ARTDEF") {
    if (!a.country) return "";
    if (french_vowel_start(next_word)) return "l'";
    return a.plural ? "les" : feminine ? "la" : "le";
  }
  if (word_class == "PREPDEF") {
    if (!a.country) return "de";
    return a.plural ? "des" : feminine ? "de la" : "du";
  }
  if (word_class == "PREPDEF-à") {
    if (!a.country) return "à";
    return a.plural ? "aux" : feminine ? "à la" : "au";
  }
  if (word_class == "ARTIND") return a.plural ? "des" : feminine ? "une" : "un";
  if (word_class == "PREPLOC") return a.city ? "à" : "en";
  return std::nullopt;
}

std::optional<std::string> spanish_word(std::string_view word_class, const Agreement& a) {
  if (word_class == "ART") return a.gender == Gender::feminine ? "una" : "un";
  if (word_class == "DEF") return a.gender == Gender::feminine ? "la" : "el";
  return std::nullopt;
}

// Any letter of the Latin script (X-FACTR: a letter whose Unicode name says LATIN).
bool has_latin_letter(std::string_view s) {
  for (UChar32 c : code_points(s)) {
    UErrorCode status = U_ZERO_ERROR;
    if (u_isalpha(c) && uscript_getScript(c, &status) == USCRIPT_LATIN) return true;
  }
  return false;
}

// Python's str.isupper(): some cased letter, and no lower-case one.
bool all_capitals(std::string_view s) {
  bool cased = false;
  for (UChar32 c : code_points(s)) {
    if (u_islower(c) || u_istitle(c)) return false;
    cased |= u_isupper(c) != 0;
  }
  return cased;
}

// Turkish copula suffix after a word (X-FACTR's rule: "'" then d/t by the last letter, the vowel
// by the last vowel's harmony, "lar"/"ler" for a plural).
std::string turkish_copula(std::string_view word, bool plural) {
  std::string_view last_vowel;
  for (std::string_view rest = word; !rest.empty();) {
    const std::string_view c = last_char(rest);
    if (is_one_of(c, {"a", "o", "u", "ı", "e", "ü", "ö", "i"})) {
      last_vowel = c;
      break;
    }
    rest.remove_suffix(c.empty() ? 1 : c.size());
  }
  const std::string_view first = is_one_of(last_char(word), {"ç", "f", "h", "k", "p", "s", "ş", "t"}) ? "'t" : "'d";
  std::string_view vowel = "i", plural_suffix = "lar";
  if (is_one_of(last_vowel, {"a", "ı"})) {
    vowel = "ı";
  } else if (is_one_of(last_vowel, {"o", "u"})) {
    vowel = "u";
  } else if (is_one_of(last_vowel, {"e", "i"})) {
    plural_suffix = "ler";
  } else if (is_one_of(last_vowel, {"ö", "ü"})) {
    vowel = "ü";
    plural_suffix = "ler";
  }
  std::string out(word);
  out += first;
  out += vowel;
  out += 'r';
  if (plural) out += plural_suffix;
  return out;
}

}  // namespace

Agreement agreement(std::string_view lang, const TemplateEntity& e) {
  Agreement a;
  if (lang == "fr") {
    a = french(e);
  } else if (lang == "es") {
    a = spanish(e);
  } else if (lang == "el") {
    a = greek(e);
  } else {
    a.gender = e.gender;
    if (a.gender == Gender::unknown && lang == "ru") a.gender = russian_gender(e.label);
    const bool neutral = a.gender == Gender::unknown || (lang == "ru" && a.gender == Gender::neuter);
    if (neutral && (lang == "ru" || lang == "he" || lang == "mr") && has_class(e, "human"))
      a.gender = Gender::masculine;
  }
  a.human = e.human;
  return a;
}

std::optional<std::string> function_word(std::string_view lang, std::string_view word_class, const Agreement& a,
                                         std::string_view case_name, std::string_view next_word) {
  if (lang == "fr") return french_word(word_class, a, next_word);
  if (lang == "es") return spanish_word(word_class, a);
  if (lang == "el") return greek_article(word_class, a, case_name);
  return std::nullopt;
}

std::string_view function_word_class_words(std::string_view lang, std::string_view word_class) {
  struct ClassWords {
    std::string_view lang, word_class, words;
  };
  static constexpr ClassWords kWords[] = {
      {"fr", "PREPLOC", "à au aux en dans"}, {"fr", "PREPDEF", "de du des d'"}, {"fr", "PREPDEF-à", "à au aux"},
      {"fr", "ARTIND", "un une des"},        {"fr", "ARTDEF", "le la les l'"},  {"es", "ART", "un una unos unas"},
      {"es", "DEF", "el la los las"},
  };
  for (const ClassWords& w : kWords)
    if (w.lang == lang && w.word_class == word_class) return w.words;
  return {};
}

bool keeps_label_plain(std::string_view lang, std::string_view label) {
  if (label.empty()) return true;
  if (lang == "tr") return false;  // X-FACTR inflects every Turkish label (lower-cased, capitals put back)
  if (has_latin_letter(label) || all_capitals(label)) return true;
  // Greek: a final consonant marks a foreign name (X-FACTR's list of consonants).
  return lang == "el" &&
         is_one_of(last_char(label), {"β", "γ", "δ", "ζ", "κ", "λ", "μ", "ν", "ξ", "π", "ρ", "τ", "φ", "χ", "ψ"});
}

std::optional<std::string> inflect_by_rule(std::string_view lang, std::string_view label, const TemplateElement& slot,
                                           bool plural) {
  if (slot.copula && lang == "tr") return turkish_copula(label, plural);
  if (lang == "mr" && slot.slot_case == "LOC") return std::string(label) + "त";
  return std::nullopt;
}

bool case_on_last_word(std::string_view lang) { return lang == "tr" || lang == "hu" || lang == "bn"; }

}  // namespace kglm::gen
