#include "nn/safetensors.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "../unit/test_paths.hpp"
#include "core/error.hpp"
#include "nn/convert.hpp"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace kglm::nn {
namespace {

// A safetensors file from its header text and data section, as bytes.
std::string file_bytes(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((uint64_t{header.size()} >> (8 * i)) & 0xff);
  return out + header + data;
}

std::span<const std::byte> as_span(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

// The message of the Error parse() throws, or "" when it accepts the bytes.
std::string parse_error(const std::string& bytes) {
  try {
    SafetensorsFile::parse(as_span(bytes), "bad.safetensors");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_REJECTED(bytes, part)                                                                   \
  do {                                                                                                 \
    std::string message = parse_error(bytes);                                                          \
    EXPECT_NE(message.find("bad.safetensors: safetensors: "), std::string::npos) << message;           \
    EXPECT_NE(message.find(part), std::string::npos) << "expected '" << (part) << "' in: " << message; \
  } while (0)

std::string entry(const std::string& name, const std::string& dtype, const std::string& shape, uint64_t begin,
                  uint64_t end) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" +
         std::to_string(begin) + "," + std::to_string(end) + "]}";
}

template <class T>
std::string raw_bytes(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

Tensor half_tensor(DType dtype, Shape shape, const std::vector<uint16_t>& bits) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  EXPECT_EQ(t.nbytes(), bits.size() * 2);
  std::memcpy(t.raw(), bits.data(), t.nbytes());
  return t;
}

std::string tensor_bytes(const Tensor& t) { return std::string(static_cast<const char*>(t.raw()), t.nbytes()); }

std::string span_string(std::span<const std::byte> s) {
  return std::string(reinterpret_cast<const char*>(s.data()), s.size());
}

bool same_float(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

TEST(Safetensors, RoundTripOfEveryDtype) {
  test::ScratchDir dir;
  std::string path = dir.file("all.safetensors");
  std::vector<std::pair<std::string, Tensor>> tensors = {
      {"f32", Tensor::from<float>({2, 3}, {1, -2, 3.5f, 0, -0.0f, 1e-30f})},
      {"f64", Tensor::from<double>({3}, {0.1, -1e300, 2})},
      {"bf16", half_tensor(DType::BF16, {2}, {0x3f80, 0xc020})},
      {"f16", half_tensor(DType::F16, {2, 1}, {0x3c00, 0x0001})},
      {"i32", Tensor::from<int32_t>({2, 2}, {1, -2, std::numeric_limits<int32_t>::max(), 0})},
      {"i64", Tensor::from<int64_t>({1}, {std::numeric_limits<int64_t>::min()})},
      {"u8", Tensor::from<uint8_t>({5}, {0, 1, 127, 128, 255})},
      {"scalar", Tensor::from<float>({}, {42.5f})},
      {"scalar_i64", Tensor::from<int64_t>({}, {-7})},
      {"empty", Tensor::zeros({0, 4})},
      {"empty_i64", Tensor::zeros({3, 0}, DType::I64)},
      {"a name with \"quotes\", \\ and \xc3\xbc", Tensor::from<uint8_t>({1}, {9})},
  };
  std::vector<std::pair<std::string, std::string>> metadata = {
      {"format", "pt"}, {"step", "1200"}, {"note", "line\nbreak, tab\t, \"quoted\" \xe2\x82\xac"}, {"empty", ""}};
  write_safetensors(path, tensors, metadata);

  SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_EQ(f.source(), path);
  EXPECT_EQ(f.metadata(), metadata);
  ASSERT_EQ(f.entries().size(), tensors.size());
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, t] = tensors[i];
    const SafetensorsEntry& e = f.entries()[i];
    EXPECT_EQ(e.name, name);
    EXPECT_EQ(e.dtype, t.dtype()) << name;
    EXPECT_EQ(e.dtype_name, dtype_name(t.dtype()));
    EXPECT_TRUE(e.tensor_dtype);
    EXPECT_EQ(e.shape, t.shape()) << name;
    EXPECT_EQ(e.begin, offset) << name;  // contiguous, in the given order
    offset += t.nbytes();
    EXPECT_EQ(e.end, offset) << name;
    EXPECT_EQ(f.find(name), &e);
    EXPECT_EQ(span_string(f.bytes(e)), tensor_bytes(t)) << name;
    Tensor back = f.read(name);
    EXPECT_EQ(back.dtype(), t.dtype());
    EXPECT_EQ(back.shape(), t.shape());
    EXPECT_EQ(tensor_bytes(back), tensor_bytes(t)) << name;
  }
  EXPECT_EQ(f.read("scalar").numel(), 1);
  EXPECT_EQ(f.read("scalar").data<float>()[0], 42.5f);
  EXPECT_EQ(f.read("empty").numel(), 0);
  EXPECT_EQ(f.find("missing"), nullptr);
  EXPECT_EQ(std::filesystem::file_size(path) % 8, offset % 8);
}

TEST(Safetensors, EmptyFileOfNoTensorsRoundTrips) {
  test::ScratchDir dir;
  std::string path = dir.file("none.safetensors");
  write_safetensors(path, {});
  EXPECT_EQ(test::read_file(path), file_bytes("{}      "));
  SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_TRUE(f.entries().empty());
  EXPECT_TRUE(f.metadata().empty());
}

TEST(Safetensors, HeaderIsCompactAndPaddedToEightBytes) {
  test::ScratchDir dir;
  std::string path = dir.file("pad.safetensors");
  write_safetensors(path, {{"a", Tensor::from<float>({2}, {1, 2})}}, {{"format", "pt"}});
  std::string header =
      "{\"__metadata__\":{\"format\":\"pt\"},\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  ASSERT_EQ(header.size(), 85u);
  std::string padded = header + std::string(3, ' ');
  EXPECT_EQ(test::read_file(path), file_bytes(padded, raw_bytes<float>({1, 2})));

  for (size_t name_length = 1; name_length <= 9; ++name_length) {
    write_safetensors(path, {{std::string(name_length, 'x'), Tensor::from<float>({1}, {3})}});
    std::string bytes = test::read_file(path);
    uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    EXPECT_EQ((8 + n) % 8, 0u);
    EXPECT_EQ(bytes.size(), 8 + n + 4);
    EXPECT_EQ(bytes[8], '{');
    size_t close = bytes.rfind('}', 8 + n - 1);
    EXPECT_EQ(bytes.find_first_not_of(' ', close + 1), 8 + n) << "only spaces after the JSON";
    EXPECT_EQ(SafetensorsFile::open(path).read_f32(std::string(name_length, 'x')).data<float>()[0], 3.0f);
  }
}

// What Python writes: safetensors itself emits compact JSON, tensors sorted by dtype alignment, then
// name, "__metadata__" first; a stdlib writer (json.dumps + struct.pack('<Q')) uses ", " and ": ".
TEST(Safetensors, ReadsFilesWrittenByPython) {
  std::string data = raw_bytes<float>({1, 2, 3, 4}) + raw_bytes<int64_t>({7}) + raw_bytes<float>({0.5f, -1});
  std::string compact =
      "{\"__metadata__\":{\"format\":\"pt\"},\"step\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[16,24]},"
      "\"bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[24,32]},"
      "\"weight\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}";
  std::string stdlib =
      "{\"weight\": {\"dtype\": \"F32\", \"shape\": [2, 2], \"data_offsets\": [0, 16]}, "
      "\"step\": {\"dtype\": \"I64\", \"shape\": [], \"data_offsets\": [16, 24]}, "
      "\"bias\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [24, 32]}, "
      "\"__metadata__\": {\"format\": \"pt\"}}";
  for (const std::string& header : {compact + std::string((8 - compact.size() % 8) % 8, ' '), stdlib}) {
    std::string bytes = file_bytes(header, data);
    SafetensorsFile f = SafetensorsFile::parse(as_span(bytes), "python.safetensors");
    ASSERT_EQ(f.entries().size(), 3u);
    EXPECT_EQ(f.metadata(), (std::vector<std::pair<std::string, std::string>>{{"format", "pt"}}));
    Tensor w = f.read_f32("weight");
    EXPECT_EQ(w.shape(), (Shape{2, 2}));
    EXPECT_EQ(std::vector<float>(w.data<float>(), w.data<float>() + 4), (std::vector<float>{1, 2, 3, 4}));
    Tensor step = f.read("step");
    EXPECT_EQ(step.rank(), 0);
    EXPECT_EQ(step.data<int64_t>()[0], 7);
    EXPECT_EQ(f.read_i32("step").data<int32_t>()[0], 7);
    EXPECT_EQ(f.read("bias").data<float>()[1], -1.0f);
  }
  // Header order is kept, not offset order.
  std::string bytes = file_bytes(compact, data);
  SafetensorsFile f = SafetensorsFile::parse(as_span(bytes), "python.safetensors");
  EXPECT_EQ(f.entries()[0].name, "step");
  EXPECT_EQ(f.entries()[2].name, "weight");
}

TEST(Safetensors, ReadF32WidensHalfPrecisionExactly) {
  float inf = std::numeric_limits<float>::infinity();
  std::vector<uint16_t> bf16 = {0x3f80, 0xc020, 0x477f, 0x0001, 0x7f80, 0xff80, 0x7fc0, 0x8000};
  std::vector<float> bf16_expected = {1.0f, -2.5f, 65280.0f, 0x1p-133f, inf, -inf, 0, -0.0f};
  std::vector<uint16_t> f16 = {0x3c00, 0xc100, 0x7bff, 0x0001, 0x03ff, 0x0400, 0x7c00, 0xfc00, 0x7e00, 0x8000, 0x3555};
  std::vector<float> f16_expected = {1.0f, -2.5f, 65504.0f, 0x1p-24f, 1023 * 0x1p-24f, 0x1p-14f,
                                     inf,  -inf,  0,        -0.0f,    0.333251953125f};
  std::vector<double> f64 = {0.1, 1e300, -1e300, std::numeric_limits<float>::max(), 0x1.fffffefp127, 1e-50, -0.0};
  std::vector<float> f64_expected = {
      0.1f, inf, -inf, std::numeric_limits<float>::max(), std::numeric_limits<float>::max(), 0.0f, -0.0f};

  test::ScratchDir dir;
  std::string path = dir.file("half.safetensors");
  write_safetensors(path, {{"bf16", half_tensor(DType::BF16, {8}, bf16)},
                           {"f16", half_tensor(DType::F16, {11}, f16)},
                           {"f64", Tensor::from<double>({7}, f64)},
                           {"f32", Tensor::from<float>({}, {0.25f})},
                           {"i32", Tensor::from<int32_t>({1}, {1})}});
  SafetensorsFile f = SafetensorsFile::open(path);
  Tensor b = f.read_f32("bf16");
  ASSERT_EQ(b.dtype(), DType::F32);
  for (size_t i = 0; i < bf16.size(); ++i) {
    if (i == 6)
      EXPECT_TRUE(std::isnan(b.data<float>()[i]));
    else
      EXPECT_TRUE(same_float(b.data<float>()[i], bf16_expected[i])) << i << ": " << b.data<float>()[i];
  }
  Tensor h = f.read_f32("f16");
  for (size_t i = 0; i < f16.size(); ++i) {
    if (i == 8)
      EXPECT_TRUE(std::isnan(h.data<float>()[i]));
    else
      EXPECT_TRUE(same_float(h.data<float>()[i], f16_expected[i])) << i << ": " << h.data<float>()[i];
  }
  Tensor d = f.read_f32("f64");
  for (size_t i = 0; i < f64.size(); ++i)
    EXPECT_TRUE(same_float(d.data<float>()[i], f64_expected[i])) << i << ": " << d.data<float>()[i];
  EXPECT_EQ(f.read_f32("f32").data<float>()[0], 0.25f);
  EXPECT_EQ(f.read_f32("f32").rank(), 0);
  std::string message;
  try {
    f.read_f32("i32");
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("tensor \"i32\" has dtype I32"), std::string::npos) << message;
}

TEST(Safetensors, ReadI32ChecksTheRange) {
  test::ScratchDir dir;
  std::string path = dir.file("ids.safetensors");
  write_safetensors(path, {{"ok", Tensor::from<int64_t>({3}, {-2147483648LL, 0, 2147483647LL})},
                           {"big", Tensor::from<int64_t>({2, 2}, {1, 2, 3, 2147483648LL})},
                           {"i32", Tensor::from<int32_t>({2}, {5, -6})},
                           {"f32", Tensor::from<float>({1}, {1})}});
  SafetensorsFile f = SafetensorsFile::open(path);
  Tensor ok = f.read_i32("ok");
  EXPECT_EQ(ok.dtype(), DType::I32);
  EXPECT_EQ(std::vector<int32_t>(ok.data<int32_t>(), ok.data<int32_t>() + 3),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), 0, std::numeric_limits<int32_t>::max()}));
  EXPECT_EQ(f.read_i32("i32").data<int32_t>()[1], -6);
  try {
    f.read_i32("big");
    ADD_FAILURE() << "accepted 2^31";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor \"big\": element 3 = 2147483648 does not fit in I32"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(f.read_i32("f32"), Error);
}

TEST(Safetensors, OtherDtypesAreValidatedButNotRead) {
  std::string header = "{" + entry("flags", "BOOL", "[2]", 0, 2) + "," + entry("q", "I8", "[2]", 2, 4) + "," +
                       entry("u16", "U16", "[1]", 4, 6) + "," + entry("f8", "F8_E4M3", "[2]", 6, 8) + "," +
                       entry("u64", "U64", "[]", 8, 16) + "}";
  std::string bytes = file_bytes(header, std::string("\x01\x00\xff\x7f\x01\x02\x03\x04", 8) + std::string(8, 'x'));
  SafetensorsFile f = SafetensorsFile::parse(as_span(bytes), "other.safetensors");
  ASSERT_EQ(f.entries().size(), 5u);
  const SafetensorsEntry* q = f.find("q");
  ASSERT_NE(q, nullptr);
  EXPECT_FALSE(q->tensor_dtype);
  EXPECT_EQ(q->dtype_name, "I8");
  EXPECT_EQ(span_string(f.bytes(*q)), std::string("\xff\x7f", 2));
  for (const char* name : {"flags", "q", "u16", "f8", "u64"}) {
    try {
      f.read(name);
      ADD_FAILURE() << name;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("which Tensor does not support"), std::string::npos) << e.what();
    }
    EXPECT_THROW(f.read_f32(name), Error);
    EXPECT_THROW(f.read_i32(name), Error);
  }
}

TEST(Safetensors, AbsentTensorAndMissingFile) {
  test::ScratchDir dir;
  std::string path = dir.file("one.safetensors");
  write_safetensors(path, {{"a", Tensor::from<float>({1}, {1})}});
  SafetensorsFile f = SafetensorsFile::open(path);
  try {
    f.read("b");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ": safetensors: no tensor \"b\"");
  }
  EXPECT_THROW(f.read_f32("b"), Error);
  EXPECT_THROW(f.read_i32("b"), Error);
  try {
    SafetensorsFile::open(dir.file("missing.safetensors"));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.safetensors: safetensors: cannot open"), std::string::npos);
  }
  std::ofstream(dir.file("empty.safetensors")).close();
  EXPECT_THROW(SafetensorsFile::open(dir.file("empty.safetensors")), Error);
}

TEST(Safetensors, MovedFileKeepsItsData) {
  test::ScratchDir dir;
  std::string path = dir.file("m.safetensors");
  write_safetensors(path, {{"a", Tensor::from<float>({3}, {1, 2, 3})}});
  SafetensorsFile f = SafetensorsFile::open(path);
  std::span<const std::byte> before = f.bytes(f.entries()[0]);
  SafetensorsFile g = std::move(f);
  std::vector<SafetensorsFile> files;
  files.push_back(std::move(g));
  EXPECT_EQ(files[0].bytes(files[0].entries()[0]).data(), before.data());
  EXPECT_EQ(files[0].read_f32("a").data<float>()[2], 3.0f);
  EXPECT_EQ(files[0].find("a"), &files[0].entries()[0]);
}

TEST(Safetensors, AcceptsEdgeCasesOfTheFormat) {
  // Zero-size tensors may share an offset, even with the end of the data; unknown fields are ignored;
  // whitespace may pad the header; an empty header object with no data is a valid file.
  std::string header = "{" + entry("z1", "F32", "[0]", 0, 0) + "," + entry("a", "U8", "[2]", 0, 2) + "," +
                       entry("z2", "I64", "[5,0,3]", 2, 2) + ",\"b\":{\"dtype\":\"U8\",\"shape\":[],\"extra\":[1,{}]," +
                       "\"data_offsets\":[2,3]}," + entry("z3", "BF16", "[0]", 3, 3) + "}  \n\t ";
  std::string bytes = file_bytes(header, "xyz");
  SafetensorsFile f = SafetensorsFile::parse(as_span(bytes), "edge");
  EXPECT_EQ(f.entries().size(), 5u);
  EXPECT_EQ(f.read("z2").shape(), (Shape{5, 0, 3}));
  EXPECT_EQ(f.read("b").data<uint8_t>()[0], 'z');
  EXPECT_TRUE(parse_error(file_bytes("{}")).empty());
  EXPECT_TRUE(parse_error(file_bytes("{\"__metadata__\":{}}")).empty());
}

TEST(Safetensors, RejectsBadLengths) {
  EXPECT_REJECTED(std::string(), "0 bytes, too short");
  EXPECT_REJECTED(std::string("\x02\x00\x00\x00\x00", 5), "5 bytes, too short");
  EXPECT_REJECTED(std::string(8, '\0') + "{}", "header length is 0");
  std::string huge = file_bytes("{}");
  huge[0] = '\x01';
  huge[1] = '\xe1';
  huge[2] = '\xf5';
  huge[3] = '\x05';  // 100000001
  EXPECT_REJECTED(huge, "header length 100000001 is over the limit of 100000000 bytes");
  std::string max = file_bytes("{}");
  std::memset(max.data(), 0xff, 8);
  EXPECT_REJECTED(max, "header length 18446744073709551615 is over the limit");
  std::string past = file_bytes("{}");
  past[0] = 3;
  EXPECT_REJECTED(past, "header length 3 runs past the end of the file (10 bytes)");
}

TEST(Safetensors, RejectsBadJson) {
  EXPECT_REJECTED(file_bytes("{\"a\":"), "the header is not valid JSON");
  EXPECT_REJECTED(file_bytes("{} {}"), "the header is not valid JSON");
  EXPECT_REJECTED(file_bytes(std::string("{}\0\0", 4)), "the header is not valid JSON");
  EXPECT_REJECTED(file_bytes("[1,2]"), "the header is not a JSON object");
  EXPECT_REJECTED(file_bytes("\"text\""), "the header is not a JSON object");
  EXPECT_REJECTED(file_bytes("{\"\xff\":{}}"), "the header is not valid UTF-8");
  EXPECT_REJECTED(file_bytes("{\"a\":\"\xc3\"}"), "the header is not valid UTF-8");
  EXPECT_REJECTED(file_bytes(std::string(2000, '[') + std::string(2000, ']')), "the header is not valid JSON");
}

TEST(Safetensors, RejectsBadEntries) {
  auto one = [](const std::string& body, const std::string& data = "12345678") {
    return file_bytes("{\"w\":" + body + "}", data);
  };
  EXPECT_REJECTED(one("3"), "tensor \"w\": the entry is not an object");
  EXPECT_REJECTED(one("{\"shape\":[2],\"data_offsets\":[0,8]}"), "tensor \"w\": no dtype");
  EXPECT_REJECTED(one("{\"dtype\":\"F32\",\"data_offsets\":[0,8]}"), "tensor \"w\": no shape");
  EXPECT_REJECTED(one("{\"dtype\":\"F32\",\"shape\":[2]}"), "tensor \"w\": no data_offsets");
  EXPECT_REJECTED(one("{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}"),
                  "tensor \"w\": duplicate field \"dtype\"");
  EXPECT_REJECTED(one("{\"dtype\":\"F17\",\"shape\":[2],\"data_offsets\":[0,8]}"),
                  "tensor \"w\": unknown dtype \"F17\"");
  EXPECT_REJECTED(one("{\"dtype\":\"f32\",\"shape\":[2],\"data_offsets\":[0,8]}"), "unknown dtype \"f32\"");
  EXPECT_REJECTED(one("{\"dtype\":\"F4\",\"shape\":[2],\"data_offsets\":[0,8]}"), "unknown dtype \"F4\"");
  EXPECT_REJECTED(one("{\"dtype\":4,\"shape\":[2],\"data_offsets\":[0,8]}"), "tensor \"w\": dtype is not a string");
  for (const char* shape : {"2", "\"[2]\"", "[-2]", "[2.0]", "[1,\"2\"]", "[[2]]", "[null]", "{}"})
    EXPECT_REJECTED(one(std::string("{\"dtype\":\"F32\",\"shape\":") + shape + ",\"data_offsets\":[0,8]}"),
                    "tensor \"w\": shape is not an array of non-negative integers");
  EXPECT_REJECTED(one("{\"dtype\":\"F32\",\"shape\":[2,-1],\"data_offsets\":[0,8]}"), "(dimension 1 is -1)");
  EXPECT_REJECTED(one("{\"dtype\":\"U8\",\"shape\":[9223372036854775808],\"data_offsets\":[0,8]}"),
                  "tensor \"w\": dimension 0 = 9223372036854775808 is too large");
  EXPECT_REJECTED(one("{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}"),
                  "tensor \"w\": the element count of shape [4294967296, 4294967296] overflows");
  // A prefix overflows although a later 0 would make the count 0.
  EXPECT_REJECTED(one("{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296,0],\"data_offsets\":[0,8]}"),
                  "the element count of shape [4294967296, 4294967296, 0] overflows");
  EXPECT_REJECTED(one("{\"dtype\":\"F32\",\"shape\":[4611686018427387904],\"data_offsets\":[0,8]}"),
                  "tensor \"w\": the byte size of shape [4611686018427387904] F32 overflows");
  for (const char* offsets :
       {"[0]", "[0,8,8]", "[]", "[0,\"8\"]", "[-1,8]", "[0,8.0]", "8", "{\"0\":8}", "[0,18446744073709551616]"}) {
    std::string message =
        parse_error(one(std::string("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":") + offsets + "}"));
    bool named = message.find("tensor \"w\": data_offsets is not a pair of non-negative integers") != std::string::npos;
    bool not_json = message.find("not valid JSON") != std::string::npos;  // 2^64 is no JSON integer simdjson takes
    EXPECT_TRUE(named || not_json) << offsets << ": " << message;
  }
  EXPECT_REJECTED(one("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}"),
                  "tensor \"w\": data_offsets [8, 0) begin after they end");
  EXPECT_REJECTED(one("{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}"),
                  "tensor \"w\": data_offsets [0, 16) end past the data section (8 bytes)");
  EXPECT_REJECTED(one("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,18446744073709551615]}"),
                  "end past the data section");
  EXPECT_REJECTED(one("{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}"),
                  "tensor \"w\": data_offsets [0, 8) hold 8 bytes, but shape [3] F32 needs 12");
  EXPECT_REJECTED(one("{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,4]}", "1234"),
                  "data_offsets [0, 4) hold 4 bytes, but shape [] F64 needs 8");
}

TEST(Safetensors, RejectsBadLayouts) {
  EXPECT_REJECTED(file_bytes("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 4, 12) + "}",
                             std::string(12, 'x')),
                  "tensor \"b\": data_offsets [4, 12) overlap tensor \"a\" [0, 8)");
  EXPECT_REJECTED(file_bytes("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 0, 8) + "}",
                             std::string(8, 'x')),
                  "overlap tensor");
  EXPECT_REJECTED(file_bytes("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("z", "F32", "[0]", 4, 4) + "}",
                             std::string(8, 'x')),
                  "tensor \"z\": data_offsets [4, 4) overlap tensor \"a\"");
  EXPECT_REJECTED(file_bytes("{" + entry("a", "F32", "[1]", 0, 4) + "," + entry("b", "F32", "[1]", 8, 12) + "}",
                             std::string(12, 'x')),
                  "gap in the data section: bytes [4, 8) before tensor \"b\" belong to no tensor");
  EXPECT_REJECTED(file_bytes("{" + entry("b", "F32", "[1]", 4, 8) + "}", std::string(8, 'x')),
                  "gap in the data section: bytes [0, 4) before tensor \"b\"");
  EXPECT_REJECTED(file_bytes("{" + entry("a", "F32", "[1]", 0, 4) + "}", std::string(6, 'x')),
                  "bytes [4, 6) at the end of the data section belong to no tensor");
  EXPECT_REJECTED(file_bytes("{}", "x"), "bytes [0, 1) at the end of the data section belong to no tensor");
  EXPECT_REJECTED(file_bytes("{" + entry("a", "F32", "[1]", 0, 4) + "," + entry("a", "F32", "[1]", 4, 8) + "}",
                             std::string(8, 'x')),
                  "duplicate tensor name \"a\"");
}

TEST(Safetensors, RejectsBadMetadata) {
  std::string a = entry("a", "U8", "[1]", 0, 1);
  EXPECT_REJECTED(file_bytes("{\"__metadata__\":[\"x\"]," + a + "}", "x"), "__metadata__ is not an object of strings");
  EXPECT_REJECTED(file_bytes("{\"__metadata__\":null}"), "__metadata__ is not an object of strings");
  EXPECT_REJECTED(file_bytes("{\"__metadata__\":{\"step\":12}}"), "__metadata__ value of \"step\" is not a string");
  EXPECT_REJECTED(file_bytes("{\"__metadata__\":{\"k\":{}}}"), "__metadata__ value of \"k\" is not a string");
  EXPECT_REJECTED(file_bytes("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}"), "duplicate __metadata__ key \"k\"");
  EXPECT_REJECTED(file_bytes("{\"__metadata__\":{},\"__metadata__\":{}}"), "duplicate __metadata__");
}

TEST(Safetensors, MessagesQuoteAndShortenNames) {
  std::string long_name(5000, 'n');
  std::string message =
      parse_error(file_bytes("{\"" + long_name + "\":{\"dtype\":\"X\",\"shape\":[],\"data_offsets\":[0,0]}}"));
  EXPECT_NE(message.find("tensor \"nnnn"), std::string::npos) << message;
  EXPECT_NE(message.find("...\": unknown dtype \"X\""), std::string::npos) << message;
  EXPECT_LT(message.size(), 300u);
  message = parse_error(file_bytes("{\"a\\nb\\u0001\":{\"dtype\":\"X\",\"shape\":[],\"data_offsets\":[0,0]}}"));
  EXPECT_NE(message.find("tensor \"a\\nb\\u0001\": unknown dtype"), std::string::npos) << message;
}

TEST(Safetensors, WriterRejectsWhatReadersWouldNot) {
  test::ScratchDir dir;
  std::string path = dir.file("w.safetensors");
  Tensor t = Tensor::from<float>({1}, {1});
  EXPECT_THROW(write_safetensors(path, {{"a", t}, {"a", t}}), Error);
  EXPECT_THROW(write_safetensors(path, {{"__metadata__", t}}), Error);
  EXPECT_THROW(write_safetensors(path, {{"a", Tensor()}}), Error);
  EXPECT_THROW(write_safetensors(path, {{"bad\xff", t}}), Error);
  EXPECT_THROW(write_safetensors(path, {{"a", t}}, {{"k", "\xc3"}}), Error);
  EXPECT_THROW(write_safetensors(path, {{"a", t}}, {{"k", "1"}, {"k", "2"}}), Error);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(std::filesystem::path(path).parent_path()));
}

TEST(Safetensors, WritesAtomically) {
  test::ScratchDir dir;
  std::string path = dir.file("model.safetensors");
  write_safetensors(path, {{"a", Tensor::from<float>({1}, {1})}});
  std::string first = test::read_file(path);
  write_safetensors(path, {{"a", Tensor::from<float>({2}, {2, 3})}});
  EXPECT_NE(test::read_file(path), first);
  EXPECT_EQ(SafetensorsFile::open(path).read("a").numel(), 2);
  // A failed write leaves the old file as it was.
  std::string second = test::read_file(path);
  EXPECT_THROW(write_safetensors(path, {{"a", Tensor::from<float>({1}, {4})}, {"a", Tensor()}}), Error);
  EXPECT_EQ(test::read_file(path), second);
  // A failure after the data is written (the rename onto a directory fails) removes the temporary.
  std::string blocked = dir.file("blocked");
  std::filesystem::create_directory(blocked);
  std::filesystem::create_directory(blocked + "/keep");
  EXPECT_THROW(write_safetensors(blocked, {{"a", Tensor::from<float>({1}, {4})}}), Error);
  EXPECT_TRUE(std::filesystem::is_directory(blocked + "/keep"));
  for (const auto& item : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    EXPECT_EQ(item.path().filename().string().find(".tmp."), std::string::npos) << item.path();
}

TEST(SafetensorsConvert, HalfPrecisionRoundTripsExhaustively) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    auto h = static_cast<uint16_t>(bits);
    float f = f16_to_f32(h);
    float b = bf16_to_f32(h);
    EXPECT_EQ(std::bit_cast<uint32_t>(b), bits << 16);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(f))));
      EXPECT_EQ(f32_to_f16(f) & 0x7c00, 0x7c00);
      EXPECT_NE(f32_to_f16(f) & 0x3ff, 0);
      EXPECT_EQ(f32_to_f16(f) & 0x8000, bits & 0x8000);
    } else {
      EXPECT_EQ(f32_to_f16(f), h) << std::hex << bits;
    }
    if (!std::isnan(b)) {
      EXPECT_EQ(f32_to_bf16(b), h) << std::hex << bits;
    }
#if defined(__F16C__)
    float hardware = _cvtsh_ss(h);
    EXPECT_TRUE(std::isnan(f) ? std::isnan(hardware) : same_float(f, hardware)) << std::hex << bits;
#endif
  }
}

TEST(SafetensorsConvert, NarrowingRoundsToNearestEven) {
  EXPECT_EQ(f32_to_f16(1.0f + 0x1p-11f), 0x3c00);             // tie, down to even
  EXPECT_EQ(f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);         // tie, up to even
  EXPECT_EQ(f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);  // above the tie
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65519.99f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-1e10f), 0xfc00);
  EXPECT_EQ(f32_to_f16(0x1p-25f), 0x0000);  // tie between 0 and the smallest subnormal
  EXPECT_EQ(f32_to_f16(0x1p-25f + 0x1p-35f), 0x0001);
  EXPECT_EQ(f32_to_f16(3 * 0x1p-25f), 0x0002);
  EXPECT_EQ(f32_to_f16(0x1p-14f - 0x1p-26f), 0x0400);  // rounds up into the normals
  EXPECT_EQ(f32_to_f16(-1e-30f), 0x8000);
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(f32_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x7f800001u)) & 0x7fc0, 0x7fc0);  // signalling NaN stays NaN
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0xff800001u)), 0xffc0);
#if defined(__F16C__)
  // Every 997th fp32 bit pattern against the CPU's conversion.
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 997) {
    float f = std::bit_cast<float>(static_cast<uint32_t>(bits));
    uint16_t hardware = _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
    if (std::isnan(f))
      ASSERT_EQ(f32_to_f16(f) & 0xfe00, hardware & 0xfe00) << std::hex << bits;
    else
      ASSERT_EQ(f32_to_f16(f), hardware) << std::hex << bits;
  }
#endif
}

TEST(SafetensorsConvert, TensorsToAndFromF32) {
  Tensor f = Tensor::from<float>({2, 2}, {1.0f, -2.5f, 65504.0f, 0x1p-24f});
  for (DType to : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
    Tensor narrow = from_f32(f, to);
    EXPECT_EQ(narrow.dtype(), to);
    EXPECT_EQ(narrow.shape(), f.shape());
    Tensor back = to_f32(narrow);
    EXPECT_EQ(back.dtype(), DType::F32);
    if (to != DType::BF16)
      EXPECT_EQ(tensor_bytes(back), tensor_bytes(f)) << dtype_name(to);
    else
      EXPECT_EQ(back.data<float>()[2], 65536.0f);  // BF16 keeps 8 significant bits
  }
  EXPECT_EQ(to_f32(Tensor::from<double>({}, {0.5})).data<float>()[0], 0.5f);
  EXPECT_THROW(to_f32(Tensor::from<int32_t>({1}, {1})), Error);
  EXPECT_THROW(to_f32(Tensor()), Error);
  EXPECT_THROW(from_f32(f, DType::I32), Error);
  EXPECT_THROW(from_f32(Tensor::from<double>({1}, {1}), DType::F16), Error);
}

}  // namespace
}  // namespace kglm::nn
