// Einsum. Expected values and messages from TF 2.21 (tf.raw_ops.Einsum on CPU);
// inputs are 0, 1, 2, ... in row-major order unless a case says otherwise.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::DimsOf;
using testing::Filled;
using testing::Iota;
using testing::OpTester;
using testing::Values;
using Dims = std::vector<int64_t>;

const KernelRegistry &Registry() { return testing::TestKernelRegistry(RegisterEinsumKernels); }

absl::StatusOr<Tensor> Einsum(const std::string &equation, const std::vector<Tensor> &inputs) {
  OpTester tester("Einsum", Registry());
  tester.Attr("equation", equation.c_str())
      .Attr("N", static_cast<int64_t>(inputs.size()))
      .Attr("T", inputs[0].dtype());
  for (const Tensor &t : inputs) tester.Input(t);
  return tester.RunOne();
}

std::string ErrorOf(const absl::StatusOr<Tensor> &result,
                    absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == code);
  return std::string(result.status().message());
}

struct Case {
  std::string equation;
  std::vector<Dims> inputs;
  Dims out;
  std::vector<float> values;
};

// Every feature on float: matmul in each transpose layout, batch matmul,
// ellipses of different ranks with size-1 broadcasting, outer products,
// transposes, diagonals, sums within one operand (alone and before a
// contraction), inflation, empty dims.
const std::vector<Case> &Cases() {
  static const auto *cases = new std::vector<Case>{
      {"ij,jk->ik", {{2, 3}, {3, 4}}, {2, 4}, {20, 23, 26, 29, 56, 68, 80, 92}},
      {"ij,kj->ik", {{2, 3}, {4, 3}}, {2, 4}, {5, 14, 23, 32, 14, 50, 86, 122}},
      {"ji,jk->ik", {{3, 2}, {3, 4}}, {2, 4}, {40, 46, 52, 58, 52, 61, 70, 79}},
      {"ji,kj->ki", {{3, 2}, {4, 3}}, {4, 2}, {10, 13, 28, 40, 46, 67, 64, 94}},
      {"bij,bjk->bik", {{2, 2, 3}, {2, 3, 2}}, {2, 2, 2}, {10, 13, 28, 40, 172, 193, 244, 274}},
      {"...ij,...jk->...ik",
       {{2, 1, 2, 3}, {3, 3, 2}},
       {2, 3, 2, 2},
       {10, 13, 28, 40, 28,  31,  100, 112, 46,  49,  172, 184,
        46, 67, 64, 94, 172, 193, 244, 274, 298, 319, 424, 454}},
      {"...i,...i->...", {{2, 1, 3}, {5, 3}}, {2, 5}, {5, 14, 23, 32, 41, 14, 50, 86, 122, 158}},
      {"b...ij,bjk->b...ik",
       {{2, 1, 2, 3}, {2, 3, 2}},
       {2, 1, 2, 2},
       {10, 13, 28, 40, 172, 193, 244, 274}},
      {"i,j->ij", {{2}, {3}}, {2, 3}, {0, 0, 0, 0, 1, 2}},
      {"ij,k->kji", {{2, 2}, {3}}, {3, 2, 2}, {0, 0, 0, 0, 0, 2, 1, 3, 0, 4, 2, 6}},
      {"ij->ji", {{2, 3}}, {3, 2}, {0, 3, 1, 4, 2, 5}},
      {"ii->i", {{3, 3}}, {3}, {0, 4, 8}},
      {"ii->", {{3, 3}}, {}, {12}},
      {"ij->", {{2, 3}}, {}, {15}},
      {"ij->j", {{2, 3}}, {3}, {3, 5, 7}},
      {"ijk,jl->il", {{2, 3, 4}, {3, 2}}, {2, 2}, {196, 262, 484, 694}},
      {"i->ii", {{3}}, {3, 3}, {0, 0, 0, 0, 1, 0, 0, 0, 2}},
      {"...ii->...i", {{2, 3, 3}}, {2, 3}, {0, 4, 8, 9, 13, 17}},
      {"bi,bi->b", {{2, 3}, {2, 3}}, {2}, {5, 50}},
      {"ij,ij->ij", {{2, 3}, {2, 3}}, {2, 3}, {0, 1, 4, 9, 16, 25}},
      {"iij,jk->ik", {{2, 2, 3}, {3, 2}}, {2, 2}, {10, 13, 64, 94}},
      {"abc,cd->dba",
       {{2, 3, 4}, {4, 2}},
       {2, 3, 2},
       {28, 172, 76, 220, 124, 268, 34, 226, 98, 290, 162, 354}},
      {"ij,jk->ki", {{2, 3}, {3, 2}}, {2, 2}, {10, 28, 13, 40}},
      {"i...->...", {{2, 3, 2}}, {3, 2}, {6, 8, 10, 12, 14, 16}},
      {"ij,->ij", {{2, 3}, {}}, {2, 3}, {0, 0, 0, 0, 0, 0}},
      {"ij->ii", {{2, 2}}, {2, 2}, {1, 0, 0, 5}},
      {"ijji->ij", {{2, 3, 3, 2}}, {2, 3}, {0, 8, 16, 19, 27, 35}},
      {"ij,jk->ik", {{2, 0}, {0, 3}}, {2, 3}, {0, 0, 0, 0, 0, 0}},
      {"ij,jk->ik", {{0, 3}, {3, 4}}, {0, 4}, {}},
      {"ij->i", {{2, 0}}, {2}, {0, 0}},
      {"...i,...i->...", {{0, 3}, {1, 3}}, {0}, {}},
  };
  return *cases;
}

TEST_CASE("Einsum computes TF's results on float", "[kernels][einsum]") {
  for (const Case &c : Cases()) {
    INFO(c.equation);
    std::vector<Tensor> inputs;
    for (const Dims &d : c.inputs) inputs.push_back(Iota<float>(d));
    auto out = Einsum(c.equation, inputs);
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == c.out);
    CHECK(Values<float>(*out) == c.values);
  }
}

TEST_CASE("Einsum on double, int32, int64, half and bfloat16", "[kernels][einsum]") {
  for (const Case &c : Cases()) {
    INFO(c.equation);
    std::vector<Tensor> d, i32, i64;
    for (const Dims &dims : c.inputs) {
      d.push_back(Iota<double>(dims));
      i32.push_back(Iota<int32_t>(dims));
      i64.push_back(Iota<int64_t>(dims));
    }
    auto out_d = Einsum(c.equation, d);
    auto out_i32 = Einsum(c.equation, i32);
    auto out_i64 = Einsum(c.equation, i64);
    REQUIRE(out_d.ok());
    REQUIRE(out_i32.ok());
    REQUIRE(out_i64.ok());
    CHECK(Values<double>(*out_d) == std::vector<double>(c.values.begin(), c.values.end()));
    CHECK(Values<int32_t>(*out_i32) == std::vector<int32_t>(c.values.begin(), c.values.end()));
    CHECK(Values<int64_t>(*out_i64) == std::vector<int64_t>(c.values.begin(), c.values.end()));
  }
  auto frac = Einsum("ij,jk->ik", {Filled<double>({2, 2}, {0.5, 1.25, 2, -3}),
                                   Filled<double>({2, 2}, {1.5, 2, 0.25, -1})});
  REQUIRE(frac.ok());
  CHECK(Values<double>(*frac) == std::vector<double>{1.0625, -0.25, 2.25, 7.0});
  // Integers wrap as TF's do: 2^40 * 2^30 is 0 modulo 2^64.
  auto wide = Einsum("ij,jk->ik", {Filled<int64_t>({1, 2}, {int64_t{1} << 40, 3}),
                                   Filled<int64_t>({2, 1}, {int64_t{1} << 30, 5})});
  REQUIRE(wide.ok());
  CHECK(Values<int64_t>(*wide) == std::vector<int64_t>{15});
  auto trace = Einsum("ii->", {Filled<int32_t>({2, 2}, {2147483647, 0, 0, 5})});
  REQUIRE(trace.ok());
  CHECK(Values<int32_t>(*trace) == std::vector<int32_t>{-2147483644});
  auto product = Einsum("ij,jk->ik", {Filled<int32_t>({1, 3}, {60000, 60000, 60000}),
                                      Filled<int32_t>({3, 1}, {60000, 60000, 60000})});
  REQUIRE(product.ok());
  CHECK(Values<int32_t>(*product) == std::vector<int32_t>{-2084901888});

  // Half and bfloat16 in float: exact for these small integers.
  for (const char *eq : {"ij,jk->ik", "ij->j", "ij->ji"}) {
    INFO(eq);
    const bool two = std::string(eq).find(',') != std::string::npos;
    std::vector<Tensor> h, b;
    h.push_back(Filled<Half>({2, 3}, [] {
      std::vector<Half> v;
      for (int i = 0; i < 6; ++i) v.push_back(Half::FromFloat(i));
      return v;
    }()));
    b.push_back(Filled<Bfloat16>({2, 3}, [] {
      std::vector<Bfloat16> v;
      for (int i = 0; i < 6; ++i) v.push_back(Bfloat16::FromFloat(i));
      return v;
    }()));
    if (two) {
      std::vector<Half> hv;
      std::vector<Bfloat16> bv;
      for (int i = 0; i < 12; ++i) {
        hv.push_back(Half::FromFloat(i));
        bv.push_back(Bfloat16::FromFloat(i));
      }
      h.push_back(Filled<Half>({3, 4}, hv));
      b.push_back(Filled<Bfloat16>({3, 4}, bv));
    }
    auto out_h = Einsum(eq, h);
    auto out_b = Einsum(eq, b);
    REQUIRE(out_h.ok());
    REQUIRE(out_b.ok());
    std::vector<float> got_h, got_b;
    for (Half v : Values<Half>(*out_h)) got_h.push_back(v.ToFloat());
    for (Bfloat16 v : Values<Bfloat16>(*out_b)) got_b.push_back(v.ToFloat());
    const std::vector<float> want = two ? std::vector<float>{20, 23, 26, 29, 56, 68, 80, 92}
                                    : std::string(eq) == "ij->j"
                                        ? std::vector<float>{3, 5, 7}
                                        : std::vector<float>{0, 3, 1, 4, 2, 5};
    CHECK(got_h == want);
    CHECK(got_b == want);
  }
}

TEST_CASE("Einsum on the pool matches a direct sum", "[kernels][einsum]") {
  // 8 batches of 64x96x80 products, rhs transposed, and a reduce before the
  // product.
  const Tensor x = Iota<float>({8, 64, 96, 3});
  std::vector<float> yv(8 * 80 * 96);
  for (size_t i = 0; i < yv.size(); ++i) yv[i] = static_cast<float>(i % 7) - 3;
  const Tensor y = Filled<float>({8, 80, 96}, yv);
  auto out = Einsum("bikr,bjk->bij", {x, y});
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{8, 64, 80});
  const std::vector<float> got = Values<float>(*out);
  int bad = 0;
  for (int b = 0; b < 8; ++b) {
    for (int i = 0; i < 64; i += 7) {
      for (int j = 0; j < 80; j += 5) {
        double want = 0;
        for (int k = 0; k < 96; ++k) {
          const double xs = 3.0 * (((b * 64 + i) * 96 + k) * 3) + 3;  // sum over r
          want += xs * yv[(b * 80 + j) * 96 + k];
        }
        bad += std::abs(got[(b * 64 + i) * 80 + j] - want) > 1e-5 * std::abs(want) + 1e-3;
      }
    }
  }
  CHECK(bad == 0);
}

TEST_CASE("Einsum rejects bad equations and shapes in TF's words", "[kernels][einsum]") {
  const Tensor a = Iota<float>({2, 3});
  const Tensor b = Iota<float>({3, 4});
  CHECK(ErrorOf(Einsum("ij,jk", {a, b})) ==
        "Einsum: Expecting exactly one '->' in einsum equation: ij,jk");
  CHECK(ErrorOf(Einsum("ij,jk->ik->", {a, b})) ==
        "Einsum: Expecting exactly one '->' in einsum equation: ij,jk->ik->");
  CHECK(ErrorOf(Einsum("ij,jk,kl->il", {a, b, b})) ==
        "Einsum: Expecting 1 or 2 input subscripts in equation 'ij,jk,kl->il' "
        "but got: 3");
  CHECK(ErrorOf(Einsum("ij->", {a, a})) == "Einsum: Expected 1 inputs but got: 2");
  CHECK(ErrorOf(Einsum("ijk->ij", {a})) == "Einsum: Expected input 0 to have rank 3 but got: 2");
  CHECK(ErrorOf(Einsum("...ijk->...", {Iota<float>({2})})) ==
        "Einsum: Expected input 0 to have rank at least 3 but got: 1");
  CHECK(ErrorOf(Einsum("ij,jk->ik", {a, a})) ==
        "Einsum: Expected dimension 3 at axis 0 of the input shaped [2,3] but "
        "got dimension 2");
  CHECK(ErrorOf(Einsum("ii->i", {a})) ==
        "Einsum: Expected dimension 2 at axis 1 of the input shaped [2,3] but "
        "got dimension 3");
  CHECK(ErrorOf(Einsum("...ij,...jk->...ik", {Iota<float>({2, 2, 3}), Iota<float>({3, 3, 4})})) ==
        "Einsum: Invalid broadcasting dimensions: [2,2,3] vs. [3,3,4]");
  CHECK(ErrorOf(Einsum("...ij->ij", {Iota<float>({2, 2, 3})})) ==
        "Einsum: Output contains 1 broadcasting dimension(s) but no ellipsis "
        "(...) was found in "
        "the output subscripts.");
  CHECK(ErrorOf(Einsum("i.j->ij", {a})) ==
        "Einsum: Output contains 1 broadcasting dimension(s) but no ellipsis "
        "(...) was found in "
        "the output subscripts.");
  CHECK(ErrorOf(Einsum("iiabcdef->", {Iota<float>({1, 1, 1, 1, 1, 1, 1, 1})}),
                absl::StatusCode::kUnimplemented) ==
        "Einsum: Unsupported rank: 7 while handling repeated indices. Up to "
        "rank 6 is supported.");
  // TF's kernel aborts on this; its graph shape function's words.
  CHECK(ErrorOf(Einsum("ij->ijk", {a})) ==
        "Einsum: Einsum output subscripts for equation 'ij->ijk' has label 'k' "
        "which is not "
        "present in the input subscripts");
  // Eight labels are fine without repeats.
  auto eight = Einsum("abcdefgi,abcdefgi->", {Filled<float>({1, 1, 1, 1, 1, 1, 1, 1}, {1}),
                                              Filled<float>({1, 1, 1, 1, 1, 1, 1, 1}, {1})});
  REQUIRE(eight.ok());
  CHECK(Values<float>(*eight) == std::vector<float>{1});
}

}  // namespace
}  // namespace dflow
