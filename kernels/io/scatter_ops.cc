// Scatter updates of a variable's rows, ref and resource forms, int32 and int64 indices:
// ScatterUpdate, ScatterAdd, ScatterSub, ScatterMul, ScatterDiv, ScatterMin, ScatterMax and
// ResourceScatter{Update,Add,Sub,Mul,Div,Min,Max}. The TF 1 optimizers' sparse paths
// (Adam's m and v) and embedding updates use them.
//
// updates[i, ...] (or a scalar update for every row) is combined into params[indices[i],
// ...]; indices may have any rank (updates.shape = indices.shape + params.shape[1:]).
// Repeated indices apply in index order (ScatterUpdate: the last one wins; TF's parallel
// path for 1024+ indices leaves that to timing). Copy-on-write as every variable update
// (variable_slots.h), and every index is checked before anything is written (TF's serial
// loop stops at a bad index with the rows before it updated). Integer ScatterDiv by 0 is
// TF's resource-form INVALID_ARGUMENT in both forms (TF's ref form dies of SIGFPE), and the
// lowest value divided by -1 wraps to itself rather than trapping.
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/io/register_io_kernels.h"
#include "kernels/io/resource_handle_input.h"
#include "kernels/io/variable_slots.h"

namespace dflow {
namespace {

enum class Combine { kUpdate, kAdd, kSub, kMul, kDiv, kMin, kMax };

template <Combine kCombine, typename T>
void CombineInto(T& p, const T& u) {
  if constexpr (kCombine == Combine::kUpdate) {
    p = u;
  } else if constexpr (kCombine == Combine::kAdd) {
    p += u;
  } else if constexpr (kCombine == Combine::kSub) {
    p -= u;
  } else if constexpr (kCombine == Combine::kMul) {
    p *= u;
  } else if constexpr (kCombine == Combine::kDiv) {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      // min / -1 overflows (SIGFPE on x86): negate with wraparound instead.
      if (u == T(-1)) {
        p = static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(p));
        return;
      }
    }
    p /= u;
  } else if constexpr (kCombine == Combine::kMin) {
    p = std::min(p, u);  // Eigen's cwiseMin: keeps p when either is NaN, as TF
  } else {
    p = std::max(p, u);
  }
}

// TF's SliceDebugString: the coordinates of flat element `flat` of `shape`, "[1,1]".
std::string IndexString(const TensorShape& shape, int64_t flat) {
  if (shape.dims() == 0) return "";
  std::vector<int64_t> coords(shape.dims());
  for (int d = shape.dims() - 1; d >= 0; --d) {
    coords[d] = flat % shape.dim_size(d);
    flat /= shape.dim_size(d);
  }
  return absl::StrCat("[", absl::StrJoin(coords, ","), "]");
}

absl::Status ShapeMismatch(const TensorShape& params, const Tensor& indices,
                           const Tensor& updates) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = [], got ",
      "updates.shape ", updates.shape().DebugString(), ", indices.shape ",
      indices.shape().DebugString(), ", params.shape ", params.DebugString()));
}

// updates.shape must be [] or indices.shape + params.shape[1:]. The resource form words a
// wrong prefix as TF 2.21 does (TF then checks no further; dflow checks the rest too).
absl::Status CheckScatterShapes(const TensorShape& params, const Tensor& indices,
                                const Tensor& updates, bool resource) {
  if (params.dims() < 1) {
    if (resource) return ShapeMismatch(params, indices, updates);  // TF's first check there
    return absl::InvalidArgumentError(
        absl::StrCat("params must be at least 1-D, got shape ", params.DebugString()));
  }
  const TensorShape& u = updates.shape();
  const TensorShape& ind = indices.shape();
  if (u.dims() == 0) return absl::OkStatus();
  if (u.dims() != ind.dims() + params.dims() - 1) return ShapeMismatch(params, indices, updates);
  for (int d = 0; d < ind.dims(); ++d) {
    if (u.dim_size(d) == ind.dim_size(d)) continue;
    if (!resource) return ShapeMismatch(params, indices, updates);
    return absl::InvalidArgumentError(absl::StrCat("The shape of indices (", ind.DebugString(),
                                                   ") must be a prefix of the shape of updates (",
                                                   u.DebugString(), ")"));
  }
  for (int d = 1; d < params.dims(); ++d) {
    if (params.dim_size(d) != u.dim_size(d - 1 + ind.dims())) {
      return ShapeMismatch(params, indices, updates);
    }
  }
  return absl::OkStatus();
}

template <typename Tindex>
absl::Status CheckScatterIndices(const Tensor& indices, int64_t rows) {
  const Tindex* idx = indices.data<Tindex>();
  for (int64_t i = 0; i < indices.NumElements(); ++i) {
    if (idx[i] < 0 || idx[i] >= rows) {
      return absl::InvalidArgumentError(absl::StrCat("indices", IndexString(indices.shape(), i),
                                                     " = ", idx[i], " is not in [0, ", rows, ")"));
    }
  }
  return absl::OkStatus();
}

// Combines the updates into rows of `params` (already writable), columns sharded.
template <Combine kCombine, typename T, typename Tindex>
void Scatter(OpKernelContext* ctx, const Tensor& indices, const Tensor& updates,
             Tensor* params) {
  const int64_t n = indices.NumElements();
  const int64_t inner = DimProduct(params->shape(), 1, params->shape().dims());
  const bool scalar = updates.shape().dims() == 0;
  const Tindex* idx = indices.data<Tindex>();
  const T* u = updates.data<T>();
  T* p = params->data<T>();
  ParallelForElements(ctx, inner, 2 * n, [=](int64_t begin, int64_t end) {
    for (int64_t i = 0; i < n; ++i) {
      T* row = p + static_cast<int64_t>(idx[i]) * inner;
      if (scalar) {
        for (int64_t j = begin; j < end; ++j) CombineInto<kCombine>(row[j], *u);
      } else {
        const T* from = u + i * inner;
        for (int64_t j = begin; j < end; ++j) CombineInto<kCombine>(row[j], from[j]);
      }
    }
  });
}

template <Combine kCombine>
constexpr bool kArithmetic = kCombine != Combine::kUpdate;

template <Combine kCombine, typename Tindex, bool kResource>
class ScatterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, Slot slot, SlotInput(*ctx, 0, kResource));
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    {
      SlotLocks locks({slot});
      Tensor* params = slot.value;
      if (kResource) {
        OP_REQUIRES(ctx, params->IsInitialized(),
                    VariableNotFound(ctx->input(0).scalar<ResourceHandleProto>()));
        OP_REQUIRES(ctx, params->dtype() == updates.dtype(),
                    absl::InvalidArgumentError(
                        "DType of scatter resource and updates does not match."));
      } else {
        OP_REQUIRES_OK(ctx, CheckInitialized(slot));
      }
      OP_REQUIRES_OK(ctx, CheckScatterShapes(params->shape(), indices, updates, kResource));
      if (indices.NumElements() > 0) {
        OP_REQUIRES_OK(ctx, CheckScatterIndices<Tindex>(indices, params->shape().dim_size(0)));
        OP_REQUIRES_OK(ctx, Run(ctx, indices, updates, params));
      }
    }
    if (!kResource) ctx->set_output_ref(0, ctx->input_ref(0));
  }

 private:
  absl::Status Run(OpKernelContext* ctx, const Tensor& indices, const Tensor& updates,
                   Tensor* params) const {
    const Tensor* inputs[] = {&updates};
    if constexpr (!kArithmetic<kCombine>) {
      DFLOW_RETURN_IF_ERROR(MakeWritable(ctx, params, inputs));
      DispatchByElementSize(params->dtype(), [&](auto zero) {
        Scatter<kCombine, decltype(zero), Tindex>(ctx, indices, updates, params);
      });
      return absl::OkStatus();
    } else {
      absl::Status status = absl::OkStatus();
      const bool supported = DispatchNumeric(params->dtype(), [&](auto zero) {
        using T = decltype(zero);
        if constexpr (std::is_same_v<T, bool>) {
          status = absl::UnimplementedError("arithmetic scatter of bool");
        } else {
          if constexpr (kCombine == Combine::kDiv && std::is_integral_v<T>) {
            const auto u = updates.flat<T>();
            if (std::find(u.begin(), u.end(), T(0)) != u.end()) {
              status = absl::InvalidArgumentError("updates must not contain 0");
              return;
            }
          }
          status = MakeWritable(ctx, params, inputs);
          if (status.ok()) Scatter<kCombine, T, Tindex>(ctx, indices, updates, params);
        }
      });
      if (!supported) {
        return absl::UnimplementedError(absl::StrCat(type_string(), " of ",
                                                     DataTypeString(params->dtype())));
      }
      return status;
    }
  }
};

// The dtypes each combine has kernels for: any copyable type for ScatterUpdate, every
// integer and float type for arithmetic, the real ones TF allows for min and max.
std::vector<DataType> TypesFor(Combine combine) {
  if (combine == Combine::kUpdate) return CopyableTypes();
  if (combine == Combine::kMin || combine == Combine::kMax) {
    return {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64};
  }
  return {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_INT16, DT_INT8,
          DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64};
}

template <Combine kCombine>
absl::Status RegisterScatter(KernelRegistry* r, const std::string& name) {
  const std::vector<DataType> types = TypesFor(kCombine);
  const std::string ref_op = "Scatter" + name;
  const std::string resource_op = "ResourceScatter" + name;
  DFLOW_RETURN_IF_ERROR((r->Register<ScatterOp<kCombine, int32_t, false>>(
      CpuKernel(ref_op).TypeConstraint("T", types).TypeConstraint<int32_t>("Tindices"))));
  DFLOW_RETURN_IF_ERROR((r->Register<ScatterOp<kCombine, int64_t, false>>(
      CpuKernel(ref_op).TypeConstraint("T", types).TypeConstraint<int64_t>("Tindices"))));
  DFLOW_RETURN_IF_ERROR((r->Register<ScatterOp<kCombine, int32_t, true>>(
      CpuKernel(resource_op).TypeConstraint("dtype", types).TypeConstraint<int32_t>("Tindices"))));
  return r->Register<ScatterOp<kCombine, int64_t, true>>(
      CpuKernel(resource_op).TypeConstraint("dtype", types).TypeConstraint<int64_t>("Tindices"));
}

}  // namespace

absl::Status RegisterScatterKernels(KernelRegistry* r) {
  DFLOW_RETURN_IF_ERROR(RegisterScatter<Combine::kUpdate>(r, "Update"));
  DFLOW_RETURN_IF_ERROR(RegisterScatter<Combine::kAdd>(r, "Add"));
  DFLOW_RETURN_IF_ERROR(RegisterScatter<Combine::kSub>(r, "Sub"));
  DFLOW_RETURN_IF_ERROR(RegisterScatter<Combine::kMul>(r, "Mul"));
  DFLOW_RETURN_IF_ERROR(RegisterScatter<Combine::kDiv>(r, "Div"));
  DFLOW_RETURN_IF_ERROR(RegisterScatter<Combine::kMin>(r, "Min"));
  return RegisterScatter<Combine::kMax>(r, "Max");
}

}  // namespace dflow
