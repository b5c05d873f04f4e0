#include <gtest/gtest.h>

#include <numeric>

#include "h5/h5.hpp"
#include "test_paths.hpp"

namespace kglm::h5 {
namespace {

TEST(H5, ColumnsAppendAcrossChunkBoundaries) {
  test::ScratchDir dir;
  std::string path = dir.file("c.h5");
  std::vector<uint32_t> expected(100000);
  std::iota(expected.begin(), expected.end(), 7);
  {
    File f = File::create(path);
    Group g = f.root().create_group("g");
    ColumnWriter<uint32_t> w(g, "col", 1000);
    size_t pos = 0;
    for (size_t step : {1, 999, 1, 5000, 3, 2000, 17}) {
      w.append(expected.data() + pos, step);
      pos += step;
    }
    w.append(expected.data() + pos, expected.size() - pos);
    EXPECT_EQ(w.size(), expected.size());
    w.finish();
    write_column<double>(g, "empty", {});
    f.close();
  }
  File f = File::open(path);
  Group g = f.root().open_group("g");
  EXPECT_EQ(read_column<uint32_t>(g, "col"), expected);
  EXPECT_EQ(column_size(g, "empty"), 0u);
  std::vector<uint32_t> part(10);
  read_column_range(g, "col", H5T_NATIVE_UINT32, 99990, 10, part.data());
  EXPECT_EQ(part[9], expected.back());
  EXPECT_THROW(read_column_range(g, "col", H5T_NATIVE_UINT32, 99995, 10, part.data()), Error);
  EXPECT_THROW(g.open_group("missing"), Error);
}

TEST(H5, StringTablesKeepUtf8AndEmptyStrings) {
  test::ScratchDir dir;
  std::string path = dir.file("s.h5");
  std::vector<std::string> strings = {"", "Douglas Adams", "ダグラス・アダムズ", "", std::string(70000, 'x'), "end"};
  {
    File f = File::create(path);
    StringColumnWriter w(f.root(), "names");
    for (const auto& s : strings) w.append(s);
    EXPECT_EQ(w.size(), strings.size());
    w.finish();
    f.close();
  }
  File f = File::open(path);
  StringTable t = read_string_table(f.root(), "names");
  ASSERT_EQ(t.size(), strings.size());
  for (size_t i = 0; i < strings.size(); ++i) EXPECT_EQ(t[i], strings[i]);
}

TEST(H5, AttributesAndProvenance) {
  test::ScratchDir dir;
  std::string path = dir.file("p.h5");
  Provenance p{"tool", "1.2", "tool -o x", {{"a.json", 10}, {"<stdin>", -1}}, 99, "2026-01-01T00:00:00Z"};
  {
    File f = File::create(path);
    write_provenance(f.root(), p);
    f.root().set_attribute("empty", "");
    f.root().set_attribute("n", int64_t{-5});
    f.close();
  }
  File f = File::open(path);
  Provenance q = read_provenance(f.root());
  EXPECT_EQ(q.tool, "tool");
  EXPECT_EQ(q.command_line, "tool -o x");
  ASSERT_EQ(q.inputs.size(), 2u);
  EXPECT_EQ(q.inputs[0].name, "a.json");
  EXPECT_EQ(q.inputs[0].size, 10);
  EXPECT_EQ(q.inputs[1].size, -1);
  EXPECT_EQ(q.seed, 99u);
  EXPECT_EQ(f.root().string_attribute("empty"), "");
  EXPECT_EQ(f.root().int_attribute("n"), -5);
}

TEST(H5, OpeningANonHdf5FileIsAClearError) {
  test::ScratchDir dir;
  std::ofstream(dir.file("x.h5")) << "not hdf5";
  EXPECT_THROW(File::open(dir.file("x.h5")), Error);
}

}  // namespace
}  // namespace kglm::h5
