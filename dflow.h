// dflow's public C++ API in one header: what a program needs to build or load a graph,
// open a session on the CPUs and GPUs, run it and train it (docs/API.md).
//
// Bazel: depend on @dflow//:dflow (docs/BAZEL.md). CMake: find_package(dflow) and link
// dflow::dflow; other build systems: pkg-config dflow (docs/INSTALL.md).
#ifndef DFLOW_DFLOW_H_
#define DFLOW_DFLOW_H_

#if __cplusplus < 201703L
#error "dflow needs C++17: -std=c++17 (Bazel: copts = DFLOW_COPTS, @dflow//:defs.bzl)"
#endif

#include "graph/array_ops.h"                  // Concat, Reshape, Gather, ... (builder)
#include "graph/cond_ops.h"                   // Switch, Merge: TF 1.x conditionals
#include "graph/gradients/symbolic_gradients.h"  // AddSymbolicGradients
#include "graph/nn_ops.h"                     // Conv2D, MaxPool, Softmax, ... (builder)
#include "graph/ops.h"                        // Const, Placeholder, MatMul, Add, ...
#include "graph/proto_io.h"                   // ReadGraphDef, WriteGraphDef (.pb, .pbtxt)
#include "graph/scope.h"                      // Scope: names, devices, control deps
#include "graph/train/initializers.h"         // GlorotUniform, Zeros, ...
#include "graph/train/optimizers.h"           // GradientDescent, Momentum, Adam, ...
#include "graph/train/towers.h"               // data-parallel towers over devices
#include "graph/train/variable.h"             // Variable
#include "graph/while_loop.h"                 // BuildWhileLoop: TF 1.x while loops
#include "proto/config.pb.h"                  // ConfigProto, RunOptions, RunMetadata
#include "proto/graph.pb.h"                   // GraphDef
#include "runtime/tensor.h"                   // Tensor
#include "runtime/tensor_values.h"            // TensorFromValues, TensorValues
#include "session/client_session.h"           // ClientSession (builder graphs)
#include "session/log_sink.h"                 // LogSink: placement logs, warnings
#include "session/saved_model.h"              // LoadSavedModel, LoadMetaGraphWithCheckpoint
#include "session/session.h"                  // Session, NewSession
#include "session/training_loop.h"            // multi-step training from C++

#endif  // DFLOW_DFLOW_H_
