// ReverseSequence (kernels/cpu/reverse_sequence_op.cc): prefixes reversed per batch entry,
// either dim order, strings, and TF's checks.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::Filled;
using testing::Iota;
using testing::OpTester;
using testing::Values;
using testing::Vec;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterReverseSequenceKernels);
}

absl::StatusOr<Tensor> Run(const Tensor& x, const Tensor& lengths, int seq_dim, int batch_dim) {
  return OpTester("ReverseSequence", Registry()).Attr("T", x.dtype()).Attr("Tlen", lengths.dtype())
      .Attr("seq_dim", seq_dim).Attr("batch_dim", batch_dim).Input(x).Input(lengths).RunOne();
}

TEST_CASE("ReverseSequence reverses each batch entry's prefix", "[reverse_sequence]") {
  auto a = Run(Filled<float>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), Vec<int32_t>({3, 1}), 1, 0);
  REQUIRE(a.ok());
  CHECK(Values<float>(*a) == std::vector<float>{3, 2, 1, 4, 5, 6, 7, 8});
  // Time-major [3 steps, 2 batch, 2 features], batch_dim 1; lengths 2 and 3.
  auto b = Run(Iota<int32_t>({3, 2, 2}), Vec<int64_t>({2, 3}), 0, 1);
  REQUIRE(b.ok());
  CHECK(Values<int32_t>(*b) == std::vector<int32_t>{4, 5, 10, 11, 0, 1, 6, 7, 8, 9, 2, 3});
  auto s = Run(Filled<std::string>({1, 3}, {"a", "b", "c"}), Vec<int32_t>({2}), 1, 0);
  REQUIRE(s.ok());
  CHECK(Values<std::string>(*s) == std::vector<std::string>{"b", "a", "c"});
}

TEST_CASE("ReverseSequence checks its dims and lengths as TF does", "[reverse_sequence]") {
  const Tensor x = Iota<float>({2, 3});
  CHECK(Run(x, Vec<int32_t>({1, 4}), 1, 0).status().message() == "seq_lens(1) > input.dims(1)");
  CHECK(Run(x, Vec<int32_t>({-1, 0}), 1, 0).status().message() == "seq_lens(0) < 0");
  CHECK(Run(x, Vec<int32_t>({1}), 1, 0).status().message() ==
        "Length of seq_lengths != input.dims(0), (1 vs. 2)");
  CHECK(Run(x, Vec<int32_t>({1, 1}), 1, 1).status().message() == "batch_dim == seq_dim == 1");
  CHECK(Run(x, Vec<int32_t>({1, 1}), 2, 0).status().message() ==
        "seq_dim must be < input rank ( 2 vs. 2)");
}

}  // namespace
}  // namespace dflow
