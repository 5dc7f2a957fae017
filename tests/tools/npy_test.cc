// .npy reading and writing: NumPy's layout byte for byte, every supported descr, and
// malformed files that must give errors, never crashes.
#include "tools/npy.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"

namespace dflow {
namespace {

Allocator* TestAllocator() {
  static CpuAllocator* allocator = new CpuAllocator();
  return allocator;
}

// A .npy file with `dict` as its header (padded like NumPy) and `data` after it.
std::string NpyBytes(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  const uint32_t length = static_cast<uint32_t>(header.size());
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out.push_back(static_cast<char>(length >> (8 * i)));
  return out + header + data;
}

template <typename T>
std::string Raw(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(&out[0], values.data(), out.size());
  return out;
}

std::string ParseError(const std::string& bytes) {
  absl::StatusOr<Tensor> t = ParseNpy(bytes, TestAllocator());
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(t.status().message());
}

template <typename T>
void CheckRoundTrip(DataType dtype, std::vector<T> values, std::vector<int64_t> dims) {
  Tensor t = *Tensor::Allocate(TestAllocator(), dtype, TensorShape(dims));
  for (size_t i = 0; i < values.size(); ++i) t.flat<T>()[i] = values[i];
  absl::StatusOr<std::string> bytes = SerializeNpy(t);
  REQUIRE(bytes.ok());
  absl::StatusOr<Tensor> back = ParseNpy(*bytes, TestAllocator());
  INFO(back.status().ToString());
  REQUIRE(back.ok());
  CHECK(back->dtype() == dtype);
  CHECK(back->shape() == t.shape());
  for (size_t i = 0; i < values.size(); ++i) CHECK(back->flat<T>()[i] == values[i]);
}

TEST_CASE("Every supported dtype round-trips through .npy", "[tools][npy]") {
  CheckRoundTrip<float>(DT_FLOAT, {1.5f, -2, 3e30f, 0}, {2, 2});
  CheckRoundTrip<double>(DT_DOUBLE, {0.1, -1e300}, {2});
  CheckRoundTrip<int8_t>(DT_INT8, {-128, 127}, {2});
  CheckRoundTrip<uint8_t>(DT_UINT8, {0, 255, 7}, {3});
  CheckRoundTrip<int16_t>(DT_INT16, {-32768, 1}, {1, 2});
  CheckRoundTrip<uint16_t>(DT_UINT16, {65535}, {1});
  CheckRoundTrip<int32_t>(DT_INT32, {5}, {});
  CheckRoundTrip<int64_t>(DT_INT64, {INT64_MIN, INT64_MAX, 9007199254740993LL}, {3});
  CheckRoundTrip<uint32_t>(DT_UINT32, {4000000000u}, {1, 1, 1});
  CheckRoundTrip<uint64_t>(DT_UINT64, {UINT64_MAX}, {1});
  CheckRoundTrip<bool>(DT_BOOL, {true, false, true}, {3});
  CheckRoundTrip<float>(DT_FLOAT, {}, {0, 3});
}

// The bits of a half or bfloat16 tensor.
std::vector<uint16_t> Bits(const Tensor& t) {
  const auto* data = static_cast<const uint16_t*>(t.raw_data());
  return std::vector<uint16_t>(data, data + t.NumElements());
}

TEST_CASE("float16 .npy files read and write as numpy.save's", "[tools][npy][half]") {
  // numpy.save(f, np.array([[1.5, -2], [65504, 0.1]], np.float16)), byte for byte.
  const std::string numpy_file =
      NpyBytes("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }",
               std::string("\x00\x3e\x00\xc0\xff\x7b\x66\x2e", 8));
  REQUIRE(numpy_file.size() == 136);
  absl::StatusOr<Tensor> t = ParseNpy(numpy_file, TestAllocator());
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  CHECK(t->dtype() == DT_HALF);
  CHECK(t->shape() == TensorShape({2, 2}));
  CHECK(Bits(*t) == std::vector<uint16_t>{0x3e00, 0xc000, 0x7bff, 0x2e66});
  CHECK(t->flat<Half>()[0].ToFloat() == 1.5f);
  CHECK(*SerializeNpy(*t) == numpy_file);
  CHECK(*NpyDescr(DT_HALF) == "<f2");
  // Big-endian float16 is byte-swapped like the other types.
  absl::StatusOr<Tensor> big = ParseNpy(
      NpyBytes("{'descr': '>f2', 'fortran_order': False, 'shape': (1,), }",
               std::string("\x3e\x00", 2)),
      TestAllocator());
  REQUIRE(big.ok());
  CHECK(Bits(*big) == std::vector<uint16_t>{0x3e00});
}

TEST_CASE("bfloat16 reads from and writes as ml_dtypes' '<V2' files", "[tools][npy][half]") {
  // numpy.save(f, np.array([1.5, -2, 3e38, 0.1], ml_dtypes.bfloat16)), byte for byte.
  const std::string ml_dtypes_file =
      NpyBytes("{'descr': '<V2', 'fortran_order': False, 'shape': (4,), }",
               std::string("\xc0\x3f\x00\xc0\x62\x7f\xcd\x3d", 8));
  absl::StatusOr<Tensor> t = ParseNpy(ml_dtypes_file, TestAllocator());
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  CHECK(t->dtype() == DT_BFLOAT16);
  CHECK(Bits(*t) == std::vector<uint16_t>{0x3fc0, 0xc000, 0x7f62, 0x3dcd});
  CHECK(*SerializeNpy(*t) == ml_dtypes_file);
  // NumPy's own spelling of a 2-byte void reads the same; other void sizes do not.
  absl::StatusOr<Tensor> plain_void = ParseNpy(
      NpyBytes("{'descr': '|V2', 'fortran_order': False, 'shape': (1,), }", "\x80\x3f"),
      TestAllocator());
  REQUIRE(plain_void.ok());
  CHECK(plain_void->dtype() == DT_BFLOAT16);
  CHECK(Bits(*plain_void) == std::vector<uint16_t>{0x3f80});
  CHECK_THAT(ParseError(NpyBytes("{'descr': '|V4', 'fortran_order': False, 'shape': (1,), }",
                                 "abcd")),
             Catch::Contains("not supported"));
}

TEST_CASE("Written headers follow numpy.save's layout", "[tools][npy]") {
  Tensor t = *Tensor::Allocate(TestAllocator(), DT_FLOAT, TensorShape({3}));
  std::string bytes = *SerializeNpy(t);
  REQUIRE(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
  CHECK((10 + header_len) % 64 == 0);
  CHECK(bytes[10 + header_len - 1] == '\n');
  CHECK(bytes.size() == 10 + header_len + 12);
  const std::string header = bytes.substr(10, header_len);
  CHECK(absl::StartsWith(header, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"));
  Tensor scalar = *Tensor::Allocate(TestAllocator(), DT_BOOL, TensorShape({}));
  scalar.scalar<bool>() = true;  // serialising reads the value: never an uninitialised bool
  CHECK_THAT(*SerializeNpy(scalar), Catch::Contains("'descr': '|b1'"));
  CHECK_THAT(*SerializeNpy(scalar), Catch::Contains("'shape': ()"));
  Tensor matrix = *Tensor::Allocate(TestAllocator(), DT_INT64, TensorShape({2, 3}));
  for (int64_t& v : matrix.flat<int64_t>()) v = 0;
  CHECK_THAT(*SerializeNpy(matrix), Catch::Contains("'shape': (2, 3)"));
}

TEST_CASE("Versions 2.0 and 3.0 and other header spellings are read", "[tools][npy]") {
  const std::string data = Raw<int32_t>({1, 2, 3, 4, 5, 6});
  for (int major : {1, 2, 3}) {
    absl::StatusOr<Tensor> t = ParseNpy(
        NpyBytes("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", data, major),
        TestAllocator());
    INFO(major << ": " << t.status().ToString());
    REQUIRE(t.ok());
    CHECK(t->shape() == TensorShape({2, 3}));
    CHECK(t->flat<int32_t>()[5] == 6);
  }
  absl::StatusOr<Tensor> t = ParseNpy(
      NpyBytes("{\"shape\":(6,),\"fortran_order\":False,\"descr\":\"=i4\"}", data),
      TestAllocator());
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  CHECK(t->shape() == TensorShape({6}));
  t = ParseNpy(NpyBytes("{'descr': '<u1', 'fortran_order': False, 'shape': (2L,)}", "ab"),
               TestAllocator());
  REQUIRE(t.ok());
  CHECK(t->dtype() == DT_UINT8);
}

TEST_CASE("Big-endian arrays are byte-swapped", "[tools][npy]") {
  const std::string data("\x00\x00\x01\x02\xff\xff\xff\xfe", 8);
  absl::StatusOr<Tensor> t = ParseNpy(
      NpyBytes("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", data),
      TestAllocator());
  REQUIRE(t.ok());
  CHECK(t->flat<int32_t>()[0] == 0x0102);
  CHECK(t->flat<int32_t>()[1] == -2);
}

TEST_CASE("Bool bytes other than 0 and 1 read as true", "[tools][npy]") {
  absl::StatusOr<Tensor> t = ParseNpy(
      NpyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
               std::string("\x00\x01\x07", 3)),
      TestAllocator());
  REQUIRE(t.ok());
  CHECK(t->flat<bool>()[0] == false);
  CHECK(t->flat<bool>()[2] == true);
}

TEST_CASE("NumPy byte and unicode strings read as DT_STRING, NULs stripped", "[tools][npy]") {
  // np.save of np.array([b'ab', b'c']) and np.array(['hé', 'x']).
  auto bytes = ParseNpy(NpyBytes("{'descr': '|S2', 'fortran_order': False, 'shape': (2,), }",
                                 std::string("abc\0", 4)),
                        TestAllocator());
  REQUIRE(bytes.ok());
  CHECK(bytes->dtype() == DT_STRING);
  CHECK(bytes->template data<std::string>()[0] == "ab");
  CHECK(bytes->template data<std::string>()[1] == "c");
  auto text = ParseNpy(
      NpyBytes("{'descr': '<U2', 'fortran_order': False, 'shape': (2, 1), }",
               std::string("h\0\0\0\xe9\0\0\0x\0\0\0\0\0\0\0", 16)),
      TestAllocator());
  REQUIRE(text.ok());
  CHECK(text->shape().dim_size(0) == 2);
  CHECK(text->template data<std::string>()[0] == "h\xc3\xa9");  // UTF-8
  CHECK(text->template data<std::string>()[1] == "x");
  // A string array whose data is short is refused like any other.
  CHECK(ParseNpy(NpyBytes("{'descr': '|S4', 'fortran_order': False, 'shape': (2,), }", "abcd"),
                 TestAllocator())
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("Malformed .npy files are INVALID_ARGUMENT saying why", "[tools][npy]") {
  const std::string four = Raw<float>({1, 2, 3, 4});
  auto with = [&](const std::string& dict) { return NpyBytes(dict, four); };
  CHECK_THAT(ParseError(""), Catch::Contains("magic"));
  CHECK_THAT(ParseError("PK\x03\x04 not npy"), Catch::Contains("magic"));
  CHECK_THAT(ParseError(std::string("\x93NUMPY\x04\x00", 8)), Catch::Contains("version"));
  CHECK_THAT(ParseError(std::string("\x93NUMPY\x01\x00\xff", 9)), Catch::Contains("header"));
  CHECK_THAT(ParseError(std::string("\x93NUMPY\x01\x00\xff\xff{}", 12)),
             Catch::Contains("past the end"));
  CHECK_THAT(ParseError(with("{'descr': '<f4', 'fortran_order': True, 'shape': (4,), }")),
             Catch::Contains("Fortran"));
  CHECK_THAT(ParseError(with("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }")),
             Catch::Contains("not supported"));
  CHECK_THAT(ParseError(with("{'descr': '|O8', 'fortran_order': False, 'shape': (1,), }")),
             Catch::Contains("not supported"));  // pickled objects
  CHECK_THAT(ParseError(with("{'descr': '>U1', 'fortran_order': False, 'shape': (1,), }")),
             Catch::Contains("not supported"));
  CHECK_THAT(ParseError(with("{'descr': '|f4', 'fortran_order': False, 'shape': (4,), }")),
             Catch::Contains("not supported"));
  CHECK_THAT(ParseError(with("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,)}")),
             Catch::Contains("structured"));
  CHECK_THAT(ParseError(with("{'descr': '<f4', 'shape': (4,), }")), Catch::Contains("keys"));
  CHECK_THAT(ParseError(with("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}")),
             Catch::Contains("unsupported value"));
  CHECK_THAT(ParseError(with("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': ()}")),
             Catch::Contains("unexpected key"));
  CHECK_THAT(ParseError(with("{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }")),
             Catch::Contains("non-negative"));
  CHECK_THAT(ParseError(with("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }")),
             Catch::Contains("needs 20"));
  CHECK_THAT(ParseError(with("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }")),
             Catch::Contains("needs 12"));
  CHECK_THAT(ParseError(with("{'descr': '<f4', 'fortran_order': False, "
                             "'shape': (99999999999, 99999999999, 99999999999), }")),
             Catch::Contains("malformed"));
  CHECK_THAT(ParseError(with("{'descr': '<f4', 'fortran_order': False, "
                             "'shape': (99999999999999999999999,), }")),
             Catch::Contains("too large"));
  CHECK_THAT(ParseError(with("{'descr': '<f4', 'fortran_order': False, 'shape': (4,)")),
             Catch::Contains("malformed"));
  CHECK_THAT(ParseError(with("{'descr': '<f4', 'fortran_order': False, 'shape': (4,)} x")),
             Catch::Contains("after the dict"));
  CHECK_THAT(ParseError(with("{'descr: '<f4'}")), Catch::Contains("malformed"));
}

TEST_CASE("Random corruptions of a valid file never crash", "[tools][npy]") {
  Tensor t = *Tensor::Allocate(TestAllocator(), DT_FLOAT, TensorShape({2, 3}));
  const std::string good = *SerializeNpy(t);
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bytes = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % bytes.size();
      switch (rng() % 3) {
        case 0: bytes[at] = static_cast<char>(rng()); break;
        case 1: bytes.resize(at); break;
        default: bytes.insert(at, 1, static_cast<char>(rng())); break;
      }
      if (bytes.empty()) break;
    }
    absl::StatusOr<Tensor> parsed = ParseNpy(bytes, TestAllocator());
    if (parsed.ok()) CHECK(parsed->TotalBytes() <= bytes.size());
  }
}

TEST_CASE("Files are read and written; missing files are NOT_FOUND", "[tools][npy]") {
  CHECK(ReadNpyFile("/nonexistent/x.npy", TestAllocator()).status().code() ==
        absl::StatusCode::kNotFound);
  Tensor t = *Tensor::Allocate(TestAllocator(), DT_STRING, TensorShape({1}));
  CHECK(SerializeNpy(t).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(NpyDescr(DT_COMPLEX64).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(*NpyDescr(DT_UINT8) == "|u1");
  CHECK(*NpyDescr(DT_INT64) == "<i8");
}

}  // namespace
}  // namespace dflow
