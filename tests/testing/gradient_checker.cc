#include "tests/testing/gradient_checker.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "graph/gradients/symbolic_gradients.h"
#include "graph/ops.h"
#include "graph/status_macros.h"
#include "runtime/allocator.h"
#include "session/client_session.h"

namespace dflow::testing {
namespace {

using Feeds = ClientSession::FeedType;

void SetValue(Tensor* t, int64_t i, double v) {
  if (t->dtype() == DT_DOUBLE) {
    t->flat<double>()[i] = v;
  } else if (t->dtype() == DT_INT32) {  // trip counts and indices fed beside the values
    t->flat<int32_t>()[i] = static_cast<int32_t>(v);
  } else {
    t->flat<float>()[i] = static_cast<float>(v);
  }
}

double GetValue(const Tensor& t, int64_t i) {
  return t.dtype() == DT_DOUBLE ? t.flat<double>()[i] : t.flat<float>()[i];
}

Tensor ZerosOf(DataType dtype, const TensorShape& shape) {
  std::vector<int64_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
  return MakeTensor(dtype, dims, std::vector<double>(shape.num_elements(), 0.0));
}

Tensor CopyOf(const Tensor& t) {
  std::vector<int64_t> dims(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
  return MakeTensor(t.dtype(), dims, ToDoubles(t));
}

}  // namespace

Tensor MakeTensor(DataType dtype, const std::vector<int64_t>& shape,
                  const std::vector<double>& values) {
  Tensor t = *Tensor::Allocate(ProcessCpuAllocator(), dtype, TensorShape(shape));
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.NumElements(); ++i) {
    SetValue(&t, static_cast<int64_t>(i), values[i]);
  }
  return t;
}

std::vector<double> SpreadValues(int64_t n, double scale, double offset) {
  std::vector<double> values(n);
  for (int64_t i = 0; i < n; ++i) {
    // A low-discrepancy walk (golden ratio) keeps values distinct and spread out.
    double frac = std::fmod(0.5 + 0.6180339887498949 * static_cast<double>(i + 1), 1.0);
    values[i] = offset + scale * (2.0 * frac - 1.0);
  }
  return values;
}

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> values(t.NumElements());
  for (int64_t i = 0; i < t.NumElements(); ++i) values[i] = GetValue(t, i);
  return values;
}

absl::StatusOr<double> MaxGradientError(const Scope& scope, const std::vector<Output>& xs,
                                        const std::vector<Tensor>& x_values,
                                        const std::vector<Output>& ys, double delta) {
  std::vector<Output> dys;
  for (const Output& y : ys) dys.push_back(Placeholder(scope, BaseType(y.dtype())));
  std::vector<Output> grads;
  DFLOW_RETURN_IF_ERROR(AddSymbolicGradients(scope, ys, xs, dys, &grads));
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].node == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("no gradient for xs[", i, "]"));
    }
  }
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<ClientSession> session, ClientSession::Create(scope));
  Feeds feeds;
  for (size_t i = 0; i < xs.size(); ++i) feeds[xs[i]] = x_values[i];
  std::vector<Tensor> y_values;
  DFLOW_RETURN_IF_ERROR(session->Run(feeds, ys, &y_values));

  // Theoretical: row (y_j, k) of the Jacobian is the gradient for dy_j = one-hot(k).
  std::vector<std::vector<std::vector<double>>> theory(ys.size());  // [j][k] -> flat xs
  for (size_t j = 0; j < ys.size(); ++j) {
    for (int64_t k = 0; k < y_values[j].NumElements(); ++k) {
      Feeds f = feeds;
      for (size_t m = 0; m < ys.size(); ++m) {
        f[dys[m]] = ZerosOf(y_values[m].dtype(), y_values[m].shape());
      }
      SetValue(&f[dys[j]], k, 1.0);
      std::vector<Tensor> g;
      DFLOW_RETURN_IF_ERROR(session->Run(f, grads, &g));
      std::vector<double> row;
      for (const Tensor& t : g) {
        std::vector<double> v = ToDoubles(t);
        row.insert(row.end(), v.begin(), v.end());
      }
      theory[j].push_back(std::move(row));
    }
  }

  double max_error = 0.0;
  int64_t column = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    for (int64_t e = 0; e < x_values[i].NumElements(); ++e, ++column) {
      std::vector<std::vector<Tensor>> sides(2);
      for (int side = 0; side < 2; ++side) {
        Feeds f = feeds;
        Tensor moved = CopyOf(x_values[i]);
        SetValue(&moved, e, GetValue(x_values[i], e) + (side == 0 ? delta : -delta));
        f[xs[i]] = moved;
        DFLOW_RETURN_IF_ERROR(session->Run(f, ys, &sides[side]));
      }
      for (size_t j = 0; j < ys.size(); ++j) {
        for (int64_t k = 0; k < y_values[j].NumElements(); ++k) {
          double numeric =
              (GetValue(sides[0][j], k) - GetValue(sides[1][j], k)) / (2.0 * delta);
          double symbolic = theory[j][k][column];
          max_error = std::max(max_error, std::abs(numeric - symbolic));
        }
      }
    }
  }
  return max_error;
}

}  // namespace dflow::testing
