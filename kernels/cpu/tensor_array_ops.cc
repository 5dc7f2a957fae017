// TensorArrayV3 family kernels on the per-step TensorArray (tensor_array.h): TensorArrayV3,
// Write/Read/Gather/Scatter/Concat/Split/Size/Close V3, TensorArrayGradV3 and
// TensorArrayGradWithShape, with TF 2.21's semantics and error texts.
//
// The float `flow` tensors carry no data: they only order the ops, as in TF, so each op
// passes its flow_in through as flow_out.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/step_resource_handle.h"
#include "kernels/cpu/tensor_array.h"

namespace dflow {
namespace {

const char kTypeName[] = "N10tensorflow11TensorArrayE";

absl::StatusOr<std::shared_ptr<TensorArray>> ArrayInput(const OpKernelContext& ctx) {
  return LookupStepResource<TensorArray>(ctx, 0, kTypeName);
}

// The int32 scalar index input `i`.
absl::StatusOr<int32_t> IndexInput(const OpKernelContext& ctx, int i) {
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DT_INT32 || t.shape().dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray index must be scalar, but had shape: ", t.shape().DebugString()));
  }
  return t.scalar<int32_t>();
}

// Values move between slots and packed tensors as bytes, or as strings.
absl::Status CheckMovable(DataType dtype) {
  if (dtype == DT_STRING || DataTypeSize(dtype) > 0) return absl::OkStatus();
  return absl::UnimplementedError(
      absl::StrCat("TensorArray cannot pack or slice ", DataTypeString(dtype), " values"));
}

// A value written into the array must have its dtype (checked before slicing it).
absl::Status CheckWriteDtype(const TensorArray& array, DataType dtype) {
  if (array.dtype() == dtype) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("TensorArray dtype is ",
                                                 DataTypeString(array.dtype()),
                                                 " but Op is trying to write dtype ",
                                                 DataTypeString(dtype), "."));
}

absl::Status CheckReadDtype(const TensorArray& array, DataType requested) {
  if (array.dtype() == requested) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("TensorArray dtype is ",
                                                 DataTypeString(array.dtype()),
                                                 " but Op requested dtype ",
                                                 DataTypeString(requested), "."));
}

// Outputs the handle of array `name` (and a zero flow at `flow_output`, when >= 0).
absl::Status OutputHandle(OpKernelContext* ctx, const std::string& name, int flow_output) {
  DFLOW_ASSIGN_OR_RETURN(Tensor * handle, ctx->allocate_output(0, TensorShape()));
  WriteStepResourceHandle(*ctx, name, kTypeName, handle);
  if (flow_output >= 0 && ctx->num_outputs() > flow_output) {
    DFLOW_ASSIGN_OR_RETURN(Tensor * flow, ctx->allocate_output(flow_output, TensorShape()));
    flow->scalar<float>() = 0.0f;
  }
  return absl::OkStatus();
}

class TensorArrayOp : public CheapOpKernel {
 public:
  explicit TensorArrayOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &options_.dtype));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("element_shape", &options_.element_shape));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dynamic_size", &options_.dynamic_size));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("clear_after_read", &options_.clear_after_read));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("identical_element_shapes",
                                     &options_.identical_element_shapes));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("tensor_array_name", &name_));
    if (name_.empty()) name_ = ctx->name();  // as TF
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& size = ctx->input(0);
    OP_REQUIRES(ctx, size.dtype() == DT_INT32 && size.shape().dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorArray size must be scalar, but had shape: ", size.shape().DebugString())));
    TensorArray::Options options = options_;
    options.size = size.scalar<int32_t>();
    OP_REQUIRES(ctx, options.size >= 0, absl::InvalidArgumentError("Size should be >= 0."));
    OP_REQUIRES_OK(ctx, TensorArray::CheckSize(options.size));
    OP_ASSIGN_OR_RETURN(ctx, StepResources * resources, StepResourcesOf(*ctx));
    const std::string name = resources->UniqueName(name_);
    auto array = std::make_shared<TensorArray>(name, options);
    OP_REQUIRES(ctx, resources->AddIfAbsent(name, array) == array,
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorArray name ", name, " is already taken in this step")));
    OP_REQUIRES_OK(ctx, OutputHandle(ctx, name, 1));
  }

 private:
  TensorArray::Options options_;
  std::string name_;
};

class TensorArrayWriteOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<TensorArray> array, ArrayInput(*ctx));
    OP_ASSIGN_OR_RETURN(ctx, const int32_t index, IndexInput(*ctx, 1));
    OP_REQUIRES_OK(ctx, array->Write(index, ctx->input(2), ctx->allocator()));
    ctx->set_output(0, ctx->input(3));
  }
};

class TensorArrayReadOp : public CheapOpKernel {
 public:
  explicit TensorArrayReadOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<TensorArray> array, ArrayInput(*ctx));
    OP_REQUIRES_OK(ctx, array->CheckOpen());
    OP_REQUIRES_OK(ctx, CheckReadDtype(*array, dtype_));
    OP_ASSIGN_OR_RETURN(ctx, const int32_t index, IndexInput(*ctx, 1));
    OP_ASSIGN_OR_RETURN(ctx, Tensor value, array->Read(index, ctx->allocator()));
    ctx->set_output(0, std::move(value));
  }

 private:
  DataType dtype_ = DT_INVALID;
};

// Packs `values` (same shape each) into output 0 as [n, element...].
absl::Status Pack(OpKernelContext* ctx, const std::vector<Tensor>& values,
                  const TensorShape& element_shape) {
  std::vector<int64_t> dims = {static_cast<int64_t>(values.size())};
  for (int64_t d : element_shape.dim_sizes()) dims.push_back(d);
  DFLOW_ASSIGN_OR_RETURN(const TensorShape shape, OutputShape(*ctx, dims));
  DFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
  if (out->dtype() == DT_STRING) {
    for (size_t i = 0; i < values.size(); ++i) {
      for (int64_t j = 0; j < element_shape.num_elements(); ++j) {
        out->data<std::string>()[i * element_shape.num_elements() + j] = values[i].data<std::string>()[j];
      }
    }
    return absl::OkStatus();
  }
  char* dst = static_cast<char*>(out->raw_data());
  for (const Tensor& v : values) {
    if (v.TotalBytes() > 0) std::memcpy(dst, v.raw_data(), v.TotalBytes());
    dst += v.TotalBytes();
  }
  return absl::OkStatus();
}

class TensorArrayGatherOp : public OpKernel {
 public:
  explicit TensorArrayGatherOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
    if (ctx->HasAttr("element_shape")) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("element_shape", &element_shape_));
    }
  }
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<TensorArray> array, ArrayInput(*ctx));
    OP_REQUIRES_OK(ctx, array->CheckOpen());
    OP_REQUIRES_OK(ctx, CheckReadDtype(*array, dtype_));
    OP_REQUIRES_OK(ctx, CheckMovable(dtype_));
    const Tensor& indices = ctx->input(1);
    OP_REQUIRES(ctx, indices.shape().dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected indices to be a vector, but received shape: ",
                    indices.shape().DebugString())));
    if (indices.NumElements() == 0) {
      OP_ASSIGN_OR_RETURN(ctx, PartialShape shape, array->ElementShape().Merge(element_shape_));
      OP_REQUIRES(ctx, shape.IsFullyDefined(),
                  absl::UnimplementedError(absl::StrCat(
                      "TensorArray has size zero, but element shape ", shape.ToString(),
                      " is not fully defined. Currently only static shapes are supported when "
                      "packing zero-size TensorArrays.")));
      OP_ASSIGN_OR_RETURN(ctx, const TensorShape element, TensorShape::Make(shape.dims()));
      OP_REQUIRES_OK(ctx, Pack(ctx, {}, element));
      return;
    }
    std::vector<Tensor> values;
    for (int64_t i = 0; i < indices.NumElements(); ++i) {
      OP_ASSIGN_OR_RETURN(ctx, Tensor value,
                          array->Read(indices.data<int32_t>()[i], ctx->allocator()));
      OP_REQUIRES(ctx, i == 0 || value.shape() == values[0].shape(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "TensorArray has inconsistent shapes.  Index 0 has shape: ",
                      values[0].shape().DebugString(), " but index ", i,
                      " has shape: ", value.shape().DebugString())));
      values.push_back(std::move(value));
    }
    OP_REQUIRES_OK(ctx, Pack(ctx, values, values[0].shape()));
  }

 private:
  DataType dtype_ = DT_INVALID;
  PartialShape element_shape_;
};

class TensorArrayConcatOp : public OpKernel {
 public:
  explicit TensorArrayConcatOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
    if (ctx->HasAttr("element_shape_except0")) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("element_shape_except0", &element_shape_except0_));
    }
  }
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<TensorArray> array, ArrayInput(*ctx));
    OP_REQUIRES_OK(ctx, array->CheckOpen());
    OP_REQUIRES_OK(ctx, CheckReadDtype(*array, dtype_));
    OP_REQUIRES(ctx, DataTypeSize(dtype_) > 0,
                absl::UnimplementedError(absl::StrCat("TensorArrayConcatV3 of ",
                                                      DataTypeString(dtype_))));
    const int64_t size = array->Size();
    OP_ASSIGN_OR_RETURN(ctx, Tensor * lengths, ctx->allocate_output(1, TensorShape({size})));
    if (size == 0) {
      OP_REQUIRES(ctx, element_shape_except0_.IsFullyDefined(),
                  absl::UnimplementedError(absl::StrCat(
                      "TensorArray has size zero, but element_shape_except0 ",
                      element_shape_except0_.ToString(),
                      " is not fully defined. Currently only static shapes are supported when "
                      "concatenating zero-size TensorArrays.")));
      std::vector<int64_t> dims = {0};
      for (int64_t d : element_shape_except0_.dims()) dims.push_back(d);
      OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, OutputShape(*ctx, dims));
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape).status());
      return;
    }
    std::vector<Tensor> values;
    int64_t rows = 0;
    for (int64_t i = 0; i < size; ++i) {
      OP_ASSIGN_OR_RETURN(ctx, Tensor value, array->Read(i, ctx->allocator()));
      OP_REQUIRES(ctx, value.shape().dims() > 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Concat saw a scalar shape at index ", i,
                      " but requires at least vectors.  Did you mean to call pack?")));
      OP_REQUIRES(ctx, i == 0 || ExceptFirst(value.shape()) == ExceptFirst(values[0].shape()),
                  absl::InvalidArgumentError(absl::StrCat(
                      "TensorArray has inconsistent shapes.  Index 0 has (excepting dimension "
                      "0) shape: ", ExceptFirst(values[0].shape()).DebugString(), " but index ",
                      i, " has (excepting dimension 0) shape: ",
                      ExceptFirst(value.shape()).DebugString())));
      lengths->data<int64_t>()[i] = value.shape().dim_size(0);
      OP_REQUIRES(ctx, !__builtin_add_overflow(rows, value.shape().dim_size(0), &rows),
                  absl::InvalidArgumentError("TensorArrayConcatV3: the rows overflow int64"));
      values.push_back(std::move(value));
    }
    // values[0]'s dims with all the rows in the first (not a range-for over a temporary
    // shape's span, which would dangle).
    const auto first = values[0].shape().dim_sizes();
    std::vector<int64_t> dims(first.begin(), first.end());
    dims[0] = rows;
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, OutputShape(*ctx, dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, shape));
    char* dst = static_cast<char*>(out->raw_data());
    for (const Tensor& v : values) {
      if (v.TotalBytes() > 0) std::memcpy(dst, v.raw_data(), v.TotalBytes());
      dst += v.TotalBytes();
    }
  }

 private:
  static TensorShape ExceptFirst(const TensorShape& shape) {
    return TensorShape(shape.dim_sizes().subspan(1));
  }

  DataType dtype_ = DT_INVALID;
  PartialShape element_shape_except0_;
};

absl::Status CheckAtLeastVector(const Tensor& value) {
  if (value.shape().dims() > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Expected value to be at least a vector, but received shape: ", value.shape().DebugString()));
}

class TensorArrayScatterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<TensorArray> array, ArrayInput(*ctx));
    const Tensor& indices = ctx->input(1);
    const Tensor& value = ctx->input(2);
    OP_REQUIRES_OK(ctx, CheckWriteDtype(*array, value.dtype()));
    OP_REQUIRES_OK(ctx, CheckMovable(value.dtype()));
    OP_REQUIRES(ctx, indices.shape().dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected indices to be a vector, but received shape: ",
                    indices.shape().DebugString())));
    OP_REQUIRES_OK(ctx, CheckAtLeastVector(value));
    const int64_t n = indices.NumElements();
    OP_REQUIRES(ctx, n == value.shape().dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected len(indices) == values.shape[0], but saw: ", n, " vs. ",
                    value.shape().dim_size(0))));
    const int32_t* at = indices.data<int32_t>();
    const TensorShape element_shape(value.shape().dim_sizes().subspan(1));
    if (!array->options().dynamic_size && n > 0) {
      const int32_t max_index = *std::max_element(at, at + n);
      OP_REQUIRES(ctx, max_index < array->Size(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Max scatter index must be < array size (", max_index, " vs. ",
                      array->Size(), ")")));
    }
    for (int64_t i = 0; i < n; ++i) {
      OP_ASSIGN_OR_RETURN(ctx, Tensor element, CopyRows(ctx, value, i, element_shape));
      OP_REQUIRES_OK(ctx, array->Write(at[i], element, ctx->allocator()));
    }
    ctx->set_output(0, ctx->input(3));
  }
};

class TensorArraySplitOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<TensorArray> array, ArrayInput(*ctx));
    const Tensor& value = ctx->input(1);
    const Tensor& lengths = ctx->input(2);
    OP_REQUIRES_OK(ctx, CheckWriteDtype(*array, value.dtype()));
    OP_REQUIRES_OK(ctx, CheckMovable(value.dtype()));
    OP_REQUIRES_OK(ctx, CheckAtLeastVector(value));
    OP_REQUIRES(ctx, lengths.shape().dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected lengths to be a vector, received shape: ",
                    lengths.shape().DebugString())));
    const int64_t n = lengths.NumElements();
    const int64_t* length = lengths.data<int64_t>();
    int64_t total = 0;
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(ctx, length[i] >= 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "TensorArraySplitV3: lengths[", i, "] is negative: ", length[i])));
      OP_REQUIRES(ctx, !__builtin_add_overflow(total, length[i], &total),
                  absl::InvalidArgumentError("TensorArraySplitV3: the lengths overflow int64"));
    }
    OP_REQUIRES(ctx, total == value.shape().dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected sum of lengths to be equal to values.shape[0], but sum of lengths "
                    "is ", total, " and value's shape is: ", value.shape().DebugString())));
    OP_REQUIRES(ctx, array->options().dynamic_size || array->Size() == n,
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorArray's size is not equal to the size of lengths (", array->Size(),
                    " vs. ", n, "), and the TensorArray is not marked as dynamically "
                    "resizeable")));
    int64_t begin = 0;
    for (int64_t i = 0; i < n; ++i) {
      std::vector<int64_t> dims(value.shape().dim_sizes().begin(), value.shape().dim_sizes().end());
      dims[0] = length[i];
      OP_ASSIGN_OR_RETURN(ctx, Tensor element,
                          CopyRows(ctx, value, begin, TensorShape(absl::MakeConstSpan(dims))));
      OP_REQUIRES_OK(ctx, array->Write(i, element, ctx->allocator()));
      begin += length[i];
    }
    ctx->set_output(0, ctx->input(3));
  }
};

class TensorArraySizeOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<TensorArray> array, ArrayInput(*ctx));
    OP_REQUIRES_OK(ctx, array->CheckOpen());
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<int32_t>() = static_cast<int32_t>(array->Size());
  }
};

class TensorArrayCloseOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<TensorArray> array, ArrayInput(*ctx));
    array->Close();
  }
};

// TensorArrayGradV3 / TensorArrayGradWithShape: the gradient array "<forward>@<source>",
// created on first use with the forward array's size, summing repeated writes.
class TensorArrayGradOp : public CheapOpKernel {
 public:
  explicit TensorArrayGradOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("source", &source_));
    with_shape_ = type_string() == "TensorArrayGradWithShape";
  }
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<TensorArray> forward, ArrayInput(*ctx));
    OP_REQUIRES_OK(ctx, forward->CheckOpen());
    TensorArray::Options options;
    options.dtype = forward->dtype();
    options.size = forward->Size();
    options.identical_element_shapes = forward->options().identical_element_shapes;
    options.multiple_writes_aggregate = true;
    options.element_shape = forward->ElementShape();
    if (with_shape_) {
      OP_ASSIGN_OR_RETURN(ctx, options.element_shape, Prepend(*ctx, options.element_shape));
    }
    OP_ASSIGN_OR_RETURN(ctx, StepResources * resources, StepResourcesOf(*ctx));
    const std::string name = absl::StrCat(forward->name(), "@", source_);
    auto grad = std::dynamic_pointer_cast<TensorArray>(
        resources->AddIfAbsent(name, std::make_shared<TensorArray>(name, options)));
    OP_REQUIRES(ctx, grad != nullptr && grad->options().multiple_writes_aggregate,
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorArray name ", name, " is taken by another resource of this step")));
    OP_REQUIRES_OK(ctx, OutputHandle(ctx, name, -1));
    ctx->set_output(1, ctx->input(1));
  }

 private:
  // shape_to_prepend (input 2) followed by the forward element shape.
  static absl::StatusOr<PartialShape> Prepend(const OpKernelContext& ctx,
                                              const PartialShape& element) {
    const Tensor& prefix = ctx.input(2);
    if (prefix.shape().dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape_to_prepend must be a vector, got shape ", prefix.shape().DebugString()));
    }
    if (!element.rank_known()) return PartialShape();
    std::vector<int64_t> dims = ReadIndices(prefix);
    for (int64_t d : element.dims()) dims.push_back(d);
    return PartialShape(std::move(dims));
  }

  std::string source_;
  bool with_shape_ = false;
};

}  // namespace

absl::Status RegisterTensorArrayKernels(KernelRegistry* r) {
  DFLOW_RETURN_IF_ERROR(r->Register<TensorArrayOp>(CpuKernel("TensorArrayV3")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorArrayWriteOp>(CpuKernel("TensorArrayWriteV3")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorArrayReadOp>(CpuKernel("TensorArrayReadV3")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorArrayGatherOp>(CpuKernel("TensorArrayGatherV3")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorArrayScatterOp>(CpuKernel("TensorArrayScatterV3")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorArrayConcatOp>(CpuKernel("TensorArrayConcatV3")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorArraySplitOp>(CpuKernel("TensorArraySplitV3")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorArraySizeOp>(CpuKernel("TensorArraySizeV3")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorArrayCloseOp>(CpuKernel("TensorArrayCloseV3")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorArrayGradOp>(CpuKernel("TensorArrayGradV3")));
  return r->Register<TensorArrayGradOp>(CpuKernel("TensorArrayGradWithShape"));
}

}  // namespace dflow
