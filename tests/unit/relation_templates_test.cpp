#include "gen/relation_templates.hpp"
#include "gen/template_realizer.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "test_paths.hpp"

namespace {

using kglm::Error;
using kglm::gen::Entity;
using kglm::gen::fill_template;
using kglm::gen::Gender;
using kglm::gen::InflectionTables;
using kglm::gen::parse_template;
using kglm::gen::RealizeOptions;
using kglm::gen::RelationTemplates;
using kglm::gen::resolve_template;
using kglm::gen::TemplateElement;
using kglm::gen::TemplateEntity;
using kglm::gen::TemplateGaps;
using kglm::gen::TemplatePiece;

const std::vector<std::string> kFixtureLangs = {"en", "es", "fr", "ko", "ru", "tr", "vi"};
// The 23 relations of X-FACTR, each in every fixture file.
const std::vector<uint64_t> kFixtureRelations = {19,  20,   279, 37,  47,  138, 463, 106, 530, 27,  30, 1376,
                                                 131, 1412, 17,  276, 103, 31,  495, 159, 36,  740, 361};

TemplateEntity entity(std::string label, Gender gender = Gender::unknown, std::string classes = "",
                      bool human = false) {
  TemplateEntity e;
  e.label = std::move(label);
  e.gender = gender;
  e.classes = std::move(classes);
  e.human = human;
  return e;
}

std::string fill(std::string_view source, std::string_view lang = "xx", Gender subject = Gender::unknown,
                 Gender object = Gender::unknown) {
  return fill_template(parse_template(source), lang, entity("SUBJ", subject), entity("OBJ", object));
}

// X-FACTR's probe realisation (first form for an unknown gender, " ." kept).
std::string probe_fill(std::string_view source, std::string_view lang, const TemplateEntity& subject,
                       const TemplateEntity& object, const InflectionTables* tables = nullptr,
                       TemplateGaps* gaps = nullptr) {
  RealizeOptions options;
  options.probe = true;
  options.inflections = tables;
  std::string out;
  for (const TemplatePiece& p : resolve_template(parse_template(source), lang, subject, object, options, gaps))
    out += p.text;
  return out;
}

std::string parse_error(std::string_view source) {
  try {
    parse_template(source);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// --- parsing and filling, no fixtures needed ---

TEST(RelationTemplates, ParsesSlotsChoicesAndFunctionWords) {
  auto parsed = parse_template("[X] est [né;X-Gender=MASC|née;X-Gender=FEM] [PREPLOC;Y] [Y.Loc] .");
  std::vector<TemplateElement::Kind> kinds;
  for (const auto& e : parsed.elements) kinds.push_back(e.kind);
  using K = TemplateElement::Kind;
  EXPECT_EQ(kinds, (std::vector<K>{K::slot, K::text, K::choice, K::text, K::function_word, K::text, K::slot, K::text}));
  const auto& choice = parsed.elements[2];
  EXPECT_EQ(choice.entity, Entity::subject);
  ASSERT_EQ(choice.alternatives.size(), 2u);
  EXPECT_EQ(choice.alternatives[0], (TemplateElement::Alternative{Gender::masculine, 0, 0, "né"}));
  EXPECT_EQ(choice.alternatives[1], (TemplateElement::Alternative{Gender::feminine, 0, 0, "née"}));
  EXPECT_EQ(parsed.elements[4].text, "PREPLOC");
  EXPECT_EQ(parsed.elements[4].entity, Entity::object);
  EXPECT_EQ(parsed.elements[6].slot_case, "LOC");
  // Case marks in any spelling, a gender imposed on a slot, the copula, a fixed case and gender.
  EXPECT_EQ(parse_template("[X.Masc.Nom] [Y.IN+ESS]").elements[2].slot_case, "IN+ESS");
  EXPECT_EQ(parse_template("[X.Masc.Nom] [Y.IN+ESS]").elements[0].fixed_gender, Gender::masculine);
  EXPECT_EQ(parse_template("[X.Masc.Nom] [Y.IN+ESS]").elements[0].slot_case, "");
  EXPECT_TRUE(parse_template("[X] bir [Y;be] .").elements[2].copula);
  EXPECT_EQ(parse_template("[DEF.Gen;X] [X] [Y]").elements[0].slot_case, "GEN");
  EXPECT_EQ(parse_template("[DEF;Y.Fem] [X] [Y]").elements[0].fixed_gender, Gender::feminine);
  EXPECT_EQ(kglm::gen::find_slot(parse_template("[Y] of [X.Gen]"), Entity::subject)->slot_case, "GEN");
}

TEST(RelationTemplates, ResolvesIntoPiecesWithTheLabels) {
  auto pieces = resolve_template(parse_template("[X] was born in [Y] ."), "en", entity("Ada"), entity("London"));
  EXPECT_EQ(pieces, (std::vector<TemplatePiece>{{TemplatePiece::Kind::subject, "Ada"},
                                                {TemplatePiece::Kind::text, " was born in "},
                                                {TemplatePiece::Kind::object, "London"},
                                                {TemplatePiece::Kind::text, "."}}));
  // Object first, as in vi P103.
  pieces = resolve_template(parse_template("[Y] là ngôn ngữ bản địa của [X] ."), "vi", entity("A"), entity("B"));
  ASSERT_EQ(pieces.size(), 4u);
  EXPECT_EQ(pieces[0].kind, TemplatePiece::Kind::object);
  EXPECT_EQ(pieces[2].kind, TemplatePiece::Kind::subject);
}

TEST(RelationTemplates, GenderChoicesFollowTheirEntity) {
  const char* x_choice = "[X] [a;X-Gender=MASC|b;X-Gender=FEM|c;X-Gender=NEUT] [Y] .";
  EXPECT_EQ(fill(x_choice, "xx", Gender::masculine), "SUBJ a OBJ.");
  EXPECT_EQ(fill(x_choice, "xx", Gender::feminine), "SUBJ b OBJ.");
  EXPECT_EQ(fill(x_choice, "xx", Gender::neuter), "SUBJ c OBJ.");
  // An unknown gender when rendering text: both forms, committing to neither; a form with no
  // gender is the template's own neutral form. The probe takes the first (X-FACTR's default).
  EXPECT_EQ(fill(x_choice, "xx", Gender::unknown, Gender::feminine), "SUBJ a/b OBJ.");
  EXPECT_EQ(probe_fill(x_choice, "he", entity("S"), entity("O")), "S a O .");
  EXPECT_EQ(fill("[X] [a;X-Gender=MASC|ab;X-Gender=FEM] [Y]", "xx"), "SUBJ a(b) OBJ");
  EXPECT_EQ(fill("[X] [a;X-Gender=MASC|n|b;X-Gender=FEM] [Y]", "xx"), "SUBJ n OBJ");
  EXPECT_EQ(fill("[X] [a;X-Gender=MASC|b;X-Gender=FEM] [Y]", "xx", Gender::neuter), "SUBJ a OBJ");
  const char* y_choice = "[X] [a;Y-Gender=MASC|b;Y-Gender=FEM] [Y]";
  EXPECT_EQ(fill(y_choice, "xx", Gender::feminine, Gender::masculine), "SUBJ a OBJ");
  EXPECT_EQ(fill(y_choice, "xx", Gender::masculine, Gender::feminine), "SUBJ b OBJ");
}

// fr P1923 writes its pair without '|': "[participé;Y-Gender=MASC;participée;Y-Gender=FEM]".
TEST(RelationTemplates, PairsWithoutBarAreAlternativesToo) {
  const auto parsed = parse_template("[Y] a [participé;Y-Gender=MASC;participée;Y-Gender=FEM] [PREPDEF-à;X] [X] .");
  ASSERT_EQ(parsed.elements[2].alternatives.size(), 2u);
  EXPECT_EQ(parsed.elements[2].alternatives[1], (TemplateElement::Alternative{Gender::feminine, 0, 0, "participée"}));
  EXPECT_EQ(parsed.elements[2].entity, Entity::object);
  // "l'équipe" has no KG gender: X-FACTR's French ending rule makes "équipe" feminine ("-pe" is
  // none of its feminine endings: masculine); a country takes "au"/"à la", anything else "à".
  EXPECT_EQ(fill_template(parsed, "fr", entity("Coupe du monde 2018"), entity("Équipe de France", Gender::feminine)),
            "Équipe de France a participée à Coupe du monde 2018.");
  EXPECT_EQ(fill_template(parsed, "fr", entity("Canada", Gender::unknown, "sovereign state,country"),
                          entity("Équipe", Gender::masculine)),
            "Équipe a participé au Canada.");
}

// fr P30 has a stray ';' ("|;située;X-Gender=FEM"); an alternative with conditions only is an
// empty word for them.
TEST(RelationTemplates, ToleratesStrayEmptyFields) {
  const char* fr_p30 = "[X] est [situé;X-Gender=MASC|;située;X-Gender=FEM] en [Y] .";
  EXPECT_EQ(fill(fr_p30, "fr", Gender::feminine), "SUBJ est située en OBJ.");
  EXPECT_EQ(fill(fr_p30, "fr", Gender::masculine), "SUBJ est situé en OBJ.");
  EXPECT_EQ(fill("[X] [a;X-Gender=MASC||b;X-Gender=FEM|] [Y]", "xx", Gender::feminine), "SUBJ b OBJ");
  EXPECT_EQ(fill("[X] [a;X-Gender=MASC|;X-Gender=FEM] [Y] .", "xx", Gender::feminine), "SUBJ OBJ.");
}

// es P264 "[representado;X-Gender=MASC|representada;X-Gender=FEM|representados;X-Number=PL]", el P30
// "[βρίσκεται;X-Number=SG|βρίσκονται;X-Number=PL]": the plural form for a plural entity (X-FACTR: a
// musical group in es and el, a label in "-ες" in el).
TEST(RelationTemplates, NumberChoices) {
  const char* es =
      "[X] está [representado;X-Gender=MASC|representada;X-Gender=FEM|representados;X-Number=PL] por [Y] .";
  EXPECT_EQ(fill_template(parse_template(es), "es", entity("Queen", Gender::unknown, "musical group"), entity("EMI")),
            "Queen está representados por EMI.");
  EXPECT_EQ(fill_template(parse_template(es), "es", entity("Shakira", Gender::feminine), entity("Sony")),
            "Shakira está representada por Sony.");
  const char* el = "[X] [βρίσκεται;X-Number=SG|βρίσκονται;X-Number=PL] στην [Y] .";
  EXPECT_EQ(fill_template(parse_template(el), "el", entity("Σεϋχέλλες"), entity("Αφρική")),
            "Σεϋχέλλες βρίσκονται στην Αφρική.");
  EXPECT_EQ(fill_template(parse_template(el), "el", entity("Αθήνα"), entity("Ευρώπη")), "Αθήνα βρίσκεται στην Ευρώπη.");
}

// bn P31 "[X] [human: একজন ; non-human: একটি] [Y] ।": the classifier by whether X is a human.
TEST(RelationTemplates, BengaliHumanClassifier) {
  const char* bn = "[X] [human: একজন ; non-human: একটি] [Y] ।";
  EXPECT_EQ(fill_template(parse_template(bn), "bn", entity("রবীন্দ্রনাথ", Gender::unknown, "human", true), entity("কবি")),
            "রবীন্দ্রনাথ একজন কবি ।");
  EXPECT_EQ(fill_template(parse_template(bn), "bn", entity("ঢাকা", Gender::unknown, "city"), entity("শহর")),
            "ঢাকা একটি শহর ।");
}

// he P47's "[Х]" is a Cyrillic Ha: read as [X], and said.
TEST(RelationTemplates, LookalikeSlotLettersAreReadAndReported) {
  const auto parsed = parse_template("[\xD0\xA5] [גובל;X-Gender=MASC|גובלת;X-Gender=FEM] ב[Y] .");
  ASSERT_EQ(parsed.repairs.size(), 1u);
  EXPECT_NE(parsed.repairs[0].find("U+0425"), std::string::npos);
  EXPECT_EQ(fill_template(parsed, "he", entity("ישראל", Gender::feminine), entity("מצרים")), "ישראל גובלת במצרים.");
}

// French: X-FACTR's articles by whether the entity is a country or a city, its gender from the KG
// or, failing that, from the first word's ending and its classes.
TEST(RelationTemplates, FrenchArticlesAndContractions) {
  const TemplateEntity france = entity("France", Gender::unknown, "sovereign state,country");
  const TemplateEntity canada = entity("Canada", Gender::unknown, "sovereign state,country");
  const TemplateEntity etats = entity("États-Unis", Gender::unknown, "country");
  const TemplateEntity paris = entity("Paris", Gender::unknown, "city,big city");
  const TemplateEntity hugo = entity("Victor Hugo", Gender::masculine, "human", true);
  const TemplateEntity curie = entity("Marie Curie", Gender::feminine, "human", true);
  const TemplateEntity dior = entity("Dior", Gender::unknown, "business");
  const TemplateEntity francais = entity("français", Gender::unknown, "language,natural language");
  // ARTDEF: only before a country (elided before a lower-case vowel), never before other names.
  const char* p47 = "[ARTDEF;X] [X] partage la frontière avec [ARTDEF;Y] [Y] .";
  EXPECT_EQ(fill_template(parse_template(p47), "fr", france, canada), "la France partage la frontière avec le Canada.");
  EXPECT_EQ(fill_template(parse_template(p47), "fr", paris, entity("île", Gender::unknown, "country")),
            "Paris partage la frontière avec l'île.");
  // PREPDEF: "du"/"de la" before a country, "de" before other names; PREPDEF-à: "au"/"à la"/"à".
  const char* p37 = "La langue officielle [PREPDEF;X] [X] est [ARTDEF;Y] [Y] .";
  EXPECT_EQ(fill_template(parse_template(p37), "fr", canada, francais), "La langue officielle du Canada est français.");
  EXPECT_EQ(fill_template(parse_template(p37), "fr", france, francais),
            "La langue officielle de la France est français.");
  EXPECT_EQ(fill_template(parse_template(p37), "fr", paris, francais), "La langue officielle de Paris est français.");
  const char* p937 = "[X] travaillait auparavant [PREPDEF-à;Y] [Y] .";
  EXPECT_EQ(fill_template(parse_template(p937), "fr", hugo, canada), "Victor Hugo travaillait auparavant au Canada.");
  EXPECT_EQ(fill_template(parse_template(p937), "fr", hugo, france), "Victor Hugo travaillait auparavant à la France.");
  EXPECT_EQ(fill_template(parse_template(p937), "fr", hugo, paris), "Victor Hugo travaillait auparavant à Paris.");
  // PREPLOC: "à" before a city, "en" before anything else.
  const char* p19 = "[X] est [né;X-Gender=MASC|née;X-Gender=FEM] [PREPLOC;Y] [Y] .";
  EXPECT_EQ(fill_template(parse_template(p19), "fr", curie, paris), "Marie Curie est née à Paris.");
  EXPECT_EQ(fill_template(parse_template(p19), "fr", hugo, france), "Victor Hugo est né en France.");
  // ARTIND agrees with the object; the template's own "un" before it gives way (P31).
  const char* p31 = "[ARTDEF;X] [X] est un [ARTIND;Y] [Y] .";
  EXPECT_EQ(fill_template(parse_template(p31), "fr", dior, entity("entreprise")), "Dior est une entreprise.");
  EXPECT_EQ(fill_template(parse_template(p31), "fr", dior, entity("parfum")), "Dior est un parfum.");
  // A business is feminine, a language masculine whatever their endings; plural countries: "les".
  const char* p407 = "[X] a été [écrit;X-Gender=MASC|écrite;X-Gender=FEM] en [Y] .";
  EXPECT_EQ(fill_template(parse_template(p407), "fr", dior, francais), "Dior a été écrite en français.");
  EXPECT_EQ(fill_template(parse_template(p407), "fr", entity("Le Monde"), francais),
            "Le Monde a été écrit en français.");
  EXPECT_EQ(fill_template(parse_template(p407), "fr", entity("La Marseillaise"), francais),
            "La Marseillaise a été écrit en français.");  // "La" ends in "a": masculine by the ending rule
  EXPECT_EQ(fill_template(parse_template(p47), "fr", etats, canada),
            "le États-Unis partage la frontière avec le Canada.");
}

TEST(RelationTemplates, SpanishArticles) {
  EXPECT_EQ(fill("[X] es [ART;X-Gender] [Y] .", "es", Gender::feminine), "SUBJ es una OBJ.");
  EXPECT_EQ(fill("[X] es [ART;X-Gender] [Y] .", "es", Gender::neuter), "SUBJ es un OBJ.");
  // No KG gender: X-FACTR's ending rule ("-a" feminine, "-o" masculine), a country is feminine.
  const char* p31 = "[X] es un ejemplo de [ART;Y-Gender] [Y] .";
  EXPECT_EQ(fill_template(parse_template(p31), "es", entity("Madrid"), entity("ciudad")),
            "Madrid es un ejemplo de una ciudad.");
  EXPECT_EQ(fill_template(parse_template(p31), "es", entity("Madrid"), entity("municipio")),
            "Madrid es un ejemplo de un municipio.");
  EXPECT_EQ(fill_template(parse_template("[X] es [DEF;Y] [Y] ."), "es", entity("X"),
                          entity("Perú", Gender::unknown, "country")),
            "X es la Perú.");
}

// Greek: the article in the slot's case, number and gender (X-FACTR's table); the gender from the
// ending or the classes.
TEST(RelationTemplates, GreekArticlesFollowCaseGenderAndNumber) {
  const char* p19 = "[DEF;X] [X.Nom] γεννήθηκε [PREPDEF;Y] [Y.Acc] .";
  TemplateGaps gaps;
  EXPECT_EQ(
      probe_fill(p19, "el", entity("Νίκος Καζαντζάκης"), entity("Ηράκλειο", Gender::unknown, "city"), nullptr, &gaps),
      "ο Νίκος Καζαντζάκης γεννήθηκε στο Ηράκλειο .");
  EXPECT_EQ(gaps.uninflected, 1);  // [Y.Acc] without tables
  EXPECT_EQ(fill_template(parse_template(p19), "el", entity("Μαρία Κάλλας", Gender::feminine), entity("Αθήνα")),
            "η Μαρία Κάλλας γεννήθηκε στην Αθήνα.");
  const char* p279 = "[DEF;X] [X.Nom] είναι υποκατηγορία [DEF;Y] [Y.Gen] .";
  EXPECT_EQ(fill_template(parse_template(p279), "el", entity("Σκύλος"), entity("θηλαστικό")),
            "ο Σκύλος είναι υποκατηγορία του θηλαστικό.");
  const char* p31 = "[DEF;X] [X.Nom] είναι [INDEF;Y] [Y.Acc] .";
  EXPECT_EQ(fill_template(parse_template(p31), "el", entity("Βόλος"), entity("πόλη")), "ο Βόλος είναι μία πόλη.");
  EXPECT_EQ(
      fill_template(parse_template(p31), "el", entity("Beatles", Gender::unknown, "musical group"), entity("ροκ")),
      "οι Beatles είναι ένα ροκ.");
  EXPECT_EQ(fill_template(parse_template("[DEF.Gen;X] [X] [DEF;Y.Fem] [Y]"), "el", entity("Βόλος"), entity("Σκύλος")),
            "του Βόλος η Σκύλος");
  // No PREPDEF in the nominative: a gap, the word left out.
  gaps = {};
  EXPECT_EQ(probe_fill("[X] [PREPDEF;Y] [Y] .", "el", entity("Α"), entity("Βόλος"), nullptr, &gaps), "Α Βόλος .");
  EXPECT_EQ(gaps.missing_function_words, 1);
}

TEST(RelationTemplates, CasesFromTablesAndRules) {
  kglm::test::ScratchDir scratch;
  write_file(scratch.file("rus"),
             "Франция\tФранции\tN;GEN;SG\nФранция\tФранцию\tN;ACC;SG\nМосква\tМоскве\tN;ESS;SG\n"
             "Москва\tМосквой\tN;INS;SG\nидти\tшёл\tV;PST;SG;MASC\n");
  write_file(scratch.file("tur"),
             "ankara\tankarada\tN;LOC;SG\nev\tevimde\tN;LOC;SG;PSS1S\namerika\tamerikada\tN;LOC;SG\n");
  auto tables = InflectionTables::load_dir(scratch.file(""), {"ru", "tr", "el"});
  EXPECT_TRUE(tables.has_language("ru"));
  EXPECT_FALSE(tables.has_language("el"));
  EXPECT_EQ(tables.counts("ru").forms, 4u);
  EXPECT_EQ(tables.counts("ru").unused, 1u);
  EXPECT_EQ(tables.counts("tr").unused, 1u);  // a possessed form
  TemplateGaps gaps;
  // ru: the genitive from the table; a name with Latin letters is kept as it is (X-FACTR's rule).
  EXPECT_EQ(probe_fill("Официальный язык [X.Gen] — [Y.Nom] .", "ru", entity("Франция"), entity("французский"), &tables,
                       &gaps),
            "Официальный язык Франции — французский .");
  EXPECT_EQ(gaps.inflected, 1);
  gaps = {};
  EXPECT_EQ(probe_fill("[X.Nom] живёт в [Y.Ess] .", "ru", entity("Linux"), entity("Москва"), &tables, &gaps),
            "Linux живёт в Москве .");
  EXPECT_EQ(probe_fill("[X.Gen] [Y.Ins] .", "ru", entity("Paris"), entity("Лондон"), &tables, &gaps), "Paris Лондон .");
  EXPECT_EQ(gaps.inflected, 1);
  EXPECT_EQ(gaps.kept_plain, 1);   // Paris
  EXPECT_EQ(gaps.uninflected, 1);  // Лондон: not in the table
  // "INST" is UniMorph's "INS".
  EXPECT_EQ(probe_fill("[X] [Y.INST]", "ru", entity("а"), entity("Москва"), &tables), "а Москвой");
  // tr: lower-cased for the table, capitals put back; the last word of a longer name.
  EXPECT_EQ(probe_fill("[X] [Y.Loc] doğdu .", "tr", entity("A"), entity("Ankara"), &tables), "A Ankarada doğdu .");
  EXPECT_EQ(probe_fill("[X] [Y.Loc] bulunur .", "tr", entity("A"), entity("Güney Amerika"), &tables),
            "A Güney Amerikada bulunur .");
  // tr copula and mr locative: X-FACTR's rules, no table needed.
  EXPECT_EQ(probe_fill("[X] bir [Y;be] .", "tr", entity("Ankara"), entity("şehir"), nullptr), "Ankara bir şehir'dir .");
  EXPECT_EQ(probe_fill("[X] bir [Y;be] .", "tr", entity("A"), entity("okul")), "A bir okul'dur .");
  EXPECT_EQ(probe_fill("[X] bir [Y;be] .", "tr", entity("A"), entity("kitap")), "A bir kitap'tır .");
  EXPECT_EQ(probe_fill("[X] bir [Y;be] .", "tr", entity("A"), entity("göz")), "A bir göz'dür .");
  EXPECT_EQ(probe_fill("[X] [Y.LOC] खेळतो .", "mr", entity("A"), entity("मुंबई")), "A मुंबईत खेळतो .");
  EXPECT_EQ(probe_fill("[X] [Y.LOC] खेळतो .", "mr", entity("A"), entity("Mumbai")), "A Mumbai खेळतो .");
  // A wrong file is refused.
  write_file(scratch.file("junk"), "not a table\n");
  InflectionTables junk;
  EXPECT_THROW(junk.load_file("ru", scratch.file("junk")), Error);
}

TEST(RelationTemplates, RussianGenderFromTheEnding) {
  const char* p19 = "[X.Nom] [родился;X-Gender=MASC|родилась;X-Gender=FEM|родилось;X-Gender=NEUT] в [Y] .";
  EXPECT_EQ(fill_template(parse_template(p19), "ru", entity("Анна"), entity("Москва")), "Анна родилась в Москва.");
  EXPECT_EQ(fill_template(parse_template(p19), "ru", entity("Пётр"), entity("Москва")), "Пётр родился в Москва.");
  EXPECT_EQ(fill_template(parse_template(p19), "ru", entity("Солнце"), entity("Москва")), "Солнце родилось в Москва.");
  EXPECT_EQ(fill_template(parse_template(p19), "ru", entity("Солнце", Gender::unknown, "human"), entity("Москва")),
            "Солнце родился в Москва.");
  // [X.Masc.Nom] imposes its gender.
  EXPECT_EQ(fill_template(parse_template("[X.Masc.Nom] [был;X-Gender=MASC|была;X-Gender=FEM] [Y]"), "ru",
                          entity("Анна"), entity("Б")),
            "Анна был Б");
}

TEST(RelationTemplates, NormalisesWhitespace) {
  EXPECT_EQ(fill("  [X]   is\t[Y]  . "), "SUBJ is OBJ.");
  EXPECT_EQ(fill("[X] , [Y] ?"), "SUBJ, OBJ?");
  EXPECT_EQ(fill("[X.Nom] — [Y.Gen] . "), "SUBJ — OBJ.");
  EXPECT_EQ(fill("[X] is in [Y] .com"), "SUBJ is in OBJ .com");
  // Dropped function words at the start and end leave no space behind.
  auto pieces = resolve_template(parse_template("[ARTDEF;X] [X] [Y] [ARTDEF;Y]"), "fr", entity("A"), entity("B"));
  EXPECT_EQ(pieces, (std::vector<TemplatePiece>{{TemplatePiece::Kind::subject, "A"},
                                                {TemplatePiece::Kind::text, " "},
                                                {TemplatePiece::Kind::object, "B"}}));
  // The probe keeps the template's " ." and never elides before the masked object.
  EXPECT_EQ(probe_fill("[X] et [ARTDEF;Y] [Y] .", "fr", entity("A"), entity("île", Gender::unknown, "country")),
            "A et le île .");
}

TEST(RelationTemplates, KeepsTextAttachedToSlots) {
  auto pieces = resolve_template(parse_template("[X]는 [Y]에서 태어났다."), "ko", entity("A"), entity("B"));
  EXPECT_EQ(pieces, (std::vector<TemplatePiece>{{TemplatePiece::Kind::subject, "A"},
                                                {TemplatePiece::Kind::text, "는 "},
                                                {TemplatePiece::Kind::object, "B"},
                                                {TemplatePiece::Kind::text, "에서 태어났다."}}));
  EXPECT_EQ(fill("[X] [Y]चा एक प्रकार .", "mr"), "SUBJ OBJचा एक प्रकार.");
}

TEST(RelationTemplates, RejectsBadMarkup) {
  EXPECT_NE(parse_error("[X] was born in [Y .").find("unbalanced '['"), std::string::npos);
  EXPECT_NE(parse_error("[X] was [born [Y] .").find("unbalanced '['"), std::string::npos);
  EXPECT_NE(parse_error("[X] was born] in [Y] .").find("unbalanced ']'"), std::string::npos);
  EXPECT_NE(parse_error("[X] was born in Paris .").find("lacks [X] or [Y]"), std::string::npos);
  EXPECT_NE(parse_error("[Y] was born .").find("lacks [X] or [Y]"), std::string::npos);
  EXPECT_NE(parse_error("[X] [FOO] [Y]").find("unknown markup [FOO]"), std::string::npos);
  EXPECT_NE(parse_error("[X] [ART;Z] [Y]").find("unknown markup"), std::string::npos);
  EXPECT_NE(parse_error("[X] [] [Y]").find("empty []"), std::string::npos);
  EXPECT_NE(parse_error("[X] [a;X-Gender=MALE|b;X-Gender=FEM] [Y]").find("unknown gender"), std::string::npos);
  EXPECT_NE(parse_error("[X] [a;X-Gender=MASC|b;Y-Gender=FEM] [Y]").find("both X and Y"), std::string::npos);
  EXPECT_NE(parse_error("[X] [a|b] [Y]").find("names no X- or Y- condition"), std::string::npos);
  EXPECT_NE(parse_error("[X] [a;X-Case=GEN] [Y]").find("unknown feature"), std::string::npos);
  EXPECT_NE(parse_error("[X] [a;X-Number=DU] [Y]").find("unknown number"), std::string::npos);
  EXPECT_NE(parse_error("[X] [human: a ; animal: b] [Y]").find("unknown condition"), std::string::npos);
  EXPECT_NE(parse_error("[X;bee] [Y]").find("unknown markup"), std::string::npos);
  EXPECT_NE(parse_error("[X.Gen.Acc] [Y]").find("two cases"), std::string::npos);
}

// A bad line costs its relation only: it is skipped with its place and reason, the rest is kept.
TEST(RelationTemplates, BadLinesAreSkippedWithFileAndLine) {
  const std::string good = R"({"relation": "P19", "template": "[X] was born in [Y] ."})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"relation": "P20", "template": )", "invalid JSON"},
      {R"(["P20", "[X] died in [Y] ."])", "not a JSON object"},
      {R"({"template": "[X] died in [Y] ."})", "\"relation\""},
      {R"({"relation": "P20"})", "\"template\""},
      {R"({"relation": 20, "template": "[X] died in [Y] ."})", "\"relation\""},
      {R"({"relation": "Q20", "template": "[X] died in [Y] ."})", "not P<number>"},
      {R"({"relation": "P", "template": "[X] died in [Y] ."})", "not P<number>"},
      {R"({"relation": "P2x", "template": "[X] died in [Y] ."})", "not P<number>"},
      {R"({"relation": "P020", "template": "[X] died in [Y] ."})", "not P<number>"},
      {R"({"relation": "P20", "template": "[X] died in [Y ."})", "unbalanced '['"},
      {R"({"relation": "P20", "template": "[X] died in Paris ."})", "lacks [X] or [Y]"},
      {R"({"relation": "P20", "template": "[X] [FOO] [Y] ."})", "unknown markup [FOO]"},
  };
  kglm::test::ScratchDir scratch;
  for (const auto& [bad, reason] : cases) {
    SCOPED_TRACE(bad);
    const std::string path = scratch.file("fr.jsonl");
    // The comment line counts: numbers are the file's lines.
    write_file(path,
               "# templates\n" + good + "\n" + bad + "\n" + R"({"relation": "P36", "template": "[Y] : [X]"})" + "\n");
    RelationTemplates templates;
    templates.load_file("fr", path);
    EXPECT_EQ(templates.size(), 2u);
    EXPECT_NE(templates.find("fr", 19), nullptr);
    EXPECT_NE(templates.find("fr", 36), nullptr);
    ASSERT_EQ(templates.skipped().size(), 1u);
    EXPECT_EQ(templates.skipped()[0].origin, path + ":3");
    EXPECT_NE(templates.skipped()[0].reason.find(reason), std::string::npos) << templates.skipped()[0].reason;
  }
  // A file with no template at all is the wrong file.
  write_file(scratch.file("de.jsonl"), "{\"a\": 1}\nhello\n");
  RelationTemplates templates;
  EXPECT_THROW(templates.load_file("de", scratch.file("de.jsonl")), Error);
}

TEST(RelationTemplates, DuplicateRelationNamesBothLines) {
  kglm::test::ScratchDir scratch;
  const std::string path = scratch.file("en.jsonl");
  write_file(path,
             "{\"relation\": \"P19\", \"template\": \"[X] was born in [Y] .\"}\n"
             "{\"relation\": \"P20\", \"template\": \"[X] died in [Y] .\"}\n"
             "{\"relation\": \"P19\", \"template\": \"[X] is from [Y] .\"}\n");
  RelationTemplates templates;
  templates.load_file("en", path);
  ASSERT_EQ(templates.skipped().size(), 1u);
  EXPECT_EQ(templates.skipped()[0].reason, "relation P19 given again (first at " + path + ":1)");
  EXPECT_EQ(templates.find("en", 19)->source, "[X] was born in [Y] .");
}

TEST(RelationTemplates, LoadsFilesAndFindsByLanguageAndNumber) {
  kglm::test::ScratchDir scratch;
  write_file(scratch.file("en.jsonl"),
             "{\"relation\": \"P19\", \"template\": \"[X] was born in [Y] .\", \"type\": \"N-1\"}\n"
             "\n"
             "{\"relation\": \"P1376\", \"template\": \"[X] is the capital of [Y] .\", \"type\": 43831}\n");
  write_file(scratch.file("de.txt"), "not a template file\n");
  auto templates = RelationTemplates::load_dir(scratch.file(""), {"en", "de", "en"});
  EXPECT_EQ(templates.size(), 2u);
  EXPECT_TRUE(templates.has_language("en"));
  EXPECT_FALSE(templates.has_language("de"));
  EXPECT_EQ(templates.find("de", 19), nullptr);
  EXPECT_EQ(templates.find("en", 20), nullptr);
  const auto* p1376 = templates.find("en", 1376);
  ASSERT_NE(p1376, nullptr);
  EXPECT_EQ(p1376->relation, 1376u);
  EXPECT_EQ(p1376->source, "[X] is the capital of [Y] .");
  EXPECT_EQ(fill_template(*p1376, "en", entity("Paris"), entity("France")), "Paris is the capital of France.");
  // A second file for a language adds to it; a relation already loaded is skipped and said.
  write_file(scratch.file("more.jsonl"), "{\"relation\": \"P20\", \"template\": \"[X] died in [Y] .\"}\n");
  templates.load_file("en", scratch.file("more.jsonl"));
  EXPECT_EQ(templates.size(), 3u);
  templates.load_file("en", scratch.file("more.jsonl"));
  EXPECT_EQ(templates.size(), 3u);
  EXPECT_EQ(templates.skipped().size(), 1u);
  EXPECT_FALSE(templates.skipped_in("en", 19));

  EXPECT_THROW(RelationTemplates::load_dir(scratch.file("absent"), {"en"}), Error);
}

// --- the real X-FACTR templates: all 46 relations in 12 languages ---

const std::vector<std::string> kAllLangs = {"bn", "el", "en", "es", "fr", "he", "ko", "mr", "ru", "tr", "vi", "yo"};

std::vector<std::pair<std::string, std::string>> fixture_facts() {
  // Every fact file's (subject, object) labels, English: enough to realise each template.
  std::vector<std::pair<std::string, std::string>> facts;
  for (const auto& entry : std::filesystem::directory_iterator(kglm::test::fixture("xfactr/facts"))) {
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 0; n < 20 && std::getline(in, line); ++n) {
      auto field = [&](const std::string& key) {
        const size_t at = line.find("\"" + key + "\": \"");
        if (at == std::string::npos) return std::string();
        const size_t start = at + key.size() + 5;
        return line.substr(start, line.find('"', start) - start);
      };
      facts.emplace_back(field("sub_label"), field("obj_label"));
    }
  }
  return facts;
}

TEST(FixtureTemplates, EveryLineOfEveryLanguageIsRealised) {
  KGLM_REQUIRE_FIXTURES();
  const auto templates = RelationTemplates::load_dir(kglm::test::fixture("xfactr/templates-all"), kAllLangs);
  // Nothing skipped: every markup form of the benchmark is understood; the one repair is he P47's [Х].
  for (const auto& s : templates.skipped()) ADD_FAILURE() << s.origin << ": " << s.reason;
  EXPECT_EQ(templates.size(), kAllLangs.size() * 46);
  ASSERT_EQ(templates.repaired().size(), 1u);
  EXPECT_NE(templates.repaired()[0].find("he.jsonl"), std::string::npos);
  const auto facts = fixture_facts();
  ASSERT_GT(facts.size(), 200u);
  const TemplateEntity variants[] = {entity("", Gender::unknown),
                                     entity("", Gender::masculine, "human", true),
                                     entity("", Gender::feminine, "human", true),
                                     entity("", Gender::unknown, "sovereign state,country"),
                                     entity("", Gender::unknown, "city"),
                                     entity("", Gender::unknown, "musical group")};
  std::map<std::string, int> forms;  // markup kinds realised
  int64_t sentences = 0;
  for (const std::string& lang : kAllLangs) {
    for (uint64_t relation : {19,  20,  279, 37,   413, 166, 449, 69,   47,   138, 364,  54,  463, 101, 1923, 106,
                              527, 102, 530, 176,  27,  407, 30,  178,  1376, 131, 1412, 108, 136, 17,  39,   264,
                              276, 937, 140, 1303, 127, 103, 190, 1001, 31,   495, 159,  36,  740, 361}) {
      const auto* parsed = templates.find(lang, relation);
      ASSERT_NE(parsed, nullptr) << lang << " P" << relation;
      for (const auto& e : parsed->elements)
        if (e.kind != TemplateElement::Kind::text)
          ++forms[e.kind == TemplateElement::Kind::slot ? (e.copula              ? "copula"
                                                           : e.slot_case.empty() ? "slot"
                                                                                 : "case")
                  : e.kind == TemplateElement::Kind::choice
                      ? (e.alternatives[0].human ? "human" : "choice")
                      : "function word " + e.text + (e.slot_case.empty() ? "" : "." + e.slot_case)];
      for (size_t f = 0; f < facts.size(); f += 7) {
        for (const bool probe : {false, true}) {
          TemplateEntity subject = variants[f % 6], object = variants[(f / 6) % 6];
          subject.label = facts[f].first;
          object.label = facts[f].second;
          RealizeOptions options;
          options.probe = probe;
          const std::string s = fill_template(*parsed, lang, subject, object, options);
          SCOPED_TRACE(lang + " P" + std::to_string(relation) + ": " + s);
          EXPECT_NE(s.find(subject.label), std::string::npos);
          EXPECT_EQ(s.find_first_of("[]"), std::string::npos);
          EXPECT_EQ(s.find("  "), std::string::npos);
          EXPECT_NE(s.front(), ' ');
          EXPECT_NE(s.back(), ' ');
          ++sentences;
        }
      }
    }
  }
  EXPECT_GT(sentences, 10000);
  for (const char* kind : {"slot", "case", "copula", "choice", "human", "function word ARTDEF", "function word ARTIND",
                           "function word PREPDEF", "function word PREPDEF-à", "function word PREPLOC",
                           "function word ART", "function word DEF", "function word DEF.GEN", "function word INDEF"})
    EXPECT_GT(forms[kind], 0) << kind;
}

class FixtureTemplates7 : public ::testing::Test {
 protected:
  void SetUp() override {
    KGLM_REQUIRE_FIXTURES();
    templates_ = RelationTemplates::load_dir(kglm::test::fixture("xfactr/templates"), kFixtureLangs);
  }
  std::string fill(std::string_view lang, uint64_t relation, const TemplateEntity& subject,
                   const TemplateEntity& object) {
    const auto* parsed = templates_.find(lang, relation);
    if (parsed == nullptr) return "(no template)";
    return fill_template(*parsed, lang, subject, object);
  }
  RelationTemplates templates_;
};

TEST_F(FixtureTemplates7, EveryTemplateFillsIntoACleanSentence) {
  EXPECT_EQ(templates_.size(), kFixtureLangs.size() * kFixtureRelations.size());
  const Gender genders[] = {Gender::unknown, Gender::masculine, Gender::feminine, Gender::neuter};
  for (const std::string& lang : kFixtureLangs)
    for (uint64_t relation : kFixtureRelations) {
      SCOPED_TRACE(lang + " P" + std::to_string(relation));
      const auto* parsed = templates_.find(lang, relation);
      ASSERT_NE(parsed, nullptr);
      for (Gender subject_gender : genders)
        for (Gender object_gender : genders) {
          const std::string s =
              fill_template(*parsed, lang, entity("SUBJ", subject_gender), entity("OBJ", object_gender));
          SCOPED_TRACE(s);
          EXPECT_NE(s.find("SUBJ"), std::string::npos);
          EXPECT_NE(s.find("OBJ"), std::string::npos);
          EXPECT_EQ(s.find_first_of("[]"), std::string::npos);
          EXPECT_EQ(s.find("  "), std::string::npos);
          EXPECT_EQ(s.find(" ."), std::string::npos);
          EXPECT_EQ(s.back(), '.');
        }
    }
}

TEST_F(FixtureTemplates7, Examples) {
  EXPECT_EQ(fill("en", 19, entity("Victor Hugo"), entity("Besançon")), "Victor Hugo was born in Besançon.");
  EXPECT_EQ(fill("en", 37, entity("France"), entity("French")), "The official language of France is French.");
  EXPECT_EQ(fill("fr", 19, entity("Victor Hugo", Gender::masculine), entity("Besançon", Gender::unknown, "commune")),
            "Victor Hugo est né en Besançon.");  // X-FACTR: "à" for a city only
  EXPECT_EQ(fill("fr", 19, entity("Marie Curie", Gender::feminine), entity("Varsovie", Gender::unknown, "city")),
            "Marie Curie est née à Varsovie.");
  EXPECT_EQ(fill("fr", 1376, entity("Paris", Gender::unknown, "city"), entity("France", Gender::unknown, "country")),
            "Paris est la capitale de la France.");
  EXPECT_EQ(fill("fr", 159, entity("Renault", Gender::unknown, "business"),
                 entity("Boulogne-Billancourt", Gender::unknown, "city")),
            "Le siège social de Renault est à Boulogne-Billancourt.");
  EXPECT_EQ(fill("ru", 19, entity("SUBJ", Gender::neuter), entity("OBJ")), "SUBJ родилось в OBJ.");
  EXPECT_EQ(fill("es", 463, entity("SUBJ", Gender::feminine), entity("OBJ")), "SUBJ es una miembra de OBJ.");
  EXPECT_EQ(fill("tr", 37, entity("SUBJ"), entity("OBJ")), "SUBJ resmi dili OBJ'dir.");
  EXPECT_EQ(fill("ko", 19, entity("SUBJ"), entity("OBJ")), "SUBJ는 OBJ에서 태어났다.");
  EXPECT_EQ(fill("vi", 103, entity("SUBJ"), entity("OBJ")), "OBJ là ngôn ngữ bản địa của SUBJ.");
}

}  // namespace
