// ScalarSummary and MergeSummary: serialized tensorflow.Summary protos in string scalars,
// byte-identical to TF's. The protobuf wire format is written by hand (only two messages
// and a few fields are involved, see below) so the kernels need no proto library:
//   message Summary { repeated Value value = 1; }
//   message Value { string tag = 1; oneof value { float simple_value = 2; ... } }
// MergeSummary copies each input's Value records verbatim, so values of any kind (images,
// histograms) merge as they do in TF.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// ---------------------------------------------------------------------------------
// Wire format (protobuf encoding): a key varint (field << 3 | wire type), then the value.

enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void AppendLengthDelimited(int field, std::string_view bytes, std::string* out) {
  AppendVarint(static_cast<uint64_t>(field) << 3 | kLengthDelimited, out);
  AppendVarint(bytes.size(), out);
  out->append(bytes);
}

// Proto3 leaves an empty string out; a oneof member (simple_value) is always written.
std::string EncodeScalarValue(const std::string& tag, float value) {
  std::string out;
  if (!tag.empty()) AppendLengthDelimited(1, tag, &out);
  AppendVarint(2 << 3 | kFixed32, &out);
  char bytes[4];
  std::memcpy(bytes, &value, 4);  // little-endian, as the wire format (x86/ARM hosts)
  out.append(bytes, 4);
  return out;
}

// Reads one field from the front of `in`; nullopt on malformed input.
struct Field {
  int number;
  WireType type;
  std::string_view bytes;  // the payload of a length-delimited field
};

std::optional<uint64_t> ReadVarint(std::string_view* in) {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in->empty()) return std::nullopt;
    const uint8_t byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  return std::nullopt;
}

std::optional<Field> ReadField(std::string_view* in) {
  const std::optional<uint64_t> key = ReadVarint(in);
  if (!key || (*key >> 3) == 0) return std::nullopt;
  Field field{static_cast<int>(*key >> 3), static_cast<WireType>(*key & 7), {}};
  size_t skip = 0;
  switch (field.type) {
    case kVarint:
      if (!ReadVarint(in)) return std::nullopt;
      return field;
    case kFixed64:
      skip = 8;
      break;
    case kFixed32:
      skip = 4;
      break;
    case kLengthDelimited: {
      const std::optional<uint64_t> size = ReadVarint(in);
      if (!size || *size > in->size()) return std::nullopt;
      skip = *size;
      field.bytes = in->substr(0, skip);
      break;
    }
    default:
      return std::nullopt;  // groups are not used by summary.proto
  }
  if (skip > in->size()) return std::nullopt;
  in->remove_prefix(skip);
  return field;
}

// One Summary.Value record: its bytes and its tag (the last field 1, as a parser keeps).
struct ValueRecord {
  std::string_view bytes;
  std::string_view tag;
};

std::optional<std::vector<ValueRecord>> ParseSummary(std::string_view summary) {
  std::vector<ValueRecord> values;
  while (!summary.empty()) {
    std::optional<Field> field = ReadField(&summary);
    if (!field) return std::nullopt;
    if (field->number != 1) continue;  // not a Summary.value: TF drops it when merging
    if (field->type != kLengthDelimited) return std::nullopt;
    ValueRecord record{field->bytes, {}};
    std::string_view rest = field->bytes;
    while (!rest.empty()) {
      std::optional<Field> inner = ReadField(&rest);
      if (!inner) return std::nullopt;
      if (inner->number == 1 && inner->type == kLengthDelimited) record.tag = inner->bytes;
    }
    values.push_back(record);
  }
  return values;
}

// ---------------------------------------------------------------------------------

template <typename T>
class ScalarSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& tags = ctx->input(0);
    const Tensor& values = ctx->input(1);
    OP_REQUIRES(ctx, tags.shape() == values.shape(),
                KernelError(*ctx, "tags and values are not the same shape: ",
                            tags.shape().DebugString(), " != ", values.shape().DebugString(),
                            SingleTag(tags)));
    const std::string* tag = tags.data<std::string>();
    const T* value = values.data<T>();
    std::string summary;
    for (int64_t i = 0; i < tags.NumElements(); ++i) {
      AppendLengthDelimited(1, EncodeScalarValue(tag[i], static_cast<float>(value[i])),
                            &summary);
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, TensorShape({})));
    output->data<std::string>()[0] = std::move(summary);
  }

 private:
  static std::string SingleTag(const Tensor& tags) {
    if (tags.shape().dims() != 0) return "";
    return absl::StrCat(" (tag '", tags.data<std::string>()[0], "')");
  }
};

class MergeSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    std::string merged;
    absl::flat_hash_set<std::string_view> tags;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& in = ctx->input(i);
      const std::string* summaries = in.data<std::string>();
      for (int64_t j = 0; j < in.NumElements(); ++j) {
        std::optional<std::vector<ValueRecord>> values = ParseSummary(summaries[j]);
        OP_REQUIRES(ctx, values.has_value(),
                    KernelError(*ctx, "Could not parse one of the summary inputs"));
        for (const ValueRecord& value : *values) {
          // Untagged values never collide (TF skips empty tags in this check).
          OP_REQUIRES(ctx, value.tag.empty() || tags.insert(value.tag).second,
                      KernelError(*ctx, "Duplicate tag ", std::string(value.tag),
                                  " found in summary inputs "));
          AppendLengthDelimited(1, value.bytes, &merged);
        }
      }
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, TensorShape({})));
    output->data<std::string>()[0] = std::move(merged);
  }
};

template <typename T>
absl::Status RegisterScalarSummary(KernelRegistry* registry) {
  return registry->Register<ScalarSummaryOp<T>>(
      CpuKernel("ScalarSummary").TypeConstraint("T", {DataTypeOf<T>()}));
}

}  // namespace

absl::Status RegisterSummaryKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(RegisterScalarSummary<float>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterScalarSummary<double>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterScalarSummary<int32_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterScalarSummary<int64_t>(registry));
  return registry->Register<MergeSummaryOp>(CpuKernel("MergeSummary"));
}

}  // namespace dflow
