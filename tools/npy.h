// NumPy's .npy format (numpy.lib.format), for `dflow run --feed=x=@file.npy`.
//
// Reading accepts versions 1.0, 2.0 and 3.0 with a C-order array of one of the element
// types below; everything else is an INVALID_ARGUMENT naming what is wrong (never a
// crash, whatever the bytes):
//
//   descr   dtype        descr   dtype
//   <f2     float16      |u1     uint8
//   <f4     float32      <u2     uint16
//   <f8     float64      <u4     uint32
//   <i2     int16        <u8     uint64
//   <i4     int32        |b1     bool
//   <i8     int64        <V2     bfloat16
//   |i1     int8
//
// bfloat16 has no NumPy descr: numpy.save writes ml_dtypes.bfloat16 arrays (what TF's
// .numpy() gives) as 2-byte void '<V2', so that (or '|V2') reads as bfloat16 and
// bfloat16 writes as '<V2' (np.load(f).view(ml_dtypes.bfloat16) gets the values back).
// '=' (native, little-endian here) is accepted in place of '<', and '|' and '<' are
// interchangeable for one-byte types; big-endian ('>') arrays are byte-swapped.
// `fortran_order: True` is rejected (transpose the array in NumPy first). The data must
// be exactly shape-product * itemsize bytes.
//
// Writing produces version 1.0 (2.0 when the header would not fit), the header padded
// with spaces to a multiple of 64 bytes and ended by '\n', as numpy.save does.
#ifndef DFLOW_TOOLS_NPY_H_
#define DFLOW_TOOLS_NPY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace dflow {

// The .npy descr for `dtype` ("<f4", "|b1", ...); INVALID_ARGUMENT for dtypes NumPy's
// format cannot hold here (string, complex, resource, ...).
absl::StatusOr<std::string> NpyDescr(DataType dtype);

// Decodes a whole .npy file held in `bytes` into a tensor allocated from `allocator`.
absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes, Allocator* allocator);
// Reads and decodes the file at `path` (NOT_FOUND when missing).
absl::StatusOr<Tensor> ReadNpyFile(const std::string& path, Allocator* allocator);

// Encodes `tensor` as a .npy file. INVALID_ARGUMENT for dtypes without an NpyDescr.
absl::StatusOr<std::string> SerializeNpy(const Tensor& tensor);
absl::Status WriteNpyFile(const std::string& path, const Tensor& tensor);

}  // namespace dflow

#endif  // DFLOW_TOOLS_NPY_H_
