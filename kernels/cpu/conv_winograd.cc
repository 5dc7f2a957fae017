#include "kernels/cpu/conv_winograd.h"

namespace dflow {

bool PreferWinograd(const WindowDim& rows, const WindowDim& cols, int64_t groups,
                    int64_t in_depth, int64_t out_depth) {
  const bool window = rows.size == 3 && cols.size == 3 && rows.stride == 1 && cols.stride == 1 &&
                      rows.dilation == 1 && cols.dilation == 1;
  return window && groups == 1 && in_depth >= 16 && out_depth >= 48 &&
         rows.output * cols.output >= 392;
}

}  // namespace dflow
