#include "tools/idx_file.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace dflow {
namespace {

// The whole file, gunzipped when it is gzip (gzread passes plain files through).
absl::StatusOr<std::string> ReadMaybeGzipped(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::unique_ptr<gzFile_s, int (*)(gzFile)> closer(file, gzclose);
  std::string data;
  char chunk[1 << 16];
  while (true) {
    const int n = gzread(file, chunk, sizeof(chunk));
    if (n < 0) {
      int code = 0;
      return absl::DataLossError(absl::StrCat(path, ": ", gzerror(file, &code)));
    }
    if (n == 0) break;
    data.append(chunk, static_cast<size_t>(n));
  }
  return data;
}

uint32_t BigEndian32(const std::string& data, size_t offset) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data() + offset);
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

absl::StatusOr<DataType> IdxType(uint8_t code) {
  switch (code) {
    case 0x08: return DT_UINT8;
    case 0x09: return DT_INT8;
    case 0x0B: return DT_INT16;
    case 0x0C: return DT_INT32;
    case 0x0D: return DT_FLOAT;
    case 0x0E: return DT_DOUBLE;
    default: return absl::DataLossError(absl::StrCat("unknown IDX element type 0x", code));
  }
}

// IDX stores multi-byte elements big-endian; convert in place to host order.
void ToHostOrder(char* bytes, size_t element_size, int64_t count) {
  if (element_size == 1) return;
  for (int64_t i = 0; i < count; ++i) std::reverse(bytes + i * element_size,
                                                   bytes + (i + 1) * element_size);
}

}  // namespace

absl::StatusOr<IdxFile> ReadIdxFile(const std::string& path, Allocator* allocator) {
  absl::StatusOr<std::string> data = ReadMaybeGzipped(path);
  if (!data.ok()) return data.status();
  auto corrupt = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrCat(path, ": not an IDX file: ", why));
  };
  if (data->size() < 4 || (*data)[0] != 0 || (*data)[1] != 0) return corrupt("bad magic");
  IdxFile file;
  absl::StatusOr<DataType> dtype = IdxType(static_cast<uint8_t>((*data)[2]));
  if (!dtype.ok()) return corrupt(dtype.status().message());
  file.dtype = *dtype;
  const int rank = static_cast<uint8_t>((*data)[3]);
  const size_t header = 4 + 4 * static_cast<size_t>(rank);
  if (data->size() < header) return corrupt("truncated header");
  int64_t count = 1;
  for (int i = 0; i < rank; ++i) {
    file.dims.push_back(BigEndian32(*data, 4 + 4 * i));
    count *= file.dims.back();
  }
  const size_t element_size = DataTypeSize(file.dtype);
  const size_t want = header + static_cast<size_t>(count) * element_size;
  if (data->size() < want) {
    return corrupt(absl::StrCat("header promises ", want, " bytes, file has ", data->size()));
  }
  absl::StatusOr<Tensor> values =
      Tensor::Allocate(allocator, file.dtype, TensorShape(absl::MakeConstSpan(file.dims)));
  if (!values.ok()) return values.status();
  char* out = static_cast<char*>(values->raw_data());
  std::memcpy(out, data->data() + header, static_cast<size_t>(count) * element_size);
  ToHostOrder(out, element_size, count);
  file.values = *std::move(values);
  return file;
}

absl::StatusOr<Tensor> MnistImagesAsFloat(const IdxFile& images, int64_t begin, int64_t count,
                                          Allocator* allocator) {
  if (images.dtype != DT_UINT8 || images.dims.size() != 3) {
    return absl::InvalidArgumentError("MNIST images must be a uint8 IDX file of rank 3");
  }
  if (begin < 0 || count < 0 || begin + count > images.dims[0]) {
    return absl::InvalidArgumentError(absl::StrCat("images [", begin, ", ", begin + count,
                                                   ") out of range: the file has ",
                                                   images.dims[0]));
  }
  const int64_t pixels = images.dims[1] * images.dims[2];
  absl::StatusOr<Tensor> out = Tensor::Allocate(allocator, DT_FLOAT, TensorShape({count, pixels}));
  if (!out.ok()) return out.status();
  const uint8_t* src = images.values.data<uint8_t>() + begin * pixels;
  float* dst = out->data<float>();
  // In double, then rounded, as NumPy's `pixels / 255.0` then `.astype(float32)` does.
  for (int64_t i = 0; i < count * pixels; ++i) dst[i] = static_cast<float>(src[i] / 255.0);
  return out;
}

}  // namespace dflow
