#include <cstdlib>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/io/file_io.h"
#include "kernels/io/register_io_kernels.h"
#include "kernels/io/tensor_bundle.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::MakeTensor;
using testing::OpTester;
using testing::Values;

const std::string kMnistPrefix = "tests/data/tf_graphs/checkpoints/mnist_fc_feed/model.ckpt-1999";

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterIoKernels); }

AttrValue TypeList(std::vector<DataType> types) {
  AttrValue v;
  for (DataType t : types) v.mutable_list()->add_type(t);
  return v;
}

Tensor Str(const std::string& s) { return MakeTensor<std::string>({}, {s}); }
Tensor Strs(const std::vector<std::string>& s) {
  return MakeTensor<std::string>({static_cast<int64_t>(s.size())}, s);
}

absl::StatusOr<std::vector<Tensor>> Restore(const std::string& prefix,
                                            std::vector<std::string> names,
                                            std::vector<DataType> dtypes,
                                            std::vector<std::string> slices = {}) {
  if (slices.empty()) slices.assign(names.size(), "");
  return OpTester("RestoreV2", Registry())
      .Attr("dtypes", TypeList(dtypes))
      .Input(Str(prefix))
      .Input(Strs(names))
      .Input(Strs(slices))
      .Run();
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST_CASE("RestoreV2 restores the MNIST checkpoint's tensors") {
  auto out = Restore(kMnistPrefix, {"hidden1/biases", "global_step"}, {DT_FLOAT, DT_INT32});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE(out->size() == 2);
  CHECK((*out)[0].shape() == TensorShape({128}));
  // tf.train.load_checkpoint(prefix).get_tensor("hidden1/biases")[:3] (TF 2.21).
  CHECK((*out)[0].flat<float>()[0] == 0.07150815427303314f);
  CHECK((*out)[0].flat<float>()[2] == 0.045086123049259186f);
  CHECK((*out)[1].scalar<int32_t>() == 2000);
}

TEST_CASE("RestoreV2 refuses a dtype other than the checkpoint's, in TF's words") {
  absl::Status status = Restore(kMnistPrefix, {"global_step"}, {DT_FLOAT}).status();
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(Message(status) ==
        "tensor_name = global_step; expected dtype float does not equal restored dtype int32");
}

TEST_CASE("RestoreV2 reports missing keys, missing checkpoints and slices") {
  absl::Status status = Restore(kMnistPrefix, {"nope"}, {DT_FLOAT}).status();
  CHECK(status.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(Message(status), Catch::Contains("Key nope not found in checkpoint"));

  status = Restore("/no/such/ckpt", {"a"}, {DT_FLOAT}).status();
  CHECK(status.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(Message(status), Catch::Contains("/no/such/ckpt.index"));

  status = Restore(kMnistPrefix, {"hidden1/biases"}, {DT_FLOAT}, {"128 0,64"}).status();
  CHECK(status.code() == absl::StatusCode::kUnimplemented);
  CHECK_THAT(Message(status), Catch::Contains("hidden1/biases"));

  status = Restore(kMnistPrefix, {"hidden1/biases", "global_step"}, {DT_FLOAT}).status();
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
}

absl::Status Save(const std::string& prefix, std::vector<std::string> names,
                  std::vector<Tensor> tensors) {
  std::vector<DataType> dtypes;
  for (const Tensor& t : tensors) dtypes.push_back(t.dtype());
  OpTester tester("SaveV2", Registry());
  tester.Attr("dtypes", TypeList(dtypes))
      .Input(Str(prefix))
      .Input(Strs(names))
      .Input(Strs(std::vector<std::string>(names.size(), "")));
  for (Tensor& t : tensors) tester.Input(t);
  return tester.Run().status();
}

TEST_CASE("SaveV2 writes a checkpoint that RestoreV2 reads back") {
  const std::string prefix = std::string(std::getenv("TEST_TMPDIR")) + "/save/model";
  REQUIRE(Save(prefix, {"w", "names"},
               {MakeTensor<float>({2, 2}, {1, 2, 3, 4.5f}), Strs({"x", "yz"})})
              .ok());
  CHECK(FileExists(prefix + ".index"));
  CHECK(FileExists(prefix + ".data-00000-of-00001"));
  auto out = Restore(prefix, {"names", "w"}, {DT_STRING, DT_FLOAT});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(Values<std::string>((*out)[0]) == std::vector<std::string>{"x", "yz"});
  CHECK(Values<float>((*out)[1]) == std::vector<float>{1, 2, 3, 4.5f});
}

TEST_CASE("Saver's sharded save: temporary shard, then MergeV2Checkpoints") {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/sharded";
  auto shard = OpTester("ShardedFilename", Registry())
                   .Input(Str(dir + "/model_temp/part"))
                   .Input(MakeTensor<int32_t>({}, {0}))
                   .Input(MakeTensor<int32_t>({}, {1}))
                   .RunOne();
  REQUIRE(shard.ok());
  const std::string shard_prefix = shard->scalar<std::string>();
  CHECK(shard_prefix == dir + "/model_temp/part-00000-of-00001");
  REQUIRE(Save(shard_prefix, {"v"}, {MakeTensor<int64_t>({}, {42})}).ok());

  auto merged = OpTester("MergeV2Checkpoints", Registry())
                    .Input(Strs({shard_prefix}))
                    .Input(Str(dir + "/model"))
                    .Run();
  INFO(merged.status().ToString());
  REQUIRE(merged.ok());
  CHECK_FALSE(FileExists(dir + "/model_temp"));  // delete_old_dirs defaults to true
  auto out = Restore(dir + "/model", {"v"}, {DT_INT64});
  REQUIRE(out.ok());
  CHECK((*out)[0].scalar<int64_t>() == 42);
}

TEST_CASE("StringJoin joins element-wise, broadcasting scalars") {
  auto out = OpTester("StringJoin", Registry())
                 .Attr("N", 3)
                 .Attr("separator", "/")
                 .Input(Strs({"a", "b"}))
                 .Input(Str("x"))
                 .Input(Strs({"1", "2"}))
                 .RunOne();
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(Values<std::string>(*out) == std::vector<std::string>{"a/x/1", "b/x/2"});

  auto bad = OpTester("StringJoin", Registry())
                 .Attr("N", 2)
                 .Input(Strs({"a", "b"}))
                 .Input(Strs({"a", "b", "c"}))
                 .RunOne();
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow
