// The wikitext cleaner, rule by rule, with every link span checked against its anchor.
#include <gtest/gtest.h>

#include "text/wikitext.hpp"

using namespace kglm::text;

namespace {

Document clean(std::string_view wikitext, unsigned max_depth = 100, CleanReport* report = nullptr) {
  Document doc;
  CleanOptions o;
  o.max_depth = max_depth;
  clean_wikitext(wikitext, o, doc, report);
  check_document(doc);
  return doc;
}

std::string text_of(std::string_view wikitext) { return clean(wikitext).text; }

std::string span(const Document& d, const Link& l) { return d.text.substr(l.begin, l.end - l.begin); }

}  // namespace

TEST(Wikitext, TemplatesNestedAndParameters) {
  EXPECT_EQ(text_of("a {{x|{{y|z}}|w={{{1|def}}}}} b"), "a b");
  EXPECT_EQ(text_of("{{Infobox\n| name = X\n| born = {{birth date|1900|1|1}}\n}}\nX was born."), "X was born.");
  EXPECT_EQ(text_of("a {{{{x}}}} b {{#if: y | yes | no }} c"), "a b c");
  EXPECT_EQ(text_of("{{foo\n|}}\nText"), "Text");  // "|}}" closes the template, not a table
}

TEST(Wikitext, TablesNested) {
  EXPECT_EQ(text_of("x\n{| class=\"wikitable\"\n|a {{t}}\n|-\n|\n{|\n|b\n|}\n|}\ny"), "x\ny");
  EXPECT_EQ(text_of("before\n:{|\n|indented table\n|}\nafter"), "before\nafter");
}

TEST(Wikitext, TagsAndComments) {
  EXPECT_EQ(text_of("A<ref>cite {{x}}</ref> b<ref name=a/> c<ref name=\"b\">x</ref>."), "A b c.");
  EXPECT_EQ(text_of("a<!-- hidden [[x]] -->b"), "ab");
  EXPECT_EQ(text_of("a <!-- never closed\n\nmore"), "a");
  EXPECT_EQ(text_of("x <math>E = mc^2</math> y <gallery>\nA.jpg|a\n</gallery> z <timeline>t</timeline>"), "x y z");
  EXPECT_EQ(text_of("<span style=\"x\">kept</span> <small>small</small> a<br/>b"), "kept small a b");
  EXPECT_EQ(text_of("if a < b and c > d"), "if a < b and c > d");
  EXPECT_EQ(text_of("__NOTOC__Text __TOC__ more"), "Text more");
  EXPECT_EQ(text_of("A<REF>upper</REF>B"), "AB");
}

TEST(Wikitext, MediaAndCategoryLinksDropped) {
  EXPECT_EQ(text_of("[[File:X.jpg|thumb|A [[dog]] here]]Text [[Category:Foo]] [[de:Hund]] [[Image:Y.png]]"), "Text");
  Document d = clean("See [[:Category:Foo|cats]] and [[wikt:dog|dog]] and [[Wikipedia:About]].");
  EXPECT_EQ(d.text, "See cats and dog and Wikipedia:About.");
  EXPECT_TRUE(d.links.empty());
}

TEST(Wikitext, QuotesRemoved) {
  EXPECT_EQ(text_of("'''Bold''' and ''it'' and '''''both''''' l'avion"), "Bold and it and both l'avion");
  EXPECT_EQ(text_of("''''x''''"), "'x'");
}

TEST(Wikitext, HeadingsBecomeSections) {
  Document d = clean("Lead [[a]].\n\n== History ==\nOld.\n=== Early ''days'' ===\nEarly.\n==Empty==\n== Now ==\nNew.");
  EXPECT_EQ(d.text, "Lead a.\nOld.\nEarly.\nNew.");
  EXPECT_EQ(d.root_end, 7u);
  ASSERT_EQ(d.sections.size(), 4u);
  EXPECT_EQ(d.sections[0].title, "History");
  EXPECT_EQ(d.sections[0].level, 2);
  EXPECT_EQ(d.text.substr(d.sections[0].begin, d.sections[0].end - d.sections[0].begin), "Old.");
  EXPECT_EQ(d.sections[1].title, "Early days");
  EXPECT_EQ(d.sections[1].level, 3);
  EXPECT_EQ(d.text.substr(d.sections[1].begin, d.sections[1].end - d.sections[1].begin), "Early.");
  EXPECT_EQ(d.sections[2].begin, d.sections[2].end);  // empty section
  EXPECT_EQ(d.text.substr(d.sections[3].begin, d.sections[3].end - d.sections[3].begin), "New.");
}

TEST(Wikitext, ListsAndParagraphs) {
  EXPECT_EQ(text_of("Intro line one\nline two.\n* one\n** two\n# three\n: indented\n; term\n----\nEnd."),
            "Intro line one line two.\none\ntwo\nthree\nindented\nterm\nEnd.");
}

TEST(Wikitext, EntitiesDecoded) {
  EXPECT_EQ(text_of("a&#10;&#10;b&#9;c"), "a b c");
  EXPECT_EQ(text_of("A&nbsp;B &amp; C &#8211; D &#x263A; &eacute; &bogus; &#xZZ;"), "A B & C – D ☺ é &bogus; &#xZZ;");
}

TEST(Wikitext, ExternalLinks) {
  EXPECT_EQ(text_of("[http://x.org Label ''here''] and [https://y.org] and [not a link] http://bare.org"),
            "Label here and and [not a link] http://bare.org");
  EXPECT_EQ(text_of("[http://x.org \"Talk\" (at [[University of California, Berkeley|UC Berkeley]], 1962)] next"),
            "\"Talk\" (at UC Berkeley, 1962) next");
}

TEST(Wikitext, InternalLinks) {
  Document d = clean("The [[dog]]s bark at [[cat|the ''cat'']] near [[foo_bar#Sec|x]] in [[Paris (France)|]].");
  EXPECT_EQ(d.text, "The dogs bark at the cat near x in Paris.");
  ASSERT_EQ(d.links.size(), 4u);
  EXPECT_EQ(span(d, d.links[0]), "dogs");
  EXPECT_EQ(d.links[0].target, "Dog");
  EXPECT_EQ(span(d, d.links[1]), "the cat");
  EXPECT_EQ(d.links[1].target, "Cat");
  EXPECT_EQ(span(d, d.links[2]), "x");
  EXPECT_EQ(d.links[2].target, "Foo bar");
  EXPECT_EQ(span(d, d.links[3]), "Paris");
  EXPECT_EQ(d.links[3].target, "Paris (France)");
}

TEST(Wikitext, TargetsNormalised) {
  Document d = clean("[[ łódź  city ]] [[ωmega]] [[AT&amp;T]] [[Caf%C3%A9]] [[#Local section]] [[:Foo]]");
  EXPECT_EQ(d.text, "łódź city ωmega AT&T Caf%C3%A9 #Local section Foo");
  ASSERT_EQ(d.links.size(), 5u);
  EXPECT_EQ(d.links[0].target, "Łódź city");
  EXPECT_EQ(d.links[1].target, "Ωmega");
  EXPECT_EQ(d.links[2].target, "AT&T");
  EXPECT_EQ(d.links[3].target, "Café");
  EXPECT_EQ(d.links[4].target, "Foo");
  EXPECT_EQ(normalize_title("foo__bar_ #x"), "Foo bar");
}

TEST(Wikitext, UnbalancedMarkupNeverLeaks) {
  CleanReport report;
  Document d = clean("a {{b c\nnext line\nd }} e }} f [[g h\ni ]] j\n{|\n| cell", 100, &report);
  EXPECT_EQ(d.text, "a e f g h i j");  // "{{b" closes at the first "}}"; "{|" never does
  EXPECT_EQ(report.unterminated, 1u);
  EXPECT_EQ(report.stray_closers, 1u);
  EXPECT_EQ(text_of("x {{open\n\ny"), "x\ny");
  EXPECT_EQ(text_of("[[a|b [[c]] d]]"), "a|b c d");
  EXPECT_EQ(text_of("x <ref>never closed\ny"), "x");
  EXPECT_EQ(text_of("x <ref>never closed\n\ny"), "x\ny");
}

TEST(Wikitext, DeepNestingFailsThePage) {
  std::string deep;
  for (int i = 0; i < 400; ++i) deep += "{{x|";
  deep += std::string(800, '}');
  EXPECT_THROW(clean(deep), WikitextError);
  EXPECT_EQ(clean(deep, 500).text, "");
  std::string links;
  for (int i = 0; i < 200; ++i) links += "[[File:a.jpg|";
  EXPECT_THROW(clean(links), WikitextError);
}

TEST(Wikitext, RedirectTarget) {
  EXPECT_EQ(redirect_target("#REDIRECT [[foo_bar#Section]]"), "Foo bar");
  EXPECT_EQ(redirect_target("  #redirect:[[Baz|x]] {{R from move}}"), "Baz");
  EXPECT_EQ(redirect_target("Text #REDIRECT [[x]]"), "");
}

TEST(Wikitext, LanguagePrefixes) {
  EXPECT_TRUE(is_language_prefix("de"));
  EXPECT_TRUE(is_language_prefix("zh-min-nan"));
  EXPECT_TRUE(is_language_prefix("simple"));
  EXPECT_FALSE(is_language_prefix("paris"));
  EXPECT_FALSE(is_language_prefix("d-"));
}

TEST(Wikitext, SiteinfoNamespaces) {
  LinkNamespaces ns = LinkNamespaces::english();
  ns.add(6, "Datei");
  ns.add(14, "Kategorie");
  ns.add(4, "Wikipedia_Diskussion");
  Document doc;
  CleanOptions o;
  o.namespaces = &ns;
  clean_wikitext("[[Datei:X.jpg|mini]]Text [[Kategorie:Y]] [[Wikipedia Diskussion:Z|talk]]", o, doc);
  EXPECT_EQ(doc.text, "Text talk");
  EXPECT_TRUE(doc.links.empty());
}
