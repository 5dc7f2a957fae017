// CallFrame: the feeds (_Arg) and fetches (_Retval) of one step.
//
// The session fills args before the step; _Arg kernels read them, _Retval kernels
// store results. Each index is written by exactly one _Retval, so no locking is needed.
#ifndef DFLOW_RUNTIME_CALL_FRAME_H_
#define DFLOW_RUNTIME_CALL_FRAME_H_

#include <vector>

#include "runtime/tensor.h"

namespace dflow {

struct CallFrame {
  CallFrame() = default;
  // A frame with room for `num_retvals` results, none set yet.
  explicit CallFrame(int num_retvals) : retvals(num_retvals), retval_set(num_retvals, 0) {}

  std::vector<Tensor> args;
  std::vector<Tensor> retvals;
  std::vector<char> retval_set;  // 1 once _Retval i stored a live value
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_CALL_FRAME_H_
