#include "sim/value/npy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/base/file.h"

namespace tpusim::value {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;

/// A .npy file with the given header text (padded as numpy pads it) and data.
std::string MakeNpy(const std::string& header, const std::string& data, int major = 1) {
  const size_t preamble = major == 1 ? 10 : 12;
  std::string padded = header;
  while ((preamble + padded.size() + 1) % 64 != 0) padded += ' ';
  padded += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < preamble - 8; ++i)
    out += static_cast<char>((padded.size() >> (8 * i)) & 0xFF);
  return out + padded + data;
}

std::string Header(const std::string& descr, const std::string& shape) {
  return "{'descr': " + descr + ", 'fortran_order': False, 'shape': " + shape + ", }";
}

std::string TempPath(const std::string& name) { return testing::TempDir() + "/" + name; }

std::vector<PrimitiveType> AllArrayTypes() {
  std::vector<PrimitiveType> types;
  for (int t = 0; t < hlo::kPrimitiveTypeCount; ++t) {
    if (hlo::IsArrayType(static_cast<PrimitiveType>(t)))
      types.push_back(static_cast<PrimitiveType>(t));
  }
  return types;
}

/// A 2x3 literal of `type` holding distinct small values, negative ones
/// where the type has them.
Literal Sample(PrimitiveType type) {
  Literal l(Shape(type, {2, 3}));
  const double values[] = {0, 1, -1, 2.5, -6, 3};
  for (int i = 0; i < 6; ++i) l.SetFromDouble(i, values[i]);
  return l;
}

TEST(NpyTest, EveryTypeRoundTripsInMemoryAndOnDisk) {
  for (PrimitiveType type : AllArrayTypes()) {
    SCOPED_TRACE(std::string(hlo::PrimitiveTypeName(type)));
    const Literal original = Sample(type);
    StatusOr<std::string> bytes = SerializeNpy(original);
    ASSERT_TRUE(bytes.ok()) << bytes.status().message();
    EXPECT_EQ(bytes->size() % 64, (original.bytes().size()) % 64);  // data starts at 64n

    // Types numpy has come back as themselves only when the file says so;
    // sub-byte integers travel as int8/uint8 and need the expected type.
    NpyReadOptions options;
    options.element_type = type;
    StatusOr<Literal> parsed = ParseNpy(*bytes, "mem.npy", options);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(*parsed, original) << parsed->ToString() << " vs " << original.ToString();

    const std::string path = TempPath("round_trip.npy");
    ASSERT_TRUE(WriteNpy(path, original).ok());
    StatusOr<Literal> read = ReadNpy(path, options);
    ASSERT_TRUE(read.ok()) << read.status().message();
    EXPECT_EQ(*read, original);
  }
}

TEST(NpyTest, SelfDescribingTypesNeedNoExpectedType) {
  for (PrimitiveType type : {PrimitiveType::kBF16, PrimitiveType::kF8E4M3FN, PrimitiveType::kF16,
                             PrimitiveType::kC128, PrimitiveType::kPred, PrimitiveType::kU64}) {
    StatusOr<Literal> parsed = ParseNpy(*SerializeNpy(Sample(type)), "x.npy");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(parsed->element_type(), type);
  }
  // s4 is stored as int8: without an expected type it reads back as s8.
  StatusOr<Literal> s4 = ParseNpy(*SerializeNpy(Sample(PrimitiveType::kS4)), "x.npy");
  ASSERT_TRUE(s4.ok());
  EXPECT_EQ(s4->element_type(), PrimitiveType::kS8);
}

TEST(NpyTest, HeadersMatchNumpyConventions) {
  const std::string f32 = *SerializeNpy(Literal(Shape(PrimitiveType::kF32, {2, 3})));
  EXPECT_EQ(f32.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(f32.size(), 128u + 24u);
  EXPECT_EQ(f32.substr(10, 61), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }  ");
  EXPECT_EQ(f32[127], '\n');
  const std::string scalar = *SerializeNpy(Literal::CreateR0<int16_t>(5));
  EXPECT_NE(scalar.find("'descr': '<i2'"), std::string::npos);
  EXPECT_NE(scalar.find("'shape': ()"), std::string::npos);
  const std::string vec = *SerializeNpy(Literal::CreateR1<bool>({true, false}));
  EXPECT_NE(vec.find("'descr': '|b1'"), std::string::npos);
  EXPECT_NE(vec.find("'shape': (2,)"), std::string::npos);
  const std::string bf16 = *SerializeNpy(Literal(Shape(PrimitiveType::kBF16, {4})));
  EXPECT_NE(bf16.find("'descr': [('bfloat16', '<u2')]"), std::string::npos);
  const std::string f4 = *SerializeNpy(Literal(Shape(PrimitiveType::kF4E2M1FN, {4})));
  EXPECT_NE(f4.find("'descr': [('float4_e2m1fn', '|u1')]"), std::string::npos);
  const std::string u2 = *SerializeNpy(Literal(Shape(PrimitiveType::kU2, {4})));
  EXPECT_NE(u2.find("'descr': '|u1'"), std::string::npos);
}

TEST(NpyTest, AcceptsHeaderVariantsNumpyAccepts) {
  const std::string data(8, '\0');
  const std::string variants[] = {
      "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2,)}",
      "{'shape': (2,), 'fortran_order': False, 'descr': '<i4'}",
      "{'descr':'<i4','fortran_order':False,'shape':(2L,),}",
      "{'descr': '=i4', 'fortran_order': False, 'shape': (2,), }",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 2), }",
  };
  for (const std::string& header : variants) {
    StatusOr<Literal> parsed = ParseNpy(MakeNpy(header, data), "v.npy");
    EXPECT_TRUE(parsed.ok()) << header << ": " << parsed.status().message();
  }
  for (int major : {2, 3}) {
    StatusOr<Literal> parsed = ParseNpy(MakeNpy(Header("'<i4'", "(2,)"), data, major), "v.npy");
    EXPECT_TRUE(parsed.ok()) << "version " << major << ": " << parsed.status().message();
  }
}

TEST(NpyTest, RawBitsNeedAndUseTheExpectedType) {
  // What np.save writes for an ml_dtypes bfloat16 array: raw '<V2' bytes.
  const std::string file = MakeNpy(Header("'<V2'", "(1,)"), std::string("\x80\x3f", 2));
  NpyReadOptions bf16;
  bf16.element_type = PrimitiveType::kBF16;
  StatusOr<Literal> parsed = ParseNpy(file, "raw.npy", bf16);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->GetAsDouble(0), 1.0);
  // x.view(np.uint16) saved as '<u2' also works.
  EXPECT_TRUE(
      ParseNpy(MakeNpy(Header("'<u2'", "(1,)"), std::string("\x80\x3f", 2)), "u.npy", bf16).ok());
  // Sub-byte integers from int8 when they fit; pred bytes normalise to 0/1.
  NpyReadOptions s4;
  s4.element_type = PrimitiveType::kS4;
  StatusOr<Literal> ints = ParseNpy(MakeNpy(Header("'|i1'", "(2,)"), "\xf8\x07"), "i.npy", s4);
  ASSERT_TRUE(ints.ok());
  EXPECT_EQ(ints->ToString(), "s4[2] {-8, 7}");
  StatusOr<Literal> pred =
      ParseNpy(MakeNpy(Header("'|b1'", "(2,)"), std::string("\x02\x00", 2)), "b.npy");
  ASSERT_TRUE(pred.ok());
  EXPECT_EQ(pred->data<uint8_t>()[0], 1);
}

struct Malformed {
  const char* what;
  std::string contents;
  std::string message;                             ///< substring the error must contain
  PrimitiveType expected = PrimitiveType::kToken;  ///< kToken: no expected type
};

std::vector<Malformed> MalformedFiles() {
  const std::string f32x3(12, '\0');
  const std::string ok_header = Header("'<f4'", "(3,)");
  std::string deep(200, '[');
  return {
      {"empty file", "", "does not start with \"\\x93NUMPY\""},
      {"bad magic", "\x93NUMPZ\x01\x00\x10\x00" + std::string(16, ' '), "not a .npy file"},
      {"truncated preamble", "\x93NUMPY\x01", "ends inside the .npy preamble"},
      {"truncated v2 length", std::string("\x93NUMPY\x02\x00\x10\x00", 10),
       "ends inside the .npy preamble"},
      {"unknown version", std::string("\x93NUMPY\x04\x00\x00\x00", 10),
       "version 4.0 is not supported"},
      {"header past end", std::string("\x93NUMPY\x01\x00\xff\x00", 10) + "{}",
       "runs past the end of the file"},
      {"unterminated header", MakeNpy("{'descr': '<f4", ""), "header is not a Python literal"},
      {"header not a dict", MakeNpy("[1, 2]", ""), "header is a list, expected a dict"},
      {"missing key", MakeNpy("{'descr': '<f4', 'fortran_order': False}", ""),
       "header lacks a key"},
      {"extra key",
       MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", f32x3),
       "unexpected or repeated key"},
      {"repeated key",
       MakeNpy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", ""),
       "unexpected or repeated key"},
      {"unknown dtype", MakeNpy(Header("'<U10'", "(3,)"), f32x3), "unsupported dtype '<U10'"},
      {"object dtype", MakeNpy(Header("'|O'", "(3,)"), f32x3), "unsupported dtype '|O'"},
      {"long double", MakeNpy(Header("'<f16'", "(3,)"), f32x3), "unsupported dtype '<f16'"},
      {"big endian", MakeNpy(Header("'>f4'", "(3,)"), f32x3), "big-endian dtype '>f4'"},
      {"fortran order", MakeNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (3,)}", f32x3),
       "Fortran-order arrays are not supported"},
      {"fortran order not bool",
       MakeNpy("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}", f32x3),
       "'fortran_order' is not True or False"},
      {"negative dimension", MakeNpy(Header("'<f4'", "(-3,)"), f32x3), "non-negative integers"},
      {"shape not a tuple", MakeNpy(Header("'<f4'", "3"), f32x3),
       "'shape' is an integer, expected a tuple"},
      {"dimension overflows int64", MakeNpy(Header("'<f4'", "(99999999999999999999,)"), ""),
       "integer does not fit in 64 bits"},
      {"byte size overflows", MakeNpy(Header("'<f4'", "(4294967296, 4294967296)"), ""),
       "more bytes than a 64-bit size can count"},
      {"data too short", MakeNpy(ok_header, std::string(10, '\0')),
       "need 12 bytes of data but the file has 10"},
      {"data too long", MakeNpy(ok_header, std::string(13, '\0')),
       "need 12 bytes of data but the file has 13"},
      {"raw bytes of unknown type", MakeNpy(Header("'<V2'", "(1,)"), "ab"),
       "raw bytes of unknown type"},
      {"two-field structure", MakeNpy(Header("[('a', '<u2'), ('b', '<u2')]", "(1,)"), "abcd"),
       "structured dtypes are not supported"},
      {"structure of the wrong bits", MakeNpy(Header("[('bfloat16', '<f2')]", "(1,)"), "ab"),
       "expected the 2-byte unsigned integer"},
      {"structure of an unknown type", MakeNpy(Header("[('float7', '|u1')]", "(1,)"), "a"),
       "not an ml_dtypes type name"},
      {"deeply nested header", MakeNpy(deep, ""), "nested too deeply"},
      {"non-ASCII header", MakeNpy("{'descr': '<f\xc3\xa4'}", ""), "non-ASCII"},
      {"trailing garbage in header", MakeNpy(ok_header + " x", f32x3), "unexpected"},
      {"type mismatch", MakeNpy(ok_header, f32x3), "dtype '<f4' does not hold bf16 values",
       PrimitiveType::kBF16},
      {"s4 out of range", MakeNpy(Header("'|i1'", "(2,)"), "\x01\x09"),
       "element 1 is 9, outside the range of s4 [-8, 7]", PrimitiveType::kS4},
      {"f4 code too wide", MakeNpy(Header("[('float4_e2m1fn', '|u1')]", "(1,)"), "\x1f"),
       "not a 4-bit f4e2m1fn code"},
  };
}

TEST(NpyTest, MalformedFilesGiveErrorsNamingTheFile) {
  const std::vector<Malformed> cases = MalformedFiles();
  EXPECT_GE(cases.size(), 15u);
  for (const Malformed& c : cases) {
    NpyReadOptions options;
    if (c.expected != PrimitiveType::kToken) options.element_type = c.expected;
    StatusOr<Literal> parsed = ParseNpy(c.contents, "bad.npy", options);
    ASSERT_FALSE(parsed.ok()) << c.what;
    const std::string& message = parsed.status().message();
    EXPECT_EQ(message.rfind("bad.npy: error: ", 0), 0u) << c.what << ": " << message;
    EXPECT_NE(message.find(c.message), std::string::npos) << c.what << ": " << message;

    // The streaming reader reports the same error for the same bytes.
    const std::string path = TempPath("bad.npy");
    ASSERT_TRUE(WriteFileAtomically(path, c.contents).ok());
    StatusOr<Literal> read = ReadNpy(path, options);
    ASSERT_FALSE(read.ok()) << c.what;
    EXPECT_EQ(read.status().message(), path + message.substr(std::string("bad.npy").size()));
  }
}

TEST(NpyTest, SizeLimitIsCheckedBeforeReading) {
  NpyReadOptions options;
  options.max_bytes = 11;
  StatusOr<Literal> parsed =
      ParseNpy(MakeNpy(Header("'<f4'", "(3,)"), std::string(12, '\0')), "big.npy", options);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(parsed.status().message(), "big.npy: error: data of 12 bytes exceeds the limit of 11");
}

TEST(NpyTest, FileErrors) {
  StatusOr<Literal> missing = ReadNpy(TempPath("does_not_exist.npy"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("cannot open file"), std::string::npos);
  const std::string dir = TempPath("a_directory.npy");
  mkdir(dir.c_str(), 0700);
  StatusOr<Literal> directory = ReadNpy(dir);
  EXPECT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("not a regular file"), std::string::npos);
  EXPECT_FALSE(SerializeNpy(Literal::CreateToken()).ok());
  EXPECT_FALSE(WriteNpy(TempPath("tuple.npy"), Literal()).ok());
}

TEST(NpyTest, EmptyAndScalarArrays) {
  for (const Shape& shape : {Shape(PrimitiveType::kF64, {}), Shape(PrimitiveType::kF64, {0}),
                             Shape(PrimitiveType::kS32, {3, 0, 2})}) {
    const Literal original(shape);
    StatusOr<Literal> parsed = ParseNpy(*SerializeNpy(original), "e.npy");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(*parsed, original);
  }
}

}  // namespace
}  // namespace tpusim::value
