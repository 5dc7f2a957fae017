#include <cstdlib>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "graph/proto_io.h"
#include "kernels/io/file_io.h"
#include "kernels/io/tensor_bundle.h"
#include "kernels/io/tensor_bundle_reader.h"
#include "kernels/io/tensor_bundle_writer.h"
#include "runtime/allocator.h"

namespace dflow {
namespace {

const std::string kMnistPrefix = "tests/data/tf_graphs/checkpoints/mnist_fc_feed/model.ckpt-1999";
const std::string kHalfPlusTwoPrefix =
    "tests/data/tf_graphs/saved_model/tf_half_plus_two/variables/variables";

Allocator* TestAllocator() {
  static CpuAllocator* allocator = new CpuAllocator();
  return allocator;
}

std::string TmpDir() { return std::string(std::getenv("TEST_TMPDIR")); }

std::unique_ptr<BundleReader> OpenOrFail(const std::string& prefix) {
  auto reader = BundleReader::Open(prefix);
  INFO(reader.status().ToString());
  REQUIRE(reader.ok());
  return *std::move(reader);
}

Tensor LookupOrFail(const BundleReader& reader, const std::string& key) {
  absl::StatusOr<Tensor> tensor = reader.Lookup(key, TestAllocator());
  INFO(tensor.status().ToString());
  REQUIRE(tensor.ok());
  return *std::move(tensor);
}

// Copies a single-shard bundle to `dst_prefix`, for corrupting the copy.
void CopyBundle(const std::string& src_prefix, const std::string& dst_prefix) {
  for (const auto& [from, to] :
       {std::pair{BundleIndexFilename(src_prefix), BundleIndexFilename(dst_prefix)},
        std::pair{BundleDataFilename(src_prefix, 0, 1), BundleDataFilename(dst_prefix, 0, 1)}}) {
    absl::StatusOr<std::string> bytes = ReadFileToString(from);
    REQUIRE(bytes.ok());
    REQUIRE(WriteStringToFile(to, *bytes).ok());
  }
}

void EditFile(const std::string& path, const std::function<void(std::string*)>& edit) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  REQUIRE(bytes.ok());
  edit(&*bytes);
  REQUIRE(WriteStringToFile(path, *bytes).ok());
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST_CASE("half_plus_two's variables read as TensorFlow wrote them") {
  auto reader = OpenOrFail(kHalfPlusTwoPrefix);
  CHECK(reader->num_shards() == 1);
  CHECK(reader->Keys() == std::vector<std::string>{"a", "b", "c"});
  const std::vector<std::pair<std::string, float>> want = {{"a", 0.5f}, {"b", 2.0f}, {"c", 3.0f}};
  for (const auto& [key, value] : want) {
    Tensor t = LookupOrFail(*reader, key);
    CHECK(t.dtype() == DT_FLOAT);
    CHECK(t.shape().dims() == 0);
    CHECK(t.scalar<float>() == value);
  }
}

TEST_CASE("the MNIST checkpoint reads with TensorFlow's shapes and values") {
  auto reader = OpenOrFail(kMnistPrefix);
  CHECK(reader->Keys() ==
        std::vector<std::string>{"global_step", "hidden1/biases", "hidden1/weights",
                                 "hidden2/biases", "hidden2/weights", "softmax_linear/biases",
                                 "softmax_linear/weights"});
  Tensor step = LookupOrFail(*reader, "global_step");
  CHECK(step.dtype() == DT_INT32);
  CHECK(step.scalar<int32_t>() == 2000);

  Tensor w = LookupOrFail(*reader, "hidden1/weights");
  CHECK(w.shape() == TensorShape({784, 128}));
  // Reference values from tf.train.load_checkpoint(prefix).get_tensor (TF 2.21).
  CHECK(w.flat<float>()[0] == -0.010160132311284542f);
  CHECK(w.flat<float>()[1] == -0.05622744932770729f);
  double sum = 0;
  for (float v : w.flat<float>()) sum += v;
  CHECK(sum == Approx(187.85987135284017).epsilon(1e-9));

  Tensor b = LookupOrFail(*reader, "softmax_linear/biases");
  CHECK(b.shape() == TensorShape({10}));
  CHECK(b.flat<float>()[1] == 0.059526342898607254f);
}

TEST_CASE("a missing checkpoint or key is NOT_FOUND naming it") {
  absl::Status status = BundleReader::Open(TmpDir() + "/nowhere/model").status();
  CHECK(status.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(Message(status), Catch::Contains(TmpDir() + "/nowhere/model.index"));

  auto reader = OpenOrFail(kHalfPlusTwoPrefix);
  status = reader->Lookup("d", TestAllocator()).status();
  CHECK(status.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(Message(status), Catch::Contains("Key d not found in checkpoint"));

  const std::string prefix = TmpDir() + "/no_data";
  CopyBundle(kHalfPlusTwoPrefix, prefix);
  REQUIRE(DeleteFile(BundleDataFilename(prefix, 0, 1)).ok());
  status = OpenOrFail(prefix)->Lookup("a", TestAllocator()).status();
  CHECK(status.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(Message(status), Catch::Contains(prefix + ".data-00000-of-00001"));
}

TEST_CASE("a flipped byte in the data is DATA_LOSS naming the file and tensor") {
  const std::string prefix = TmpDir() + "/flipped";
  CopyBundle(kMnistPrefix, prefix);
  auto entry = OpenOrFail(prefix)->LookupEntry("hidden1/weights");
  REQUIRE(entry.ok());
  EditFile(BundleDataFilename(prefix, 0, 1),
           [&](std::string* bytes) { (*bytes)[entry->offset() + 1000] ^= 0x20; });
  auto reader = OpenOrFail(prefix);
  absl::Status status = reader->Lookup("hidden1/weights", TestAllocator()).status();
  CHECK(status.code() == absl::StatusCode::kDataLoss);
  CHECK_THAT(Message(status), Catch::Contains("hidden1/weights"));
  CHECK_THAT(Message(status), Catch::Contains(BundleDataFilename(prefix, 0, 1)));
  CHECK_THAT(Message(status), Catch::Contains("Checksum does not match"));
  // The other tensors are intact.
  CHECK(LookupOrFail(*reader, "hidden2/weights").shape() == TensorShape({128, 32}));
}

TEST_CASE("a flipped byte in the index is DATA_LOSS naming the index") {
  const std::string prefix = TmpDir() + "/bad_index";
  CopyBundle(kMnistPrefix, prefix);
  EditFile(BundleIndexFilename(prefix), [](std::string* bytes) { (*bytes)[20] ^= 0x01; });
  absl::Status status = BundleReader::Open(prefix).status();
  CHECK(status.code() == absl::StatusCode::kDataLoss);
  CHECK_THAT(Message(status), Catch::Contains(BundleIndexFilename(prefix)));
}

TEST_CASE("truncated files are errors naming the file") {
  const std::string prefix = TmpDir() + "/truncated";
  CopyBundle(kMnistPrefix, prefix);
  EditFile(BundleDataFilename(prefix, 0, 1), [](std::string* bytes) { bytes->resize(1000); });
  auto reader = OpenOrFail(prefix);
  absl::Status status = reader->Lookup("softmax_linear/weights", TestAllocator()).status();
  CHECK(status.code() == absl::StatusCode::kDataLoss);
  CHECK_THAT(Message(status), Catch::Contains(BundleDataFilename(prefix, 0, 1)));
  CHECK_THAT(Message(status), Catch::Contains("softmax_linear/weights"));

  EditFile(BundleIndexFilename(prefix), [](std::string* bytes) { bytes->resize(100); });
  status = BundleReader::Open(prefix).status();
  CHECK(status.code() == absl::StatusCode::kDataLoss);
  CHECK_THAT(Message(status), Catch::Contains(BundleIndexFilename(prefix)));
}

template <typename T>
Tensor MakeTensor(std::initializer_list<int64_t> dims, std::vector<T> values) {
  Tensor t = *Tensor::Allocate(TestAllocator(), DataTypeOf<T>(), TensorShape(dims));
  for (size_t i = 0; i < values.size(); ++i) t.flat<T>()[i] = values[i];
  return t;
}

TEST_CASE("bundles written here read back exactly, strings included") {
  const std::string prefix = TmpDir() + "/written/sub/ckpt";
  auto writer = BundleWriter::Create(prefix);
  REQUIRE(writer.ok());
  const Tensor f = MakeTensor<float>({2, 3}, {1.5f, -2, 3, 4, 5, 6.25f});
  const Tensor i64 = MakeTensor<int64_t>({}, {int64_t{1} << 40});
  const Tensor flags = MakeTensor<bool>({3}, {true, false, true});
  const Tensor empty = MakeTensor<float>({0, 4}, {});
  const Tensor strings =
      MakeTensor<std::string>({2, 2}, {"", "hello", std::string(300, 'x'), "a\0b"});
  REQUIRE((*writer)->Add("z/f", f).ok());
  REQUIRE((*writer)->Add("i64", i64).ok());
  REQUIRE((*writer)->Add("flags", flags).ok());
  REQUIRE((*writer)->Add("empty", empty).ok());
  REQUIRE((*writer)->Add("strings", strings).ok());
  CHECK((*writer)->Add("flags", flags).code() == absl::StatusCode::kInvalidArgument);
  REQUIRE((*writer)->Finish().ok());

  auto reader = OpenOrFail(prefix);
  CHECK(reader->Keys() == std::vector<std::string>{"empty", "flags", "i64", "strings", "z/f"});
  Tensor got_f = LookupOrFail(*reader, "z/f");
  CHECK(got_f.shape() == f.shape());
  CHECK(std::vector<float>(got_f.flat<float>().begin(), got_f.flat<float>().end()) ==
        std::vector<float>{1.5f, -2, 3, 4, 5, 6.25f});
  CHECK(LookupOrFail(*reader, "i64").scalar<int64_t>() == (int64_t{1} << 40));
  Tensor got_flags = LookupOrFail(*reader, "flags");
  CHECK((got_flags.flat<bool>()[0] && !got_flags.flat<bool>()[1] && got_flags.flat<bool>()[2]));
  CHECK(LookupOrFail(*reader, "empty").shape() == TensorShape({0, 4}));
  Tensor got_strings = LookupOrFail(*reader, "strings");
  CHECK(got_strings.shape() == TensorShape({2, 2}));
  for (int i = 0; i < 4; ++i) CHECK(got_strings.flat<std::string>()[i] == strings.flat<std::string>()[i]);
}

TEST_CASE("a corrupt string tensor is DATA_LOSS") {
  const std::string prefix = TmpDir() + "/strings";
  auto writer = BundleWriter::Create(prefix);
  REQUIRE(writer.ok());
  REQUIRE((*writer)->Add("s", MakeTensor<std::string>({2}, {"abc", "defgh"})).ok());
  REQUIRE((*writer)->Finish().ok());
  EditFile(BundleDataFilename(prefix, 0, 1), [](std::string* bytes) { bytes->back() ^= 1; });
  absl::Status status = OpenOrFail(prefix)->Lookup("s", TestAllocator()).status();
  CHECK(status.code() == absl::StatusCode::kDataLoss);
  CHECK_THAT(Message(status), Catch::Contains("s in " + BundleDataFilename(prefix, 0, 1)));
}

TEST_CASE("merging bundles renames their shards under the new prefix") {
  const std::string dir = TmpDir() + "/merge";
  for (const auto& [part, value] : {std::pair{std::string("/p0"), 1.0f}, std::pair{std::string("/p1"), 2.0f}}) {
    auto writer = BundleWriter::Create(dir + part);
    REQUIRE(writer.ok());
    REQUIRE((*writer)->Add("v" + part.substr(2), MakeTensor<float>({}, {value})).ok());
    REQUIRE((*writer)->Finish().ok());
  }
  REQUIRE(MergeBundles({dir + "/p0", dir + "/p1"}, dir + "/final/model").ok());
  CHECK_FALSE(FileExists(BundleIndexFilename(dir + "/p0")));
  CHECK(FileExists(BundleDataFilename(dir + "/final/model", 1, 2)));
  auto reader = OpenOrFail(dir + "/final/model");
  CHECK(reader->num_shards() == 2);
  CHECK(LookupOrFail(*reader, "v0").scalar<float>() == 1.0f);
  CHECK(LookupOrFail(*reader, "v1").scalar<float>() == 2.0f);

  // The same tensor in two bundles cannot merge.
  for (const std::string part : {"/q0", "/q1"}) {
    auto writer = BundleWriter::Create(dir + part);
    REQUIRE(writer.ok());
    REQUIRE((*writer)->Add("same", MakeTensor<float>({}, {0})).ok());
    REQUIRE((*writer)->Finish().ok());
  }
  absl::Status status = MergeBundles({dir + "/q0", dir + "/q1"}, dir + "/dup");
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(Message(status), Catch::Contains("same"));
}

}  // namespace
}  // namespace dflow
