// The XML dump reader: encodings, namespaces, redirects, history dumps, malformed input, and
// the real enwiki excerpt counted independently of libxml2.
#include <gtest/gtest.h>

#include <fstream>

#include "core/error.hpp"
#include "core/input_stream.hpp"
#include "test_paths.hpp"
#include "text/mediawiki_dump.hpp"

using namespace kglm;
using namespace kglm::text;

namespace {

const char* kDump = R"(<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" xml:lang="de">
  <siteinfo><namespaces><namespace key="6" case="first-letter">Datei</namespace>
  <namespace key="0" case="first-letter" /></namespaces></siteinfo>
  <page><title>AT&amp;T Größe</title><ns>0</ns><id>7</id>
    <revision><id>100</id><contributor><username>x</username><id>55</id></contributor>
      <text xml:space="preserve">old text</text></revision>
    <revision><id>101</id><text xml:space="preserve">'''AT&amp;T''' &lt;ref&gt;x&lt;/ref&gt; Größe</text></revision>
  </page>
  <page><title>Old name</title><ns>0</ns><id>8</id><redirect title="AT&amp;T Größe" />
    <revision><id>102</id><text>#REDIRECT [[AT&amp;T Größe]]</text></revision></page>
  <page><title>Talk:X</title><ns>1</ns><id>9</id><revision><id>103</id><text>talk</text></revision></page>
</mediawiki>
)";

std::vector<WikiPage> read_all(const std::string& path, std::string* error = nullptr) {
  InputStream in(path);
  MediaWikiDumpReader reader(in);
  std::vector<WikiPage> pages;
  WikiPage page;
  try {
    while (reader.next(page)) pages.push_back(page);
  } catch (const Error& e) {
    if (!error) throw;
    *error = e.what();
  }
  return pages;
}

void write(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// UTF-8 -> UTF-16LE with a BOM (the test text is in the BMP).
std::string to_utf16le(const std::string& utf8) {
  std::string out = "\xFF\xFE";
  for (size_t i = 0; i < utf8.size();) {
    unsigned char c = static_cast<unsigned char>(utf8[i]);
    uint32_t cp;
    if (c < 0x80) {
      cp = c;
      i += 1;
    } else if (c < 0xE0) {
      cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(utf8[i + 1]) & 0x3Fu);
      i += 2;
    } else {
      cp = ((c & 0x0Fu) << 12) | ((static_cast<unsigned char>(utf8[i + 1]) & 0x3Fu) << 6) |
           (static_cast<unsigned char>(utf8[i + 2]) & 0x3Fu);
      i += 3;
    }
    out.push_back(static_cast<char>(cp & 0xFF));
    out.push_back(static_cast<char>(cp >> 8));
  }
  return out;
}

}  // namespace

TEST(MediaWikiDump, PagesFieldsAndNamespaces) {
  test::ScratchDir dir;
  write(dir.file("d.xml"), kDump);
  InputStream in(dir.file("d.xml"));
  MediaWikiDumpReader reader(in);
  WikiPage p;
  ASSERT_TRUE(reader.next(p));
  EXPECT_EQ(p.title, "AT&T Größe");
  EXPECT_EQ(p.id, "7");  // the page id, not a revision or contributor id
  EXPECT_EQ(p.ns, 0);
  EXPECT_EQ(p.text, "'''AT&T''' <ref>x</ref> Größe");  // the last revision
  EXPECT_FALSE(p.redirect);
  EXPECT_EQ(p.line, 4u);
  EXPECT_TRUE(reader.namespaces().dropped.count("datei"));
  ASSERT_TRUE(reader.next(p));
  EXPECT_TRUE(p.redirect);
  EXPECT_EQ(p.redirect_title, "AT&T Größe");
  ASSERT_TRUE(reader.next(p));
  EXPECT_EQ(p.ns, 1);
  EXPECT_FALSE(reader.next(p));
}

TEST(MediaWikiDump, Utf16GivesTheSamePages) {
  test::ScratchDir dir;
  std::string xml = std::string("<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n") + kDump;
  write(dir.file("utf8.xml"), kDump);
  write(dir.file("utf16.xml"), to_utf16le(xml));
  auto a = read_all(dir.file("utf8.xml"));
  auto b = read_all(dir.file("utf16.xml"));
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].title, b[i].title);
    EXPECT_EQ(a[i].text, b[i].text);
  }
}

TEST(MediaWikiDump, MalformedXmlKeepsEarlierPagesAndSaysWhere) {
  test::ScratchDir dir;
  std::string xml(kDump);
  write(dir.file("cut.xml"), xml.substr(0, xml.find("<page><title>Talk")) + "<page><title>Broken</tit");
  std::string error;
  auto pages = read_all(dir.file("cut.xml"), &error);
  EXPECT_EQ(pages.size(), 2u);
  EXPECT_NE(error.find("cut.xml:"), std::string::npos) << error;
  write(dir.file("bad.xml"), xml.substr(0, xml.find("<page><title>Old")) + "<page><title>x</page>");
  pages = read_all(dir.file("bad.xml"), &error);
  EXPECT_EQ(pages.size(), 1u);
  EXPECT_NE(error.find("bad.xml:9:"), std::string::npos) << error;
  write(dir.file("not.xml"), "{\"id\": \"Q1\"}\n");
  EXPECT_THROW(read_all(dir.file("not.xml")), Error);
}

TEST(MediaWikiDump, EnwikiExcerptCountedIndependently) {
  KGLM_REQUIRE_FIXTURES();
  const std::string path = test::fixture("wikipedia/enwiki-sample-a.xml.bz2");
  // Independent count: substrings of the decompressed XML.
  std::string xml;
  {
    InputStream in(path);
    char buf[1 << 16];
    for (size_t n; (n = in.read(buf, sizeof buf)) > 0;) xml.append(buf, n);
  }
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t pos = xml.find(needle); pos != std::string::npos; pos = xml.find(needle, pos + 1)) ++n;
    return n;
  };
  auto pages = read_all(path);
  size_t redirects = 0;
  for (const auto& p : pages) redirects += p.redirect;
  EXPECT_EQ(pages.size(), count("<page>"));
  EXPECT_EQ(redirects, count("<redirect "));
  EXPECT_EQ(pages.size(), 103u);
  EXPECT_EQ(redirects, 54u);
}
