// _DflowFusedConv2DMaxPool (graph/fusion.h) against the two kernels it replaces,
// _FusedConv2D and then MaxPool, run one after another: the same numbers within 1e-6, on
// a device with one pool thread and on one with two. The batches leave uneven slices
// (the kernel pools slices of ~0.5 MB of convolution output) and uneven shards; the
// matrix-product convolutions take the whole-batch fallback.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "graph/node_def_util.h"
#include "graph/op_registry.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/thread_pool.h"
#include "tests/kernels/cpu/conv_test_util.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::CheckNear;
using testing::Filled;
using testing::IntList;
using testing::OpTester;
using testing::RandomValues;
using testing::Values;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterCpuKernels); }

// A CPU device whose pool has `threads` threads (kernels shard over it).
Device* DeviceWithThreads(int threads) {
  static CpuAllocator* allocator = new CpuAllocator();
  static ThreadPool* one = new ThreadPool(1, "one");
  static ThreadPool* two = new ThreadPool(2, "two");
  static CpuDevice* device1 = new CpuDevice(0, allocator, one);
  static CpuDevice* device2 = new CpuDevice(0, allocator, two);
  return threads == 1 ? device1 : device2;
}

struct Case {
  const char* label;
  std::vector<int64_t> input, filter;
  std::string padding;
  std::vector<int64_t> explicit_paddings;
  std::vector<int64_t> pool_ksize, pool_strides;
  std::string pool_padding;
  std::string format = "NHWC";
  std::vector<int64_t> strides = {1, 1, 1, 1};
};

AttrValue Strings(const std::vector<std::string>& values) {
  AttrValue v;
  v.mutable_list();
  for (const std::string& s : values) v.mutable_list()->add_s(s);
  return v;
}

AttrValue Str(const std::string& s) {
  AttrValue v;
  v.set_s(s);
  return v;
}

// The conv attrs of a _FusedConv2D for `c` (with or without the pool's).
NodeDef ConvNode(const Case& c, const std::string& op, const std::string& activation) {
  NodeDef node;
  node.set_name("conv");
  node.set_op(op);
  auto& attrs = *node.mutable_attr();
  attrs["T"].set_type(DT_FLOAT);
  attrs["TArgs"].mutable_list()->add_type(DT_FLOAT);
  attrs["num_args"].set_i(1);
  attrs["strides"] = IntList(c.strides);
  attrs["padding"] = Str(c.padding);
  attrs["data_format"] = Str(c.format);
  if (!c.explicit_paddings.empty()) attrs["explicit_paddings"] = IntList(c.explicit_paddings);
  std::vector<std::string> fused_ops = {"BiasAdd"};
  if (!activation.empty()) fused_ops.push_back(activation);
  attrs["fused_ops"] = Strings(fused_ops);
  return node;
}

absl::StatusOr<Tensor> RunOn(Device* device, NodeDef node, std::vector<Tensor> inputs) {
  const OpDef* op_def = OpRegistry::Global().Find(node.op());
  REQUIRE(op_def != nullptr);
  AddDefaultAttrs(*op_def, &node);
  DataTypeVector in, out;
  REQUIRE(InOutTypesForNode(node, *op_def, &in, &out).ok());
  auto kernel = Registry().CreateKernel(node, *op_def, in, out, device);
  if (!kernel.ok()) return kernel.status();
  OpKernelContext::Params params;
  params.kernel = kernel->get();
  params.device = device;
  params.inputs = absl::MakeSpan(inputs);
  OpKernelContext context(params, 1);
  (*kernel)->Compute(&context);
  if (!context.status().ok()) return context.status();
  return *context.mutable_output(0);
}

Tensor Require(absl::StatusOr<Tensor> t) {
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  return *std::move(t);
}

Tensor Random(std::vector<int64_t> shape, uint32_t seed, float scale = 1.0f) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::vector<float> v = RandomValues(count, seed);
  for (float& x : v) x *= scale;
  return Filled<float>(shape, v);
}

std::vector<int64_t> Four(const Case& c, const std::vector<int64_t>& hw) {
  return c.format == "NHWC" ? std::vector<int64_t>{1, hw[0], hw[1], 1}
                            : std::vector<int64_t>{1, 1, hw[0], hw[1]};
}

TEST_CASE("_DflowFusedConv2DMaxPool equals _FusedConv2D then MaxPool", "[fused][conv][pool]") {
  const Case c = GENERATE(
      // LeNet conv1 + pool1: 61 images leave slices of 27, 27 and 7 (or 27 + 4, 27 + 3 on
      // two threads).
      Case{"LeNet layer 1", {61, 28, 28, 1}, {5, 5, 1, 6}, "EXPLICIT", {0, 0, 2, 2, 2, 2, 0, 0},
           {2, 2}, {2, 2}, "VALID"},
      Case{"LeNet layer 2", {203, 14, 14, 6}, {5, 5, 6, 16}, "VALID", {}, {2, 2}, {2, 2}, "VALID"},
      Case{"SAME conv, 3x3/2 SAME pool, odd sizes", {37, 15, 13, 3}, {3, 3, 3, 8}, "SAME", {},
           {3, 3}, {2, 2}, "SAME"},
      Case{"strided conv, 2x3/1 SAME pool", {45, 40, 36, 2}, {3, 3, 2, 24}, "VALID", {}, {2, 3},
           {1, 1}, "SAME", "NHWC", {1, 2, 1, 1}},
      Case{"big images: one image per slice", {5, 80, 80, 3}, {3, 3, 3, 32}, "SAME", {}, {2, 2},
           {2, 2}, "VALID"},
      Case{"NCHW", {9, 3, 11, 10}, {3, 3, 3, 5}, "VALID", {}, {2, 2}, {1, 1}, "VALID", "NCHW"},
      Case{"1x1: a matrix product, pooled after", {7, 6, 6, 4}, {1, 1, 4, 5}, "VALID", {}, {2, 2},
           {2, 2}, "SAME"},
      Case{"whole-input filter: a matrix product", {11, 5, 5, 16}, {5, 5, 16, 12}, "VALID", {},
           {1, 1}, {1, 1}, "VALID"},
      // One image on two threads: convolved in row bands (Winograd here), then pooled in
      // row bands.
      Case{"one image, 2x2/2 pool", {1, 64, 64, 16}, {3, 3, 16, 64}, "SAME", {}, {2, 2}, {2, 2},
           "VALID"},
      Case{"one image, odd sizes, 3x3/2 SAME pool", {1, 45, 37, 16}, {3, 3, 16, 48}, "SAME", {},
           {3, 3}, {2, 2}, "SAME"});
  const std::string activation = GENERATE(std::string(), std::string("Relu"));
  const int threads = GENERATE(1, 2);
  INFO(c.label << " " << activation << " threads " << threads);
  const Tensor input = Random(c.input, 17, 4.0f);
  const Tensor filter = Random(c.filter, 18);
  const Tensor bias = Random({c.filter[3]}, 19);

  NodeDef unfused = ConvNode(c, "_FusedConv2D", activation);
  const Tensor conv = Require(RunOn(DeviceWithThreads(threads), unfused, {input, filter, bias}));
  OpTester pool("MaxPool", Registry());
  pool.Attr("T", DT_FLOAT)
      .Attr("ksize", Four(c, c.pool_ksize))
      .Attr("strides", Four(c, c.pool_strides))
      .Attr("padding", c.pool_padding.c_str())
      .Attr("data_format", c.format.c_str())
      .Input(conv);
  const Tensor want = Require(pool.RunOne());

  NodeDef fused = ConvNode(c, "_DflowFusedConv2DMaxPool", activation);
  (*fused.mutable_attr())["pool_ksize"] = IntList(Four(c, c.pool_ksize));
  (*fused.mutable_attr())["pool_strides"] = IntList(Four(c, c.pool_strides));
  (*fused.mutable_attr())["pool_padding"] = Str(c.pool_padding);
  const Tensor got = Require(RunOn(DeviceWithThreads(threads), fused, {input, filter, bias}));
  CHECK(testing::DimsOf(got) == testing::DimsOf(want));
  CheckNear(Values<float>(got), Values<float>(want), 1e-6);
}

TEST_CASE("_DflowFusedConv2DMaxPool rejects a pool over the depth", "[fused][conv][pool]") {
  Case c{"", {2, 8, 8, 1}, {3, 3, 1, 4}, "SAME", {}, {2, 2}, {2, 2}, "VALID"};
  NodeDef fused = ConvNode(c, "_DflowFusedConv2DMaxPool", "Relu");
  (*fused.mutable_attr())["pool_ksize"] = IntList({1, 2, 2, 2});
  (*fused.mutable_attr())["pool_strides"] = IntList({1, 2, 2, 1});
  (*fused.mutable_attr())["pool_padding"] = Str("VALID");
  absl::StatusOr<Tensor> got = RunOn(DeviceWithThreads(1), fused,
                                     {Random(c.input, 1), Random(c.filter, 2), Random({4}, 3)});
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(got.status().message()).find("pool_ksize") != std::string::npos);
}

TEST_CASE("_DflowFusedConv2DMaxPool refuses a fused Add", "[fused][conv][pool]") {
  // Its kernel pools slices of scratch the sum post-op would read as the addend.
  Case c{"", {2, 8, 8, 1}, {3, 3, 1, 4}, "SAME", {}, {2, 2}, {2, 2}, "VALID"};
  NodeDef fused = ConvNode(c, "_DflowFusedConv2DMaxPool", "");
  auto& attrs = *fused.mutable_attr();
  attrs["pool_ksize"] = IntList({1, 2, 2, 1});
  attrs["pool_strides"] = IntList({1, 2, 2, 1});
  attrs["pool_padding"] = Str("VALID");
  attrs["fused_ops"] = Strings({"BiasAdd", "Add", "Relu"});
  attrs["num_args"].set_i(2);
  attrs["TArgs"].mutable_list()->add_type(DT_FLOAT);
  absl::StatusOr<Tensor> got =
      RunOn(DeviceWithThreads(1), fused,
            {Random(c.input, 1), Random(c.filter, 2), Random({4}, 3), Random({2, 8, 8, 4}, 4)});
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(std::string(got.status().message()).find("Fusion is not implemented") !=
        std::string::npos);
}

}  // namespace
}  // namespace dflow
