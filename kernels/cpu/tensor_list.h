// TensorList: the value behind a DT_VARIANT list handle (TF's tensorflow::TensorList), what
// TF 2 writes for TensorArrays, Keras RNN loops and tf.map_fn.
//
// A list holds an element dtype, an element shape (possibly partial) and its tensors; an
// element never set (TensorListReserve) is an uninitialized Tensor and reads as zeros of
// the element shape. Lists are values: kernels build a new one per change, except when
// the input handle is the only reference (list_kernels.cc, TakeList), as inside a loop.
#ifndef DFLOW_KERNELS_CPU_TENSOR_LIST_H_
#define DFLOW_KERNELS_CPU_TENSOR_LIST_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/partial_shape.h"
#include "graph/types.h"
#include "runtime/tensor.h"
#include "runtime/variant.h"

namespace dflow {

struct TensorList final : VariantValue {
  DataType element_dtype = DT_INVALID;
  PartialShape element_shape;  // unknown rank by default
  int max_num_elements = -1;   // -1: unbounded
  std::vector<Tensor> tensors;

  std::string TypeName() const override { return "tensorflow::TensorList"; }
  std::string DebugString() const override {
    return absl::StrCat("TensorList<", DataTypeString(element_dtype), " ",
                        element_shape.ToString(), " x ", tensors.size(), ">");
  }
};

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_TENSOR_LIST_H_
