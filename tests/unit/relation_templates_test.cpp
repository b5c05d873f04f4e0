#include "gen/relation_templates.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "test_paths.hpp"

namespace {

using kglm::Error;
using kglm::gen::fill_template;
using kglm::gen::Gender;
using kglm::gen::parse_template;
using kglm::gen::RelationTemplates;
using kglm::gen::resolve_template;
using kglm::gen::TemplateElement;
using kglm::gen::TemplatePiece;

const std::vector<std::string> kFixtureLangs = {"en", "es", "fr", "ko", "ru", "tr", "vi"};
// The 23 relations of X-FACTR, each in every fixture file.
const std::vector<uint64_t> kFixtureRelations = {19,  20,   279, 37,  47,  138, 463, 106, 530, 27,  30, 1376,
                                                 131, 1412, 17,  276, 103, 31,  495, 159, 36,  740, 361};

std::string fill(std::string_view source, std::string_view lang = "xx", Gender subject = Gender::unknown,
                 Gender object = Gender::unknown) {
  return fill_template(parse_template(source), lang, "SUBJ", "OBJ", subject, object);
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
  EXPECT_EQ(kinds, (std::vector<TemplateElement::Kind>{
                       TemplateElement::Kind::subject, TemplateElement::Kind::text, TemplateElement::Kind::choice,
                       TemplateElement::Kind::text, TemplateElement::Kind::function_word, TemplateElement::Kind::text,
                       TemplateElement::Kind::object, TemplateElement::Kind::text}));
  const auto& choice = parsed.elements[2];
  EXPECT_EQ(choice.entity, TemplatePiece::Kind::subject);
  ASSERT_EQ(choice.alternatives.size(), 2u);
  EXPECT_EQ(choice.alternatives[0], std::make_pair(Gender::masculine, std::string("né")));
  EXPECT_EQ(choice.alternatives[1], std::make_pair(Gender::feminine, std::string("née")));
  EXPECT_EQ(parsed.elements[4].text, "PREPLOC");
  EXPECT_EQ(parsed.elements[4].entity, TemplatePiece::Kind::object);
}

TEST(RelationTemplates, ResolvesIntoPiecesForTheCaller) {
  auto pieces = resolve_template(parse_template("[X] was born in [Y] ."), "en");
  EXPECT_EQ(pieces, (std::vector<TemplatePiece>{{TemplatePiece::Kind::subject, ""},
                                                {TemplatePiece::Kind::text, " was born in "},
                                                {TemplatePiece::Kind::object, ""},
                                                {TemplatePiece::Kind::text, "."}}));
  // Object first, as in vi P103.
  pieces = resolve_template(parse_template("[Y] là ngôn ngữ bản địa của [X] ."), "vi");
  ASSERT_EQ(pieces.size(), 4u);
  EXPECT_EQ(pieces[0].kind, TemplatePiece::Kind::object);
  EXPECT_EQ(pieces[2].kind, TemplatePiece::Kind::subject);
}

TEST(RelationTemplates, GenderChoicesFollowTheirEntity) {
  const char* x_choice = "[X] [a;X-Gender=MASC|b;X-Gender=FEM|c;X-Gender=NEUT] [Y] .";
  EXPECT_EQ(fill(x_choice, "xx", Gender::masculine), "SUBJ a OBJ.");
  EXPECT_EQ(fill(x_choice, "xx", Gender::feminine), "SUBJ b OBJ.");
  EXPECT_EQ(fill(x_choice, "xx", Gender::neuter), "SUBJ c OBJ.");
  // An unknown gender: both forms, committing to neither (the subject's gender decides here, not
  // the object's); a form with no gender feature is the template's own neutral form.
  EXPECT_EQ(fill(x_choice, "xx", Gender::unknown, Gender::feminine), "SUBJ a/b OBJ.");
  EXPECT_EQ(fill("[X] [a;X-Gender=MASC|ab;X-Gender=FEM] [Y]", "xx"), "SUBJ a(b) OBJ");
  EXPECT_EQ(fill("[X] [a;X-Gender=MASC|n|b;X-Gender=FEM] [Y]", "xx"), "SUBJ n OBJ");
  // No neuter form: the first (masculine) one.
  EXPECT_EQ(fill("[X] [a;X-Gender=MASC|b;X-Gender=FEM] [Y]", "xx", Gender::neuter), "SUBJ a OBJ");
  const char* y_choice = "[X] [a;Y-Gender=MASC|b;Y-Gender=FEM] [Y]";
  EXPECT_EQ(fill(y_choice, "xx", Gender::feminine, Gender::masculine), "SUBJ a OBJ");
  EXPECT_EQ(fill(y_choice, "xx", Gender::masculine, Gender::feminine), "SUBJ b OBJ");
  // Number features are accepted; entities count as singular.
  EXPECT_EQ(fill("[X] [es;X-Number=SG|son;X-Number=PL] [Y]"), "SUBJ es OBJ");
}

TEST(RelationTemplates, ToleratesStrayEmptyAlternatives) {
  const char* fr_p30 = "[X] est [situé;X-Gender=MASC|;située;X-Gender=FEM] en [Y] .";
  EXPECT_EQ(fill(fr_p30, "fr", Gender::feminine), "SUBJ est située en OBJ.");
  EXPECT_EQ(fill(fr_p30, "fr", Gender::masculine), "SUBJ est situé en OBJ.");
  EXPECT_EQ(fill("[X] [a;X-Gender=MASC||b;X-Gender=FEM|] [Y]", "xx", Gender::feminine), "SUBJ b OBJ");
  // An alternative with features and no form is an empty word for that gender.
  EXPECT_EQ(fill("[X] [a;X-Gender=MASC|;X-Gender=FEM] [Y] .", "xx", Gender::feminine), "SUBJ OBJ.");
}

TEST(RelationTemplates, FunctionWordsComeFromTheTableOrAreDropped) {
  const char* p19 = "[X] est [né;X-Gender=MASC|née;X-Gender=FEM] [PREPLOC;Y] [Y] .";
  EXPECT_EQ(fill(p19, "fr"), "SUBJ est né(e) à OBJ.");
  EXPECT_EQ(fill(p19, "xx"), "SUBJ est né(e) OBJ.");
  EXPECT_EQ(fill(p19, "fr", Gender::masculine), "SUBJ est né à OBJ.");
  EXPECT_EQ(fill("[ARTDEF;X] [X] fait partie [PREPDEF;Y] [Y] .", "fr"), "SUBJ fait partie de OBJ.");
  EXPECT_EQ(fill("[X] est [ARTIND;Y] [Y] .", "fr", Gender::unknown, Gender::feminine), "SUBJ est une OBJ.");
  EXPECT_EQ(fill("[X] es [ART;X-Gender] [Y] .", "es", Gender::feminine), "SUBJ es una OBJ.");
  EXPECT_EQ(fill("[X] es [ART;X-Gender] [Y] .", "es", Gender::neuter), "SUBJ es un OBJ.");
  EXPECT_EQ(fill("[X] es [ART;Y-Gender] [Y] .", "es", Gender::feminine, Gender::masculine), "SUBJ es un OBJ.");
  EXPECT_EQ(fill("[X] [UNKNOWNCLASS;Y] [Y] .", "fr"), "SUBJ OBJ.");
  // Not repeated after a word of its class that the template already has.
  EXPECT_EQ(fill("[X] est un [ARTIND;Y] [Y] .", "fr", Gender::unknown, Gender::feminine), "SUBJ est un OBJ.");
  EXPECT_EQ(fill("[X] est en [PREPLOC;Y] [Y] .", "fr"), "SUBJ est en OBJ.");
  EXPECT_EQ(fill("[X] est [ARTIND;Y] [Y] un .", "fr"), "SUBJ est un(e) OBJ un.");
  // The demo's "anglais est un langue": without the object's gender, the neutral article.
  EXPECT_EQ(fill("[X] est [ARTIND;Y] [Y] .", "fr", Gender::unknown, Gender::unknown), "SUBJ est un(e) OBJ.");
  EXPECT_EQ(fill("[X] est [ARTIND;Y] [Y] .", "fr", Gender::unknown, Gender::masculine), "SUBJ est un OBJ.");
}

TEST(RelationTemplates, NormalisesWhitespace) {
  EXPECT_EQ(fill("  [X]   is\t[Y]  . "), "SUBJ is OBJ.");
  EXPECT_EQ(fill("[X] , [Y] ?"), "SUBJ, OBJ?");
  EXPECT_EQ(fill("[X.Nom] — [Y.Gen] . "), "SUBJ — OBJ.");
  // A '.' inside a word keeps its space.
  EXPECT_EQ(fill("[X] is in [Y] .com"), "SUBJ is in OBJ .com");
  // Dropped function words at the start and end leave no space behind.
  auto pieces =
      resolve_template(parse_template("[ARTDEF;X] [X] [Y] [ARTDEF;Y]"), "fr", Gender::unknown, Gender::unknown);
  EXPECT_EQ(pieces, (std::vector<TemplatePiece>{{TemplatePiece::Kind::subject, ""},
                                                {TemplatePiece::Kind::text, " "},
                                                {TemplatePiece::Kind::object, ""}}));
}

TEST(RelationTemplates, KeepsTextAttachedToSlots) {
  auto pieces = resolve_template(parse_template("[X]는 [Y]에서 태어났다."), "ko");
  EXPECT_EQ(pieces, (std::vector<TemplatePiece>{{TemplatePiece::Kind::subject, ""},
                                                {TemplatePiece::Kind::text, "는 "},
                                                {TemplatePiece::Kind::object, ""},
                                                {TemplatePiece::Kind::text, "에서 태어났다."}}));
  EXPECT_EQ(fill("[X.Gen] resmi dili [Y;be] .", "tr"), "SUBJ resmi dili OBJ.");
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
  EXPECT_NE(parse_error("[X] [a|b] [Y]").find("names no X-Gender"), std::string::npos);
  EXPECT_NE(parse_error("[X] [a;b;X-Gender=MASC] [Y]").find("two forms"), std::string::npos);
  EXPECT_NE(parse_error("[X] [a;X-Case=GEN] [Y]").find("unknown feature"), std::string::npos);
}

TEST(RelationTemplates, BadLinesNameFileAndLine) {
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
  };
  kglm::test::ScratchDir scratch;
  for (const auto& [bad, reason] : cases) {
    SCOPED_TRACE(bad);
    std::string path = scratch.file("fr.jsonl");
    // The comment line counts: numbers are the file's lines.
    write_file(path, "# templates\n" + good + "\n" + bad + "\n");
    RelationTemplates templates;
    try {
      templates.load_file("fr", path);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      std::string message = e.what();
      EXPECT_NE(message.find(path + ":3: "), std::string::npos) << message;
      EXPECT_NE(message.find(reason), std::string::npos) << message;
    }
    // Nothing of a bad file is kept.
    EXPECT_EQ(templates.size(), 0u);
    EXPECT_FALSE(templates.has_language("fr"));
  }
}

TEST(RelationTemplates, DuplicateRelationNamesBothLines) {
  kglm::test::ScratchDir scratch;
  std::string path = scratch.file("en.jsonl");
  write_file(path,
             "{\"relation\": \"P19\", \"template\": \"[X] was born in [Y] .\"}\n"
             "{\"relation\": \"P20\", \"template\": \"[X] died in [Y] .\"}\n"
             "{\"relation\": \"P19\", \"template\": \"[X] is from [Y] .\"}\n");
  RelationTemplates templates;
  try {
    templates.load_file("en", path);
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find(path + ":3: relation P19 given again (first at " + path + ":1)"), std::string::npos)
        << message;
  }
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
  EXPECT_EQ(fill_template(*p1376, "en", "Paris", "France"), "Paris is the capital of France.");
  // A second file for a language adds to it; a relation already loaded is an error.
  write_file(scratch.file("more.jsonl"), "{\"relation\": \"P20\", \"template\": \"[X] died in [Y] .\"}\n");
  templates.load_file("en", scratch.file("more.jsonl"));
  EXPECT_EQ(templates.size(), 3u);
  EXPECT_THROW(templates.load_file("en", scratch.file("more.jsonl")), Error);
  EXPECT_EQ(templates.size(), 3u);

  EXPECT_THROW(RelationTemplates::load_dir(scratch.file("absent"), {"en"}), Error);
}

// --- the real X-FACTR templates ---

class FixtureTemplates : public ::testing::Test {
 protected:
  void SetUp() override {
    KGLM_REQUIRE_FIXTURES();
    templates_ = RelationTemplates::load_dir(kglm::test::fixture("xfactr/templates"), kFixtureLangs);
  }
  std::string fill(std::string_view lang, uint64_t relation, std::string_view subject, std::string_view object,
                   Gender subject_gender = Gender::unknown, Gender object_gender = Gender::unknown) {
    const auto* parsed = templates_.find(lang, relation);
    if (parsed == nullptr) return "(no template)";
    return fill_template(*parsed, lang, subject, object, subject_gender, object_gender);
  }
  RelationTemplates templates_;
};

TEST_F(FixtureTemplates, EveryTemplateFillsIntoACleanSentence) {
  EXPECT_EQ(templates_.size(), kFixtureLangs.size() * kFixtureRelations.size());
  const Gender genders[] = {Gender::unknown, Gender::masculine, Gender::feminine, Gender::neuter};
  for (const std::string& lang : kFixtureLangs) {
    for (uint64_t relation : kFixtureRelations) {
      SCOPED_TRACE(lang + " P" + std::to_string(relation));
      const auto* parsed = templates_.find(lang, relation);
      ASSERT_NE(parsed, nullptr);
      for (Gender subject_gender : genders) {
        for (Gender object_gender : genders) {
          std::string s = fill_template(*parsed, lang, "SUBJ", "OBJ", subject_gender, object_gender);
          SCOPED_TRACE(s);
          EXPECT_NE(s.find("SUBJ"), std::string::npos);
          EXPECT_NE(s.find("OBJ"), std::string::npos);
          EXPECT_EQ(s.find_first_of("[]"), std::string::npos);
          EXPECT_EQ(s.find("  "), std::string::npos);
          EXPECT_EQ(s.find(" ."), std::string::npos);
          EXPECT_NE(s.front(), ' ');
          EXPECT_NE(s.back(), ' ');
          EXPECT_EQ(s.back(), '.');
        }
      }
    }
  }
}

TEST_F(FixtureTemplates, English) {
  EXPECT_EQ(fill("en", 19, "Victor Hugo", "Besançon"), "Victor Hugo was born in Besançon.");
  EXPECT_EQ(fill("en", 37, "France", "French"), "The official language of France is French.");
}

TEST_F(FixtureTemplates, FrenchGenderAndFunctionWords) {
  EXPECT_EQ(fill("fr", 19, "Victor Hugo", "Besançon", Gender::masculine), "Victor Hugo est né à Besançon.");
  EXPECT_EQ(fill("fr", 19, "Marie Curie", "Varsovie", Gender::feminine), "Marie Curie est née à Varsovie.");
  EXPECT_EQ(fill("fr", 19, "Paris Hilton", "New York"), "Paris Hilton est né(e) à New York.");
  // P30 has the stray empty alternative "|;située".
  EXPECT_EQ(fill("fr", 30, "Lyon", "France", Gender::feminine), "Lyon est située en France.");
  EXPECT_EQ(fill("fr", 463, "France", "OTAN"), "France est membre de OTAN.");
  EXPECT_EQ(fill("fr", 106, "Marie Curie", "physicienne", Gender::feminine, Gender::feminine),
            "Marie Curie est une physicienne de profession.");
  EXPECT_EQ(fill("fr", 1376, "Paris", "France"), "Paris est la capitale de France.");
  // The two templates that write the function word and its slot too.
  EXPECT_EQ(fill("fr", 31, "Python", "langage"), "Python est un langage.");
  EXPECT_EQ(fill("fr", 159, "Renault", "Boulogne-Billancourt"),
            "Le siège social de Renault est en Boulogne-Billancourt.");
}

TEST_F(FixtureTemplates, RussianNeuter) {
  EXPECT_EQ(fill("ru", 19, "SUBJ", "OBJ", Gender::neuter), "SUBJ родилось в OBJ.");
  EXPECT_EQ(fill("ru", 19, "SUBJ", "OBJ", Gender::feminine), "SUBJ родилась в OBJ.");
  EXPECT_EQ(fill("ru", 19, "SUBJ", "OBJ", Gender::masculine), "SUBJ родился в OBJ.");
  EXPECT_EQ(fill("ru", 19, "SUBJ", "OBJ"), "SUBJ родился/родилась в OBJ.");
  EXPECT_EQ(fill("ru", 279, "SUBJ", "OBJ"), "SUBJ — подкласс OBJ.");
}

TEST_F(FixtureTemplates, SpanishArticles) {
  EXPECT_EQ(fill("es", 463, "SUBJ", "OBJ", Gender::masculine), "SUBJ es un miembro de OBJ.");
  EXPECT_EQ(fill("es", 463, "SUBJ", "OBJ", Gender::feminine), "SUBJ es una miembra de OBJ.");
  EXPECT_EQ(fill("es", 31, "SUBJ", "OBJ", Gender::masculine, Gender::feminine), "SUBJ es un ejemplo de una OBJ.");
  // "[Y]  ." in the file.
  EXPECT_EQ(fill("es", 30, "SUBJ", "OBJ", Gender::feminine), "SUBJ està localizada en OBJ.");
}

TEST_F(FixtureTemplates, TurkishAndKoreanSuffixes) {
  EXPECT_EQ(fill("tr", 37, "SUBJ", "OBJ"), "SUBJ resmi dili OBJ.");
  EXPECT_EQ(fill("tr", 19, "SUBJ", "OBJ"), "SUBJ OBJ doğdu.");
  EXPECT_EQ(fill("ko", 19, "SUBJ", "OBJ"), "SUBJ는 OBJ에서 태어났다.");
  EXPECT_EQ(fill("ko", 37, "SUBJ", "OBJ"), "SUBJ의 공식 언어는 OBJ이다.");
}

TEST_F(FixtureTemplates, VietnameseObjectFirst) {
  EXPECT_EQ(fill("vi", 103, "SUBJ", "OBJ"), "OBJ là ngôn ngữ bản địa của SUBJ.");
}

TEST_F(FixtureTemplates, MissingLanguageFileHasNoTemplates) {
  auto templates = RelationTemplates::load_dir(kglm::test::fixture("xfactr/templates"), {"en", "de"});
  EXPECT_EQ(templates.size(), kFixtureRelations.size());
  EXPECT_NE(templates.find("en", 19), nullptr);
  EXPECT_EQ(templates.find("de", 19), nullptr);
  EXPECT_EQ(templates.find("en", 999999), nullptr);
}

}  // namespace
