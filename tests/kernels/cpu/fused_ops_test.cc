// _FusedMatMul and _FusedConv2D (graph/fusion.h's rewrites) against the unfused kernels
// they replace, run here one after another (same numbers within 1e-5), plus the
// convolutions that run as a matrix product, packed weights over repeated runs, and the
// errors.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "graph/constant_inputs.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/kernels/cpu/conv_test_util.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::CheckNear;
using testing::Filled;
using testing::IntList;
using testing::KernelRunner;
using testing::OpTester;
using testing::RandomValues;
using testing::StringAttr;
using testing::Values;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterCpuKernels); }

AttrValue Strings(const std::vector<std::string>& values) {
  AttrValue v;
  v.mutable_list();
  for (const std::string& s : values) v.mutable_list()->add_s(s);
  return v;
}

Tensor Random(std::vector<int64_t> shape, uint32_t seed) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return Filled<float>(shape, RandomValues(count, seed));
}

Tensor RunOp(OpTester& tester) {
  absl::StatusOr<Tensor> out = tester.RunOne();
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return *std::move(out);
}

// Applies the unfused ops after `product`: BiasAdd, then the activation if any.
Tensor Unfused(const Tensor& product, const Tensor& bias, const std::string& activation,
               const char* format = "NHWC") {
  OpTester bias_add("BiasAdd", Registry());
  bias_add.Attr("T", DT_FLOAT).Attr("data_format", format).Input(product).Input(bias);
  Tensor biased = RunOp(bias_add);
  if (activation.empty()) return biased;
  OpTester act(activation, Registry());
  act.Attr("T", DT_FLOAT).Input(biased);
  return RunOp(act);
}

std::vector<std::string> FusedOps(const std::string& activation) {
  if (activation.empty()) return {"BiasAdd"};
  return {"BiasAdd", activation};
}

struct MatMulCase {
  int64_t m, k, n;
  bool ta = false, tb = false;
};

TEST_CASE("_FusedMatMul equals MatMul, BiasAdd and the activation", "[fused][matmul]") {
  const MatMulCase c = GENERATE(MatMulCase{7, 5, 3}, MatMulCase{37, 50, 23, true, false},
                                MatMulCase{37, 50, 23, false, true},
                                MatMulCase{37, 50, 23, true, true},
                                MatMulCase{64, 784, 512},  // the MLP layer, sharded on 2 threads
                                MatMulCase{65, 300, 70, false, true},
                                // Few rows and weights of 1 MiB or more: column blocks
                                // of 192 + 138 (and 320 + 200).
                                MatMulCase{32, 800, 330, true, true},
                                // Few rows, smaller weights: row blocks.
                                MatMulCase{32, 300, 330, true, true},
                                MatMulCase{16, 600, 520, false, true},
                                // One row (a batch of 1): column blocks over the 2 threads.
                                MatMulCase{1, 2000, 600}, MatMulCase{1, 900, 700, true, true});
  const std::string activation = GENERATE(std::string(), std::string("Relu"),
                                          std::string("Relu6"));
  INFO(c.m << "x" << c.k << "x" << c.n << " ta=" << c.ta << " tb=" << c.tb << " " << activation);
  Tensor a = Random(c.ta ? std::vector<int64_t>{c.k, c.m} : std::vector<int64_t>{c.m, c.k}, 1);
  Tensor b = Random(c.tb ? std::vector<int64_t>{c.n, c.k} : std::vector<int64_t>{c.k, c.n}, 2);
  // Scaled so that Relu6 clips some outputs.
  std::vector<float> scaled = Values<float>(a);
  for (float& v : scaled) v *= 8.0f;
  a = Filled<float>(testing::DimsOf(a), scaled);
  Tensor bias = Random({c.n}, 3);
  OpTester matmul("MatMul", Registry());
  matmul.Attr("T", DT_FLOAT).Attr("transpose_a", c.ta).Attr("transpose_b", c.tb).Input(a).Input(b);
  const Tensor want = Unfused(RunOp(matmul), bias, activation);
  OpTester fused("_FusedMatMul", Registry());
  fused.Attr("T", DT_FLOAT)
      .Attr("transpose_a", c.ta)
      .Attr("transpose_b", c.tb)
      .Attr("num_args", 1)
      .Attr("fused_ops", Strings(FusedOps(activation)))
      .Input(a)
      .Input(b)
      .Input(bias);
  const Tensor got = RunOp(fused);
  CHECK(testing::DimsOf(got) == testing::DimsOf(want));
  // Sums of hundreds of terms up to 8 in magnitude, added in another order, differ by
  // float ulps of the terms, and how many depends on the blocking the GEMM picks for the
  // CPU: on AVX-512 1e-5 held up to k = 300, on an AVX2 EPYC k = 300 differs by 1.7e-5.
  // The worst case grows with k (k * 2^-24 * 8 per unit of b), so the bound does too.
  CheckNear(Values<float>(got), Values<float>(want), c.k > 300 ? 2e-4 : 1e-4);
}

NodeDef FusedMatMulNode(bool constant_weights, bool transpose_b = false) {
  NodeDef node;
  node.set_name("fc");
  node.set_op("_FusedMatMul");
  AttrValue t;
  t.set_type(DT_FLOAT);
  (*node.mutable_attr())["T"] = t;
  AttrValue one;
  one.set_i(1);
  (*node.mutable_attr())["num_args"] = one;
  (*node.mutable_attr())["fused_ops"] = Strings({"BiasAdd", "Relu"});
  if (constant_weights) (*node.mutable_attr())[kConstantInputsAttr] = IntList({1});
  if (transpose_b) {
    AttrValue yes;
    yes.set_b(true);
    (*node.mutable_attr())["transpose_b"] = yes;
  }
  return node;
}

// The reference for one run: MatMul, BiasAdd, Relu unfused.
std::vector<float> Reference(const Tensor& a, const Tensor& b, const Tensor& bias,
                             bool transpose_b = false) {
  OpTester matmul("MatMul", Registry());
  matmul.Attr("T", DT_FLOAT).Attr("transpose_b", transpose_b).Input(a).Input(b);
  return Values<float>(Unfused(RunOp(matmul), bias, "Relu"));
}

TEST_CASE("_FusedMatMul sees weights updated in place and reuses constant ones",
          "[fused][matmul]") {
  Tensor a = Random({64, 100}, 4);
  Tensor b = Random({100, 48}, 5);
  Tensor bias = Random({48}, 6);
  SECTION("weights that are not constant: new values in the same buffer are used") {
    KernelRunner kernel(FusedMatMulNode(false), Registry());
    absl::StatusOr<Tensor> first = kernel.Run({a, b, bias});
    REQUIRE(first.ok());
    CheckNear(Values<float>(*first), Reference(a, b, bias), 1e-5);
    for (float& v : b.flat<float>()) v = -v;  // in place, as Assign does to a variable
    absl::StatusOr<Tensor> second = kernel.Run({a, b, bias});
    REQUIRE(second.ok());
    CheckNear(Values<float>(*second), Reference(a, b, bias), 1e-5);
  }
  SECTION("weights split in column blocks: new values in the same buffer are used") {
    Tensor rows = Random({32, 900}, 7);
    Tensor wide = Random({900, 320}, 8);  // 2 shards of 16 rows: blocks of 192 + 128 columns
    Tensor wide_bias = Random({320}, 9);
    KernelRunner kernel(FusedMatMulNode(false), Registry());
    absl::StatusOr<Tensor> first = kernel.Run({rows, wide, wide_bias});
    REQUIRE(first.ok());
    CheckNear(Values<float>(*first), Reference(rows, wide, wide_bias), 5e-5);
    for (float& v : wide.flat<float>()) v = -v;
    absl::StatusOr<Tensor> second = kernel.Run({rows, wide, wide_bias});
    REQUIRE(second.ok());
    CheckNear(Values<float>(*second), Reference(rows, wide, wide_bias), 5e-5);
  }
  SECTION("weights that change every run (training) are read plain after the first") {
    // Run 1 packs them, run 2 finds the pack stale and switches the layer to the
    // weights' own layout; runs 3-5 stay there. Row shards and column blocks, with the
    // weights as [k, n] and as [n, k] (transpose_b: each block starts k floats per
    // column further on).
    for (bool transpose_b : {false, true}) {
      for (int64_t m : {64, 32}) {  // 64 rows: row shards; 32 rows: column blocks
        INFO("transpose_b " << transpose_b << ", m " << m);
        Tensor x = Random({m, 900}, 10);  // 900x320 weights: 1.1 MiB, column blocks
        Tensor w = transpose_b ? Random({320, 900}, 11) : Random({900, 320}, 11);
        Tensor bias320 = Random({320}, 12);
        KernelRunner kernel(FusedMatMulNode(false, transpose_b), Registry());
        for (int run = 0; run < 5; ++run) {
          float* values = w.flat<float>().data();
          for (int64_t i = 0; i < w.NumElements(); ++i) values[i] += 0.01f * (run + 1);
          absl::StatusOr<Tensor> out = kernel.Run({x, w, bias320});
          REQUIRE(out.ok());
          CheckNear(Values<float>(*out), Reference(x, w, bias320, transpose_b), 2e-4);
        }
      }
    }
  }
  SECTION("constant weights: every run gives the same product") {
    KernelRunner kernel(FusedMatMulNode(true), Registry());
    const std::vector<float> want = Reference(a, b, bias);
    for (int run = 0; run < 3; ++run) {
      absl::StatusOr<Tensor> out = kernel.Run({a, b, bias});
      REQUIRE(out.ok());
      CheckNear(Values<float>(*out), want, 1e-5);
    }
  }
}

TEST_CASE("_FusedMatMul errors and the empty sum", "[fused][matmul]") {
  auto tester = [](std::vector<std::string> ops, Tensor a, Tensor b, Tensor bias) {
    OpTester t("_FusedMatMul", Registry());
    t.Attr("T", DT_FLOAT).Attr("num_args", 1).Attr("fused_ops", Strings(ops));
    t.Input(std::move(a)).Input(std::move(b)).Input(std::move(bias));
    return t.RunOne();
  };
  SECTION("a bias of the wrong length") {
    auto out = tester({"BiasAdd"}, Random({2, 3}, 1), Random({3, 4}, 2), Random({3}, 3));
    REQUIRE_FALSE(out.ok());
    CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
  }
  SECTION("incompatible matrices, in TF's words") {
    auto out = tester({"BiasAdd"}, Random({2, 3}, 1), Random({4, 4}, 2), Random({4}, 3));
    REQUIRE_FALSE(out.ok());
    CHECK(std::string(out.status().message()) ==
          "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,4]");
  }
  SECTION("a fusion the CPU kernel does not implement") {
    auto out = tester({"BiasAdd", "Tanh"}, Random({2, 3}, 1), Random({3, 4}, 2), Random({4}, 3));
    REQUIRE_FALSE(out.ok());
    CHECK(out.status().code() == absl::StatusCode::kUnimplemented);
  }
  SECTION("k = 0: the activation of the bias") {
    auto out = tester({"BiasAdd", "Relu"}, Filled<float>({2, 0}, {}), Filled<float>({0, 3}, {}),
                      Filled<float>({3}, {1.5f, -2.0f, 0.25f}));
    REQUIRE(out.ok());
    CHECK(Values<float>(*out) == std::vector<float>{1.5f, 0.0f, 0.25f, 1.5f, 0.0f, 0.25f});
  }
}

struct FusedConvCase {
  const char* label;
  std::vector<int64_t> input;   // in data_format order
  std::vector<int64_t> filter;  // HWIO
  std::string padding;
  std::vector<int64_t> explicit_paddings;  // 8 in data_format order, or empty
  std::string format = "NHWC";
  std::vector<int64_t> strides = {1, 1, 1, 1};
  // Winograd adds the bias in its own order: sums of 576 terms up to 4 in magnitude
  // (about 50) then differ from the unfused ones by float rounding, ~1e-4.
  double eps = 1e-5;
  bool constant_filter = false;  // a Const filter (packed once; channel blocks may apply)
};

TEST_CASE("_FusedConv2D equals Conv2D, BiasAdd and the activation", "[fused][conv]") {
  const FusedConvCase c = GENERATE(
      FusedConvCase{"LeNet conv1 with the Pad folded in", {20, 28, 28, 1}, {5, 5, 1, 6},
                    "EXPLICIT", {0, 0, 2, 2, 2, 2, 0, 0}},
      FusedConvCase{"LeNet conv2", {20, 14, 14, 6}, {5, 5, 6, 16}, "VALID", {}},
      FusedConvCase{"LeNet conv3: a matrix product", {20, 5, 5, 16}, {5, 5, 16, 120}, "VALID", {}},
      FusedConvCase{"1x1: a matrix product", {3, 7, 9, 8}, {1, 1, 8, 5}, "SAME", {}},
      FusedConvCase{"1x1 strided", {3, 7, 9, 8}, {1, 1, 8, 5}, "VALID", {}, "NHWC", {1, 2, 2, 1}},
      FusedConvCase{"NCHW, SAME", {4, 3, 9, 8}, {3, 3, 3, 7}, "SAME", {}, "NCHW"},
      FusedConvCase{"NCHW whole window (not a product in NCHW)", {4, 3, 5, 5}, {5, 5, 3, 7},
                    "VALID", {}, "NCHW"},
      FusedConvCase{"3x3, 64 channels: Winograd with the post-ops", {1, 28, 28, 64},
                    {3, 3, 64, 64}, "SAME", {}, "NHWC", {1, 1, 1, 1}, 3e-4},
      // conv_channel_blocks.h: one image with few output rows, a Const filter, 2 threads.
      // (>= 8 MFLOP, so that the image is split at all: 2 blocks of 48; 48 + 22.)
      FusedConvCase{"7x7, constant filter: blocks of output channels", {1, 7, 7, 128},
                    {3, 3, 128, 96}, "SAME", {}, "NHWC", {1, 1, 1, 1}, 2e-5, true},
      FusedConvCase{"5x5, constant filter, channels not a multiple of 16", {1, 5, 5, 320},
                    {3, 3, 320, 70}, "SAME", {}, "NHWC", {1, 1, 1, 1}, 2e-5, true});
  const std::string activation = GENERATE(std::string(), std::string("Relu"),
                                          std::string("Relu6"));
  INFO(c.label << " " << activation);
  std::vector<float> x = RandomValues(c.input[0] * c.input[1] * c.input[2] * c.input[3], 7);
  for (float& v : x) v *= 4.0f;
  Tensor input = Filled<float>(c.input, x);
  Tensor filter = Random(c.filter, 8);
  Tensor bias = Random({c.filter[3]}, 9);
  auto configure = [&](OpTester& t) {
    t.Attr("T", DT_FLOAT)
        .Attr("strides", c.strides)
        .Attr("padding", c.padding.c_str())
        .Attr("data_format", c.format.c_str());
    if (!c.explicit_paddings.empty()) t.Attr("explicit_paddings", c.explicit_paddings);
  };
  OpTester conv("Conv2D", Registry());
  configure(conv);
  conv.Input(input).Input(filter);
  const Tensor want = Unfused(RunOp(conv), bias, activation, c.format.c_str());
  OpTester fused("_FusedConv2D", Registry());
  configure(fused);
  AttrValue targs;
  targs.mutable_list()->add_type(DT_FLOAT);
  fused.Attr("num_args", 1).Attr("TArgs", targs).Attr("fused_ops", Strings(FusedOps(activation)));
  if (c.constant_filter) fused.Attr(kConstantInputsAttr, IntList({1}));
  fused.Input(input).Input(filter).Input(bias);
  const Tensor got = RunOp(fused);
  if (c.constant_filter) {  // the packed slices found again by a second run
    CheckNear(Values<float>(RunOp(fused)), Values<float>(want), c.eps);
  }
  CHECK(testing::DimsOf(got) == testing::DimsOf(want));
  CheckNear(Values<float>(got), Values<float>(want), c.eps);
}

TEST_CASE("_FusedConv2D rejects a bias that is not per output channel", "[fused][conv]") {
  OpTester t("_FusedConv2D", Registry());
  AttrValue targs;
  targs.mutable_list()->add_type(DT_FLOAT);
  t.Attr("T", DT_FLOAT)
      .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
      .Attr("padding", "VALID")
      .Attr("num_args", 1)
      .Attr("TArgs", targs)
      .Attr("fused_ops", Strings({"BiasAdd"}))
      .Input(Random({1, 4, 4, 2}, 1))
      .Input(Random({3, 3, 2, 5}, 2))
      .Input(Random({4}, 3));
  auto out = t.RunOne();
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
}


// A _FusedConv2D with a fused Add (graph/residual_add_fusion.h) of `addend`.
OpTester& ConfigureAddConv(OpTester& t, const std::string& padding,
                           const std::string& activation) {
  AttrValue targs;
  targs.mutable_list()->add_type(DT_FLOAT);
  targs.mutable_list()->add_type(DT_FLOAT);
  std::vector<std::string> ops = {"BiasAdd", "Add"};
  if (!activation.empty()) ops.push_back(activation);
  return t.Attr("T", DT_FLOAT)
      .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
      .Attr("padding", padding.c_str())
      .Attr("num_args", 2)
      .Attr("TArgs", targs)
      .Attr("fused_ops", Strings(ops));
}

// Conv2D, BiasAdd, AddV2(., addend) and the activation, one kernel after another.
Tensor UnfusedWithAddend(const Tensor& input, const Tensor& filter, const Tensor& bias,
                         const Tensor& addend, const std::string& padding,
                         const std::string& activation) {
  OpTester conv("Conv2D", Registry());
  conv.Attr("T", DT_FLOAT)
      .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
      .Attr("padding", padding.c_str())
      .Input(input)
      .Input(filter);
  const Tensor biased = Unfused(RunOp(conv), bias, "");
  OpTester add("AddV2", Registry());
  add.Attr("T", DT_FLOAT).Input(biased).Input(addend);
  const Tensor sum = RunOp(add);
  if (activation.empty()) return sum;
  OpTester act(activation, Registry());
  act.Attr("T", DT_FLOAT).Input(sum);
  return RunOp(act);
}

struct AddConvCase {
  const char* label;
  std::vector<int64_t> input, filter;
  std::string padding;
  std::vector<int64_t> addend;  // empty: the output's shape
  double eps = 2e-5;
};

TEST_CASE("_FusedConv2D with a fused Add equals Conv2D, BiasAdd, AddV2 and the activation",
          "[fused][conv]") {
  const AddConvCase c = GENERATE(
      AddConvCase{"1x1: a matrix product, row shards", {2, 14, 14, 32}, {1, 1, 32, 48}, "SAME"},
      AddConvCase{"1x1 of one 7x7 image, 1 MiB of weights: column blocks", {1, 7, 7, 1024},
                  {1, 1, 1024, 256}, "VALID"},
      AddConvCase{"3x3 on a batch: shards", {20, 14, 14, 6}, {3, 3, 6, 16}, "VALID"},
      // The unfused Conv2D runs this one as Winograd: rounding differs by ~1e-4.
      AddConvCase{"3x3 of one image, 64 channels: row bands, not Winograd", {1, 28, 28, 64},
                  {3, 3, 64, 64}, "SAME", {}, 3e-4},
      AddConvCase{"5x5, 6 output channels: folded columns", {4, 28, 28, 1}, {5, 5, 1, 6},
                  "SAME"},
      AddConvCase{"a per-channel addend, broadcast", {2, 9, 9, 8}, {3, 3, 8, 12}, "SAME", {12}},
      AddConvCase{"an addend of more images: the output broadcast", {1, 1, 1, 8},
                  {1, 1, 8, 5}, "VALID", {3, 4, 4, 5}});
  const std::string activation =
      GENERATE(std::string(), std::string("Relu"), std::string("Relu6"));
  INFO(c.label << " " << activation);
  int64_t count = 1;
  for (int64_t d : c.input) count *= d;
  std::vector<float> x = RandomValues(count, 17);
  for (float& v : x) v *= 2.0f;
  const Tensor input = Filled<float>(c.input, x);
  const Tensor filter = Random(c.filter, 18);
  const Tensor bias = Random({c.filter[3]}, 19);
  std::vector<int64_t> addend_shape = c.addend;
  if (addend_shape.empty()) {
    OpTester conv("Conv2D", Registry());
    conv.Attr("T", DT_FLOAT)
        .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
        .Attr("padding", c.padding.c_str())
        .Input(input)
        .Input(filter);
    addend_shape = testing::DimsOf(RunOp(conv));
  }
  const Tensor addend = Random(addend_shape, 20);
  const Tensor want = UnfusedWithAddend(input, filter, bias, addend, c.padding, activation);
  OpTester fused("_FusedConv2D", Registry());
  ConfigureAddConv(fused, c.padding, activation)
      .Input(input)
      .Input(filter)
      .Input(bias)
      .Input(addend);
  const Tensor got = RunOp(fused);
  CHECK(testing::DimsOf(got) == testing::DimsOf(want));
  CheckNear(Values<float>(got), Values<float>(want), c.eps);
}

TEST_CASE("_FusedConv2D's fused Add: errors", "[fused][conv]") {
  SECTION("an addend that does not broadcast: TF's words") {
    OpTester t("_FusedConv2D", Registry());
    ConfigureAddConv(t, "VALID", "Relu")
        .Input(Random({1, 4, 4, 2}, 1))
        .Input(Random({3, 3, 2, 5}, 2))
        .Input(Random({5}, 3))
        .Input(Random({1, 3, 3, 5}, 4));
    absl::StatusOr<Tensor> out = t.RunOne();
    REQUIRE_FALSE(out.ok());
    CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(out.status().message()),
               Catch::Contains("Incompatible shapes: [1,2,2,5] vs. [1,3,3,5]"));
  }
  SECTION("Add without its addend argument") {
    OpTester t("_FusedConv2D", Registry());
    AttrValue targs;
    targs.mutable_list()->add_type(DT_FLOAT);
    t.Attr("T", DT_FLOAT)
        .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
        .Attr("padding", "VALID")
        .Attr("num_args", 1)
        .Attr("TArgs", targs)
        .Attr("fused_ops", Strings({"BiasAdd", "Add"}))
        .Input(Random({1, 4, 4, 2}, 1))
        .Input(Random({3, 3, 2, 5}, 2))
        .Input(Random({5}, 3));
    absl::StatusOr<Tensor> out = t.RunOne();
    REQUIRE_FALSE(out.ok());
    CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(out.status().message()), Catch::Contains("bias and addend"));
  }
  SECTION("an activation before the Add is not a fusion TF has") {
    OpTester t("_FusedConv2D", Registry());
    AttrValue targs;
    targs.mutable_list()->add_type(DT_FLOAT);
    targs.mutable_list()->add_type(DT_FLOAT);
    t.Attr("T", DT_FLOAT)
        .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
        .Attr("padding", "VALID")
        .Attr("num_args", 2)
        .Attr("TArgs", targs)
        .Attr("fused_ops", Strings({"BiasAdd", "Relu", "Add"}))
        .Input(Random({1, 4, 4, 2}, 1))
        .Input(Random({3, 3, 2, 5}, 2))
        .Input(Random({5}, 3))
        .Input(Random({1, 2, 2, 5}, 4));
    absl::StatusOr<Tensor> out = t.RunOne();
    REQUIRE_FALSE(out.ok());
    CHECK(out.status().code() == absl::StatusCode::kUnimplemented);
  }
}

}  // namespace
}  // namespace dflow
