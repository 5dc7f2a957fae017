// ConcatOffset(concat_dim, shape_0, ..., shape_{N-1}): where each input of a Concat
// along concat_dim starts in its output, i.e. offset_i is zero except at concat_dim,
// where it is the sum of shape_0..shape_{i-1} there (Concat's gradient slices with it).
//
// Checks and messages are TF 2.21's ConcatOffsetOp's, in its order. Offsets are summed
// in shape_type and wrap as TF's do.
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// TF's Tensor::SummarizeValue(10) of a shape vector: "2 7 5", "1 2 ... 10...".
template <typename T>
std::string SummarizeShape(const Tensor& shape) {
  constexpr int64_t kMaxEntries = 10;
  absl::Span<const T> values = shape.flat<T>();
  const bool truncated = static_cast<int64_t>(values.size()) > kMaxEntries;
  if (truncated) values = values.first(kMaxEntries);
  return absl::StrCat(absl::StrJoin(values, " "), truncated ? "..." : "");
}

class ConcatOffsetOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& concat_dim = ctx->input(0);
    OP_REQUIRES(ctx, concat_dim.shape().dims() == 0,
                KernelError(*ctx, "Concat dim tensor should be a scalar integer, but got shape ",
                            concat_dim.shape().DebugString()));
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      const TensorShape& shape = ctx->input(i).shape();
      OP_REQUIRES(ctx, shape.dims() == 1,
                  KernelError(*ctx, "input ", i, " should be a vector, but got shape ",
                              shape.DebugString()));
    }
    const int64_t cdim = concat_dim.scalar<int32_t>();
    const int64_t dims = ctx->input(1).NumElements();
    const int64_t axis = cdim < 0 ? cdim + dims : cdim;
    OP_REQUIRES(ctx, axis >= 0 && axis < dims,
                KernelError(*ctx, "Concat dim is out of range: ", cdim, " vs. ", dims));
    DispatchIndexType(ctx->input(1).dtype(), [&](auto zero) {
      ComputeOffsets<decltype(zero)>(ctx, axis, dims);
    });
  }

 private:
  template <typename T>
  void ComputeOffsets(OpKernelContext* ctx, int64_t axis, int64_t dims) const {
    using U = std::make_unsigned_t<T>;  // the running offset wraps like TF's
    const Tensor& first = ctx->input(1);
    const T* first_dims = first.data<T>();
    U offset = 0;
    for (int i = 0; i + 1 < ctx->num_inputs(); ++i) {
      const Tensor& shape = ctx->input(i + 1);
      OP_REQUIRES(ctx, shape.NumElements() == dims,
                  KernelError(*ctx, "input ", i, " should contain ", dims,
                              " elements, but got ", shape.NumElements()));
      OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(i, TensorShape({dims})));
      const T* in = shape.data<T>();
      T* out_dims = out->data<T>();
      for (int64_t j = 0; j < dims; ++j) {
        if (j == axis) {
          out_dims[j] = static_cast<T>(offset);
          offset += static_cast<U>(in[j]);
          continue;
        }
        OP_REQUIRES(ctx, in[j] == first_dims[j],
                    KernelError(*ctx, "All dimensions except ", axis, " must match. Input ", i,
                                " has shape [", SummarizeShape<T>(shape),
                                "] and doesn't match input 0 with shape [",
                                SummarizeShape<T>(first), "]."));
        out_dims[j] = 0;
      }
    }
  }
};

}  // namespace

absl::Status RegisterConcatOffsetKernel(KernelRegistry* registry) {
  return registry->Register<ConcatOffsetOp>(
      CpuKernel("ConcatOffset").TypeConstraint("shape_type", IndexTypes()));
}

}  // namespace dflow
