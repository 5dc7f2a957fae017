// ParseExample (v1): serialized tf.train.Example protos -> dense and sparse tensors, as
// TF's example parsing does, so SavedModels' classify/regress signatures (fed
// serialized Examples) run.
//
// Inputs: serialized [B] string, names [B] or [0] string, Nsparse sparse keys, Ndense
// dense keys (string scalars), Ndense dense defaults. Outputs: Nsparse sparse indices
// int64 [N,2], Nsparse sparse values [N], Nsparse sparse shapes int64 [2] = [B, longest],
// Ndense dense values [B] + dense_shapes[k].
// Dense rules (TF's): a present feature must hold exactly prod(dense_shape) values of the
// key's dtype (float_list for float, int64_list for int64, bytes_list for string); a
// missing one takes its default, and with an empty default it is an error.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/io/register_io_kernels.h"
#include "proto/example.pb.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

// The values of `feature` appended to `out` (of `dtype`'s C++ type), or an error.
absl::Status AppendValues(const Feature& feature, DataType dtype, std::vector<float>* floats,
                          std::vector<int64_t>* ints, std::vector<std::string>* strings,
                          int64_t* count) {
  switch (dtype) {
    case DT_FLOAT:
      if (feature.kind_case() != Feature::kFloatList) break;
      floats->insert(floats->end(), feature.float_list().value().begin(),
                     feature.float_list().value().end());
      *count = feature.float_list().value_size();
      return absl::OkStatus();
    case DT_INT64:
      if (feature.kind_case() != Feature::kInt64List) break;
      ints->insert(ints->end(), feature.int64_list().value().begin(),
                   feature.int64_list().value().end());
      *count = feature.int64_list().value_size();
      return absl::OkStatus();
    case DT_STRING:
      if (feature.kind_case() != Feature::kBytesList) break;
      strings->insert(strings->end(), feature.bytes_list().value().begin(),
                      feature.bytes_list().value().end());
      *count = feature.bytes_list().value_size();
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported feature type ", DataTypeString(dtype)));
  }
  static const char* kKinds[] = {"none", "bytes", "float", "int64"};
  return absl::InvalidArgumentError(absl::StrCat("Data types don't match. Data type: ",
                                                 kKinds[feature.kind_case()],
                                                 " but expected type: ", DataTypeString(dtype)));
}

// Values gathered for one key over the batch, in example order.
struct Column {
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<int64_t> counts;  // values per example (sparse keys)
};

template <typename T>
void CopyInto(const std::vector<T>& values, Tensor* out) {
  std::copy(values.begin(), values.end(), out->flat<T>().begin());
}

void CopyColumn(const Column& column, DataType dtype, Tensor* out) {
  if (dtype == DT_FLOAT) CopyInto(column.floats, out);
  if (dtype == DT_INT64) CopyInto(column.ints, out);
  if (dtype == DT_STRING) CopyInto(column.strings, out);
}

// Appends `n` values of the default tensor `def` to `column`.
void AppendDefault(const Tensor& def, DataType dtype, Column* column) {
  if (dtype == DT_FLOAT) column->floats.insert(column->floats.end(), def.flat<float>().begin(), def.flat<float>().end());
  if (dtype == DT_INT64) column->ints.insert(column->ints.end(), def.flat<int64_t>().begin(), def.flat<int64_t>().end());
  if (dtype == DT_STRING) column->strings.insert(column->strings.end(), def.flat<std::string>().begin(), def.flat<std::string>().end());
}

class ParseExampleOp : public OpKernel {
 public:
  explicit ParseExampleOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    int64_t nsparse = 0, ndense = 0;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("Nsparse", &nsparse));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("Ndense", &ndense));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("sparse_types", &sparse_types_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("Tdense", &dense_types_));
    nsparse_ = static_cast<int>(nsparse);
    ndense_ = static_cast<int>(ndense);
    auto shapes = ctx->def().attr().find("dense_shapes");
    OP_REQUIRES(ctx, shapes != ctx->def().attr().end() && shapes->second.list().shape_size() == ndense_,
                absl::InvalidArgumentError("ParseExample: dense_shapes must have Ndense entries"));
    for (const TensorShapeProto& proto : shapes->second.list().shape()) {
      std::vector<int64_t> dims;
      for (const auto& dim : proto.dim()) {
        OP_REQUIRES(ctx, dim.size() >= 0,
                    absl::UnimplementedError("ParseExample: dense shapes with unknown "
                                             "dimensions (variable-length dense features) "
                                             "are not supported"));
        dims.push_back(dim.size());
      }
      dense_shapes_.push_back(TensorShape(absl::MakeConstSpan(dims)));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& serialized = ctx->input(0);
    OP_REQUIRES(ctx, serialized.shape().dims() <= 1,
                KernelError(*ctx, "serialized must be a vector, got shape ",
                            serialized.shape().DebugString()));
    const int64_t batch = serialized.NumElements();
    std::vector<Example> examples(batch);
    for (int64_t b = 0; b < batch; ++b) {
      OP_REQUIRES(ctx, examples[b].ParseFromString(serialized.flat<std::string>()[b]),
                  KernelError(*ctx, "Could not parse example input, value: '",
                              serialized.flat<std::string>()[b].substr(0, 64), "'"));
    }
    for (int k = 0; k < ndense_; ++k) ParseDense(ctx, examples, k);
    for (int k = 0; k < nsparse_; ++k) ParseSparse(ctx, examples, k);
  }

 private:
  const std::string& Key(OpKernelContext* ctx, int input) const {
    return ctx->input(input).flat<std::string>()[0];
  }

  void ParseDense(OpKernelContext* ctx, const std::vector<Example>& examples, int k) {
    const std::string& key = Key(ctx, 2 + nsparse_ + k);
    const Tensor& def = ctx->input(2 + nsparse_ + ndense_ + k);
    const DataType dtype = dense_types_[k];
    const int64_t per_example = dense_shapes_[k].num_elements();
    OP_REQUIRES(ctx, def.NumElements() == 0 || def.NumElements() == per_example,
                KernelError(*ctx, "default for dense key '", key, "' has ",
                            def.NumElements(), " values, the shape needs ", per_example));
    Column column;
    for (size_t b = 0; b < examples.size(); ++b) {
      const auto& features = examples[b].features().feature();
      auto it = features.find(key);
      if (it == features.end()) {
        OP_REQUIRES(ctx, def.NumElements() > 0,
                    KernelError(*ctx, "Name: <unknown>, Feature: ", key, " (data type: ",
                                DataTypeString(dtype), ") is required but could not be found."));
        AppendDefault(def, dtype, &column);
        continue;
      }
      int64_t count = 0;
      absl::Status status = AppendValues(it->second, dtype, &column.floats, &column.ints,
                                         &column.strings, &count);
      OP_REQUIRES(ctx, status.ok(),
                  KernelError(*ctx, "Name: <unknown>, Key: ", key, ", Index: ", b, ".  ",
                              status.message()));
      OP_REQUIRES(ctx, count == per_example,
                  KernelError(*ctx, "Name: <unknown>, Key: ", key, ", Index: ", b,
                              ".  Number of values != expected.  Values size: ", count,
                              " but output shape: ", dense_shapes_[k].DebugString()));
    }
    std::vector<int64_t> dims = {static_cast<int64_t>(examples.size())};
    for (int64_t d : dense_shapes_[k].dim_sizes()) dims.push_back(d);
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out,
                        ctx->allocate_output(3 * nsparse_ + k, TensorShape(absl::MakeConstSpan(dims))));
    CopyColumn(column, dtype, out);
  }

  void ParseSparse(OpKernelContext* ctx, const std::vector<Example>& examples, int k) {
    const std::string& key = Key(ctx, 2 + k);
    const DataType dtype = sparse_types_[k];
    Column column;
    for (size_t b = 0; b < examples.size(); ++b) {
      const auto& features = examples[b].features().feature();
      auto it = features.find(key);
      int64_t count = 0;
      if (it != features.end()) {
        absl::Status status = AppendValues(it->second, dtype, &column.floats, &column.ints,
                                           &column.strings, &count);
        OP_REQUIRES(ctx, status.ok(),
                    KernelError(*ctx, "Name: <unknown>, Key: ", key, ", Index: ", b, ".  ",
                                status.message()));
      }
      column.counts.push_back(count);
    }
    int64_t total = 0, longest = 0;
    for (int64_t c : column.counts) {
      total += c;
      longest = std::max(longest, c);
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor* indices, ctx->allocate_output(k, TensorShape({total, 2})));
    int64_t* index = indices->data<int64_t>();
    for (size_t b = 0; b < column.counts.size(); ++b) {
      for (int64_t j = 0; j < column.counts[b]; ++j) {
        *index++ = static_cast<int64_t>(b);
        *index++ = j;
      }
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor* values, ctx->allocate_output(nsparse_ + k, TensorShape({total})));
    CopyColumn(column, dtype, values);
    OP_ASSIGN_OR_RETURN(ctx, Tensor* shape, ctx->allocate_output(2 * nsparse_ + k, TensorShape({2})));
    shape->flat<int64_t>()[0] = static_cast<int64_t>(examples.size());
    shape->flat<int64_t>()[1] = longest;
  }

  int nsparse_ = 0;
  int ndense_ = 0;
  std::vector<DataType> sparse_types_;
  std::vector<DataType> dense_types_;
  std::vector<TensorShape> dense_shapes_;
};

}  // namespace

absl::Status RegisterParseExampleKernels(KernelRegistry* registry) {
  return registry->Register<ParseExampleOp>(KernelDefBuilder("ParseExample").Device("CPU"));
}

}  // namespace dflow
