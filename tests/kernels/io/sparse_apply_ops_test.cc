// Sparse optimizer apply ops (kernels/io/sparse_apply_ops.cc) against TensorFlow 2.21's
// results (kSparseCases, recorded by record_tf_values.py): SparseApplyMomentum (plain and
// Nesterov), SparseApplyAdagrad (and update_slots=false), SparseApplyAdagradV2,
// SparseApplyRMSProp, SparseApplyCenteredRMSProp, SparseApplyAdadelta, SparseApplyFtrl and
// SparseApplyFtrlV2 (lr_power -0.5 and -0.7, multiply_linear_by_lr, l1 zeroing),
// SparseApplyProximalAdagrad, SparseApplyProximalGradientDescent, SparseApplyAdagradDA and
// ResourceSparseApplyKerasMomentum, each in ref form (through a Session on VariableV2s) and
// resource form (through OpTester), with int32 and int64 indices, use_locking true and
// false, rows of three elements and of one (TF's scalar loop), and a repeated index
// (applied twice, in order). Then: double variables, empty indices, copy-on-write, and the
// errors in TF's words (out-of-range indices write nothing).
#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/kernels/io/variable_op_testing.h"
#include "tests/testing/graph_testing.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::ApplyCase;
using testing::CheckNear;
using testing::G;
using testing::HandleOf;
using testing::I;
using testing::IoRegistry;
using testing::MakeTensor;
using testing::NewResourceVariable;
using testing::OpTester;
using testing::RequireOk;
using testing::ResourceValue;
using testing::S;
using testing::Step;
using testing::Values;

const std::vector<ApplyCase> kSparseCases = {
    // BEGIN kSparseCases (record_tf_values.py)
    // SparseApplyMomentum
    {"SparseApplyMomentum", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f, -0.2f, 0.1f, 0.15f, 0.0f, 0.25f, -0.3f}},
     {S(0.1f), G, I, S(0.9f)},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.8955f, 1.984f, 3.032f, -1.0f, 0.5f, 0.0f, 0.2642f, -1.9771f, 1.08435f, 3.0f, -3.0f, 0.75f},
      {1.045f, 0.16f, -0.32f, 0.3f, -0.4f, 0.0f, -0.462f, 0.681f, 2.0214999f, 0.0f, 0.25f, -0.3f}},
     1e-06},
    // SparseApplyMomentum
    {"SparseApplyMomentum", {{"use_nesterov", true}}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f, -0.2f, 0.1f, 0.15f, 0.0f, 0.25f, -0.3f}},
     {S(0.1f), G, I, S(0.9f)},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.80595005f, 1.9606f, 3.0788f, -1.0f, 0.5f, 0.0f, 0.28778002f, -2.0293899f, 0.9159151f,
      3.0f, -3.0f, 0.75f},
      {1.045f, 0.16f, -0.32f, 0.3f, -0.4f, 0.0f, -0.462f, 0.681f, 2.0214999f, 0.0f, 0.25f, -0.3f}},
     1e-06},
    // SparseApplyAdagrad
    {"SparseApplyAdagrad", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f}},
     {S(0.1f), G, I},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.9046537f, 1.951205f, 3.06742f, -1.0f, 0.5f, 0.0f, 0.25968474f, -2.0f, 1.4051363f, 3.0f,
      -3.0f, 0.75f},
      {1.1f, 0.2625f, 0.55f, 0.4f, 0.5f, 0.6f, 1.5125f, 4.05f, 4.9100003f, 1.0f, 0.1f, 0.2f}},
     1e-06},
    // SparseApplyAdagrad
    {"SparseApplyAdagrad", {{"update_slots", false}}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f}},
     {S(0.1f), G, I},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.6837722f, 1.9440984f, 3.0912871f, -1.0f, 0.5f, 0.0f, 0.2798807f, -2.0559018f, 1.2786405f,
      3.0f, -3.0f, 0.75f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f}},
     1e-06},
    // SparseApplyAdagradV2
    {"SparseApplyAdagradV2", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f}},
     {S(0.1f), S(0.01f), G, I},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.90555423f, 1.9521391f, 3.066523f, -1.0f, 0.5f, 0.0f, 0.25971386f, -2.0001829f,
      1.4055629f, 3.0f, -3.0f, 0.75f},
      {1.1f, 0.2625f, 0.55f, 0.4f, 0.5f, 0.6f, 1.5125f, 4.05f, 4.9100003f, 1.0f, 0.1f, 0.2f}},
     1e-06},
    // SparseApplyRMSProp
    {"SparseApplyRMSProp", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f, -0.2f, 0.1f, 0.15f, 0.0f, 0.25f, -0.3f}},
     {S(0.01f), S(0.9f), S(0.5f), S(0.000001f), G, I},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.9520585f, 2.044207f, 2.9092057f, -1.0f, 0.5f, 0.0f, 0.40006617f, -2.0737207f, 1.3592694f,
      3.0f, -3.0f, 0.75f},
      {0.19000003f, 0.18625f, 0.29500002f, 0.4f, 0.5f, 0.6f, 0.64575f, 0.96300006f, 1.09f, 1.0f,
      0.1f, 0.2f},
      {0.047941513f, -0.04420717f, 0.09079427f, 0.3f, -0.4f, 0.0f, -0.056244154f, 0.034763865f,
      0.04754873f, 0.0f, 0.25f, -0.3f}},
     1e-06},
    // SparseApplyCenteredRMSProp
    {"SparseApplyCenteredRMSProp", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f, -0.2f, 0.1f, 0.15f, 0.0f, 0.25f, -0.3f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f, -0.2f, 0.1f, 0.15f, 0.0f, 0.25f, -0.3f}},
     {S(0.01f), S(0.9f), S(0.5f), S(0.000001f), G, I},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.95067304f, 2.0441403f, 2.9094813f, -1.0f, 0.5f, 0.0f, 0.4002226f, -2.07388f, 1.3578637f,
      3.0f, -3.0f, 0.75f},
      {0.14500003f, -0.06499999f, 0.12999998f, 0.3f, -0.4f, 0.0f, -0.192f, 0.14100002f, 0.3115f,
      0.0f, 0.25f, -0.3f},
      {0.19000003f, 0.18625f, 0.29500002f, 0.4f, 0.5f, 0.6f, 0.64575f, 0.96300006f, 1.09f, 1.0f,
      0.1f, 0.2f},
      {0.04932694f, -0.044140328f, 0.09051868f, 0.3f, -0.4f, 0.0f, -0.05648189f, 0.034923796f,
      0.048047815f, 0.0f, 0.25f, -0.3f}},
     1e-06},
    // SparseApplyAdadelta
    {"SparseApplyAdadelta", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f},
      {0.0025000002f, 0.010000001f, 0.040000003f, 0.09f, 0.16000001f, 0.0f, 0.040000003f,
      0.010000001f, 0.0225f, 0.0f, 0.0625f, 0.09f}},
     {S(1.0f), S(0.95f), S(0.000001f), G, I},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.8686678f, 1.9431093f, 3.1833417f, -1.0f, 0.5f, 0.0f, 0.30861455f, -2.0495448f,
      1.1919272f, 3.0f, -3.0f, 0.75f},
      {0.14500001f, 0.193125f, 0.2975f, 0.4f, 0.5f, 0.6f, 0.67174995f, 0.882f, 1.00275f, 1.0f,
      0.1f, 0.2f},
      {0.0032374081f, 0.009661828f, 0.039680712f, 0.09f, 0.16000001f, 0.0f, 0.038423058f,
      0.010902083f, 0.024371345f, 0.0f, 0.0625f, 0.09f}},
     1e-06},
    // SparseApplyFtrl
    {"SparseApplyFtrl", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f, -0.2f, 0.1f, 0.15f, 0.0f, 0.25f, -0.3f}},
     {G, I, S(0.1f), S(0.05f), S(0.02f), S(-0.5f)},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.59135234f, 0.2135536f, 0.81367457f, -1.0f, 0.5f, 0.0f, 0.060384654f, -0.6684743f,
      0.7518854f, 3.0f, -3.0f, 0.75f},
      {1.1f, 0.2625f, 0.55f, 0.4f, 0.5f, 0.6f, 1.5125f, 4.05f, 4.9100003f, 1.0f, 0.1f, 0.2f},
      {-6.27581f, -1.1526786f, -6.1169195f, 0.3f, -0.4f, 0.0f, -0.7950485f, 13.529525f,
      -16.740744f, 0.0f, 0.25f, -0.3f}},
     1e-06},
    // SparseApplyFtrl
    {"SparseApplyFtrl", {{"multiply_linear_by_lr", true}}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f, -0.2f, 0.1f, 0.15f, 0.0f, 0.25f, -0.3f}},
     {G, I, S(0.1f), S(0.05f), S(0.02f), S(-0.5f)},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.5486096f, 0.38785478f, 0.57226473f, -1.0f, 0.5f, 0.0f, 0.24420136f, -0.7353569f,
      0.6910087f, 3.0f, -3.0f, 0.75f},
      {1.1f, 0.2625f, 0.55f, 0.4f, 0.5f, 0.6f, 1.5125f, 4.05f, 4.9100003f, 1.0f, 0.1f, 0.2f},
      {-0.582581f, -0.20526786f, -0.43169194f, 0.3f, -0.4f, 0.0f, -0.30630475f, 1.4878187f,
      -1.538937f, 0.0f, 0.25f, -0.3f}},
     1e-06},
    // SparseApplyFtrl, lr_power -0.7 (TF's vectorized pow: a few ulps)
    {"SparseApplyFtrl", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f, -0.2f, 0.1f, 0.15f, 0.0f, 0.25f, -0.3f}},
     {G, I, S(0.1f), S(0.05f), S(0.02f), S(-0.7f)},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.70780206f, 0.2926725f, 1.0688022f, -1.0f, 0.5f, 0.0f, 0.06776019f, -0.85747284f,
      0.9650622f, 3.0f, -3.0f, 0.75f},
      {1.1f, 0.2625f, 0.55f, 0.4f, 0.5f, 0.6f, 1.5125f, 4.05f, 4.9100003f, 1.0f, 0.1f, 0.2f},
      {-7.6446676f, -1.2092589f, -7.1259246f, 0.3f, -0.4f, 0.0f, -0.9579455f, 22.910774f,
      -29.486235f, 0.0f, 0.25f, -0.3f}},
     1e-05},
    // SparseApplyFtrl, l1 0.8 (linear inside [-l1, l1] zeroes var)
    {"SparseApplyFtrl", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f},
      {0.5f, -1.0f, 2.0f, 3.0f, -4.0f, 0.0f, -2.0f, 1.0f, 1.5f, 0.0f, 2.5f, -3.0f}},
     {G, I, S(0.1f), S(0.8f), S(0.02f), S(-0.5f)},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.47737157f, 0.2426038f, 0.47167727f, -1.0f, 0.5f, 0.0f, 0.16756745f, -0.67962134f,
      0.6571882f, 3.0f, -3.0f, 0.75f},
      {1.1f, 0.2625f, 0.55f, 0.4f, 0.5f, 0.6f, 1.5125f, 4.05f, 4.9100003f, 1.0f, 0.1f, 0.2f},
      {-5.82581f, -2.0526786f, -4.3169193f, 3.0f, -4.0f, 0.0f, -2.8675098f, 14.504301f,
      -15.388605f, 0.0f, 2.5f, -3.0f}},
     1e-06},
    // SparseApplyFtrlV2
    {"SparseApplyFtrlV2", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f, -0.2f, 0.1f, 0.15f, 0.0f, 0.25f, -0.3f}},
     {G, I, S(0.1f), S(0.05f), S(0.02f), S(0.1f), S(-0.5f)},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.57235557f, 0.13608637f, 0.7332046f, -1.0f, 0.5f, 0.0f, 0.056332257f, -0.6331511f,
      0.7316644f, 3.0f, -3.0f, 0.75f},
      {1.1f, 0.2625f, 0.55f, 0.4f, 0.5f, 0.6f, 1.5125f, 4.05f, 4.9100003f, 1.0f, 0.1f, 0.2f},
      {-6.0758095f, -0.75267863f, -5.5169196f, 0.3f, -0.4f, 0.0f, -0.74504846f, 12.817246f,
      -16.291866f, 0.0f, 0.25f, -0.3f}},
     1e-06},
    // SparseApplyFtrlV2
    {"SparseApplyFtrlV2", {{"multiply_linear_by_lr", true}}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f, -0.2f, 0.1f, 0.15f, 0.0f, 0.25f, -0.3f}},
     {G, I, S(0.1f), S(0.05f), S(0.02f), S(0.1f), S(-0.5f)},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.52961284f, 0.31038758f, 0.49179474f, -1.0f, 0.5f, 0.0f, 0.23620215f, -0.6993705f,
      0.67133605f, 3.0f, -3.0f, 0.75f},
      {1.1f, 0.2625f, 0.55f, 0.4f, 0.5f, 0.6f, 1.5125f, 4.05f, 4.9100003f, 1.0f, 0.1f, 0.2f},
      {-0.562581f, -0.16526785f, -0.37169194f, 0.3f, -0.4f, 0.0f, -0.29643503f, 1.4152534f,
      -1.4952667f, 0.0f, 0.25f, -0.3f}},
     1e-06},
    // SparseApplyProximalAdagrad
    {"SparseApplyProximalAdagrad", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f}},
     {S(0.1f), S(0.05f), S(0.02f), G, I},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.89817375f, 1.9338969f, 3.0524464f, -1.0f, 0.5f, 0.0f, 0.24968687f, -1.9889514f,
      1.3980888f, 3.0f, -3.0f, 0.75f},
      {1.1f, 0.2625f, 0.55f, 0.4f, 0.5f, 0.6f, 1.5125f, 4.05f, 4.9100003f, 1.0f, 0.1f, 0.2f}},
     1e-06},
    // SparseApplyProximalAdagrad
    {"SparseApplyProximalAdagrad", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f}},
     {S(0.1f), S(0.0f), S(0.02f), G, I},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.9029319f, 1.9436178f, 3.0591702f, -1.0f, 0.5f, 0.0f, 0.25885692f, -1.995151f, 1.402598f,
      3.0f, -3.0f, 0.75f},
      {1.1f, 0.2625f, 0.55f, 0.4f, 0.5f, 0.6f, 1.5125f, 4.05f, 4.9100003f, 1.0f, 0.1f, 0.2f}},
     1e-06},
    // SparseApplyProximalGradientDescent
    {"SparseApplyProximalGradientDescent", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f}},
     {S(0.1f), S(0.05f), S(0.02f), G, I},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.89321357f, 1.9660679f, 3.038922f, -1.0f, 0.5f, 0.0f, 0.26408264f, -2.0321531f,
      1.2748655f, 3.0f, -3.0f, 0.75f}},
     1e-06},
    // SparseApplyProximalGradientDescent
    {"SparseApplyProximalGradientDescent", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f}},
     {S(0.1f), S(0.0f), S(0.02f), G, I},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.8982036f, 1.971058f, 3.0439122f, -1.0f, 0.5f, 0.0f, 0.2740527f, -2.0421236f, 1.2848355f,
      3.0f, -3.0f, 0.75f}},
     1e-06},
    // SparseApplyAdagradDA
    {"SparseApplyAdagradDA", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f, -0.2f, 0.1f, 0.15f, 0.0f, 0.25f, -0.3f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f}},
     {G, I, S(0.1f), S(0.05f), S(0.02f), Step(3)},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{-0.08532352f, -0.0f, 0.020063674f, -1.0f, 0.5f, 0.0f, 0.024275038f, -0.022294212f,
      -0.09451575f, 3.0f, -3.0f, 0.75f},
      {1.05f, 0.15f, -0.3f, 0.3f, -0.4f, 0.0f, -0.45f, 0.6f, 2.25f, 0.0f, 0.25f, -0.3f},
      {1.1f, 0.2625f, 0.55f, 0.4f, 0.5f, 0.6f, 1.5125f, 4.05f, 4.9100003f, 1.0f, 0.1f, 0.2f}},
     1e-06},
    // SparseApplyAdagradDA
    {"SparseApplyAdagradDA", {}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f, -0.2f, 0.1f, 0.15f, 0.0f, 0.25f, -0.3f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f}},
     {G, I, S(0.1f), S(0.0f), S(0.02f), Step(3)},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{-0.09954411f, -0.028938118f, 0.04012735f, -1.0f, 0.5f, 0.0f, 0.036412556f, -0.029725617f,
      -0.101266876f, 3.0f, -3.0f, 0.75f},
      {1.05f, 0.15f, -0.3f, 0.3f, -0.4f, 0.0f, -0.45f, 0.6f, 2.25f, 0.0f, 0.25f, -0.3f},
      {1.1f, 0.2625f, 0.55f, 0.4f, 0.5f, 0.6f, 1.5125f, 4.05f, 4.9100003f, 1.0f, 0.1f, 0.2f}},
     1e-06},
    // SparseApplyKerasMomentum (resource form only)
    {"SparseApplyKerasMomentum", {{"use_nesterov", true}}, {4, 3},
     {{1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f, 0.25f, -2.0f, 1.5f, 3.0f, -3.0f, 0.75f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f, -0.2f, 0.1f, 0.15f, 0.0f, 0.25f, -0.3f}},
     {S(0.1f), G, I, S(0.9f)},
     {3, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f, -0.75f, 1.5f, 0.1f},
     {2, 0, 2},
     {{0.8505f, 1.8715f, 3.257f, -1.0f, 0.5f, 0.0f, -0.05079998f, -1.8601f, 1.16985f, 3.0f, -3.0f,
      0.75f},
      {-0.055000003f, -0.114999995f, 0.22999999f, 0.3f, -0.4f, 0.0f, -0.13199998f, 0.020999983f,
      -0.0685f, 0.0f, 0.25f, -0.3f}},
     1e-06},
    // SparseApplyMomentum (one-element rows)
    {"SparseApplyMomentum", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f}},
     {S(0.1f), G, I, S(0.9f)},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.891f, 0.5f, 2.6537f, -0.25f},
      {0.05f, -1.09f, 0.2f, 2.6929998f, -0.4f}},
     1e-06},
    // SparseApplyMomentum (one-element rows)
    {"SparseApplyMomentum", {{"use_nesterov", true}}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f}},
     {S(0.1f), G, I, S(0.9f)},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.8019f, 0.5f, 2.4383302f, -0.25f},
      {0.05f, -1.09f, 0.2f, 2.6929998f, -0.4f}},
     1e-06},
    // SparseApplyAdagrad (one-element rows)
    {"SparseApplyAdagrad", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f}},
     {S(0.1f), G, I},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.9087129f, 0.5f, 2.8452349f, -0.25f},
      {0.1f, 1.2f, 0.3f, 4.65f, 0.5f}},
     1e-06},
    // SparseApplyAdagrad (one-element rows)
    {"SparseApplyAdagrad", {{"update_slots", false}}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f}},
     {S(0.1f), G, I},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.7763932f, 0.5f, 2.6047153f, -0.25f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f}},
     1e-06},
    // SparseApplyAdagradV2 (one-element rows)
    {"SparseApplyAdagradV2", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f}},
     {S(0.1f), S(0.01f), G, I},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.9095387f, 0.5f, 2.8464227f, -0.25f},
      {0.1f, 1.2f, 0.3f, 4.65f, 0.5f}},
     1e-06},
    // SparseApplyRMSProp (one-element rows)
    {"SparseApplyRMSProp", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f}},
     {S(0.01f), S(0.9f), S(0.5f), S(0.000001f), G, I},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.9311018f, 0.5f, 2.7397647f, -0.25f},
      {0.1f, 0.28000003f, 0.3f, 0.7465001f, 0.5f},
      {0.05f, -0.068898186f, 0.2f, 0.10217718f, -0.4f}},
     1e-06},
    // SparseApplyCenteredRMSProp (one-element rows)
    {"SparseApplyCenteredRMSProp", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f}},
     {S(0.01f), S(0.9f), S(0.5f), S(0.000001f), G, I},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.9297515f, 0.5f, 2.732841f, -0.25f},
      {0.05f, -0.19000003f, 0.2f, 0.48800007f, -0.4f},
      {0.1f, 0.28000003f, 0.3f, 0.7465001f, 0.5f},
      {0.05f, -0.070248514f, 0.2f, 0.10775358f, -0.4f}},
     1e-06},
    // SparseApplyAdadelta (one-element rows)
    {"SparseApplyAdadelta", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f},
      {0.0025000002f, 0.010000001f, 0.040000003f, 0.09f, 0.16000001f}},
     {S(1.0f), S(0.95f), S(0.000001f), G, I},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.795866f, 0.5f, 1.9750743f, -0.25f},
      {0.1f, 0.24000001f, 0.3f, 0.572875f, 0.5f},
      {0.0025000002f, 0.011583534f, 0.040000003f, 0.11479837f, 0.16000001f}},
     1e-06},
    // SparseApplyFtrl (one-element rows)
    {"SparseApplyFtrl", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f}},
     {G, I, S(0.1f), S(0.05f), S(0.02f), S(-0.5f)},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.0745994f, 0.5f, 0.44592905f, -0.25f},
      {0.1f, 1.2f, 0.3f, 4.65f, 0.5f},
      {0.05f, 11.864631f, 0.2f, -9.683788f, -0.4f}},
     1e-06},
    // SparseApplyFtrl (one-element rows)
    {"SparseApplyFtrl", {{"multiply_linear_by_lr", true}}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f}},
     {G, I, S(0.1f), S(0.05f), S(0.02f), S(-0.5f)},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -0.99274f, 0.5f, 0.112688616f, -0.25f},
      {0.1f, 1.2f, 0.3f, 4.65f, 0.5f},
      {0.05f, 1.0964631f, 0.2f, -0.24845089f, -0.4f}},
     1e-06},
    // SparseApplyFtrl, lr_power -0.7 (TF's vectorized pow: a few ulps) (one-element rows)
    {"SparseApplyFtrl", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f}},
     {G, I, S(0.1f), S(0.05f), S(0.02f), S(-0.7f)},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.323529f, 0.5f, 0.67732173f, -0.25f},
      {0.1f, 1.2f, 0.3f, 4.65f, 0.5f},
      {0.05f, 15.139912f, 0.2f, -19.938595f, -0.4f}},
     1e-05},
    // SparseApplyFtrl, l1 0.8 (linear inside [-l1, l1] zeroes var) (one-element rows)
    {"SparseApplyFtrl", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f},
      {0.5f, -1.0f, 2.0f, 3.0f, -4.0f}},
     {G, I, S(0.1f), S(0.8f), S(0.02f), S(-0.5f)},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -0.9245237f, 0.5f, 0.020121861f, -0.25f},
      {0.1f, 1.2f, 0.3f, 4.65f, 0.5f},
      {0.5f, 10.964631f, 2.0f, -1.2347099f, -4.0f}},
     1e-06},
    // SparseApplyFtrlV2 (one-element rows)
    {"SparseApplyFtrlV2", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f}},
     {G, I, S(0.1f), S(0.05f), S(0.02f), S(0.1f), S(-0.5f)},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.0382174f, 0.5f, 0.36757594f, -0.25f},
      {0.1f, 1.2f, 0.3f, 4.65f, 0.5f},
      {0.05f, 11.464631f, 0.2f, -7.9910593f, -0.4f}},
     1e-06},
    // SparseApplyFtrlV2 (one-element rows)
    {"SparseApplyFtrlV2", {{"multiply_linear_by_lr", true}}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f}},
     {G, I, S(0.1f), S(0.05f), S(0.02f), S(0.1f), S(-0.5f)},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -0.956358f, 0.5f, 0.03742047f, -0.25f},
      {0.1f, 1.2f, 0.3f, 4.65f, 0.5f},
      {0.05f, 1.0564631f, 0.2f, -0.085842654f, -0.4f}},
     1e-06},
    // SparseApplyProximalAdagrad (one-element rows)
    {"SparseApplyProximalAdagrad", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f}},
     {S(0.1f), S(0.05f), S(0.02f), G, I},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.9006783f, 0.5f, 2.8268378f, -0.25f},
      {0.1f, 1.2f, 0.3f, 4.65f, 0.5f}},
     1e-06},
    // SparseApplyProximalAdagrad (one-element rows)
    {"SparseApplyProximalAdagrad", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f}},
     {S(0.1f), S(0.0f), S(0.02f), G, I},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.9052345f, 0.5f, 2.835335f, -0.25f},
      {0.1f, 1.2f, 0.3f, 4.65f, 0.5f}},
     1e-06},
    // SparseApplyProximalGradientDescent (one-element rows)
    {"SparseApplyProximalGradientDescent", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f}},
     {S(0.1f), S(0.05f), S(0.02f), G, I},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.8912176f, 0.5f, 2.7286642f, -0.25f}},
     1e-06},
    // SparseApplyProximalGradientDescent (one-element rows)
    {"SparseApplyProximalGradientDescent", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f}},
     {S(0.1f), S(0.0f), S(0.02f), G, I},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.8962076f, 0.5f, 2.7386346f, -0.25f}},
     1e-06},
    // SparseApplyAdagradDA (one-element rows)
    {"SparseApplyAdagradDA", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f}},
     {G, I, S(0.1f), S(0.05f), S(0.02f), Step(3)},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, 0.08625033f, 0.5f, -0.12254982f, -0.25f},
      {0.05f, -1.1f, 0.2f, 2.8f, -0.4f},
      {0.1f, 1.2f, 0.3f, 4.65f, 0.5f}},
     1e-06},
    // SparseApplyAdagradDA (one-element rows)
    {"SparseApplyAdagradDA", {}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f}},
     {G, I, S(0.1f), S(0.0f), S(0.02f), Step(3)},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, 0.0998688f, 0.5f, -0.1294866f, -0.25f},
      {0.05f, -1.1f, 0.2f, 2.8f, -0.4f},
      {0.1f, 1.2f, 0.3f, 4.65f, 0.5f}},
     1e-06},
    // SparseApplyKerasMomentum (resource form only) (one-element rows)
    {"SparseApplyKerasMomentum", {{"use_nesterov", true}}, {5},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f}},
     {S(0.1f), G, I, S(0.9f)},
     {3}, {0.5f, -1.0f, 2.0f},
     {3, 1, 3},
     {{1.0f, -1.891f, 0.5f, 2.9462f, -0.25f},
      {0.05f, 0.010000005f, 0.2f, -1.9999892e-03f, -0.4f}},
     1e-06},
    // END kSparseCases
};

TEST_CASE("Sparse apply ops give TensorFlow's results, ref and resource forms",
          "[kernels][apply][sparse]") {
  REQUIRE(kSparseCases.size() >= 30);
  for (const ApplyCase& c : kSparseCases) testing::CheckApplyCase(c);
}

// ---------------------------------------------------------------------------------

Tensor Matrix(const std::vector<float>& values) {
  return testing::Filled<float>({static_cast<int64_t>(values.size()) / 3, 3}, values);
}
Tensor F(float v) { return MakeTensor<float>({}, {v}); }

const std::vector<float> kVar = {1, 2, 3, -1, 0.5f, 0, 0.25f, -2, 1.5f, 3, -3, 0.75f};
const std::vector<float> kAccum = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f,
                                   0.7f, 0.8f, 0.9f, 1.0f, 0.1f, 0.2f};

// ResourceSparseApplyAdagrad(var, accum, lr 0.1, grad, indices) on fresh [4, 3] variables.
struct Adagrad {
  std::string var = NewResourceVariable("sparse_var", Matrix(kVar));
  std::string accum = NewResourceVariable("sparse_accum", Matrix(kAccum));
  absl::Status Run(const Tensor& grad, const Tensor& indices, const Tensor& lr = F(0.1f)) {
    return OpTester("ResourceSparseApplyAdagrad", IoRegistry())
        .Attr("T", DT_FLOAT)
        .Attr("Tindices", indices.dtype())
        .Input(HandleOf(var))
        .Input(HandleOf(accum))
        .Input(lr)
        .Input(grad)
        .Input(indices)
        .Run()
        .status();
  }
  void CheckUnchanged() {
    CHECK(Values<float>(ResourceValue(var)) == kVar);
    CHECK(Values<float>(ResourceValue(accum)) == kAccum);
  }
};

void CheckError(const absl::Status& status, const std::string& text) {
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()), Contains(text));
}

TEST_CASE("Sparse apply ops refuse out-of-range indices before writing anything",
          "[kernels][apply][sparse]") {
  // TF's Momentum, RMSProp and Adadelta loops stop at the bad index with the rows before it
  // updated; dflow checks them all first.
  Adagrad a;
  const Tensor grad = Matrix({1, 1, 1, 2, 2, 2, 3, 3, 3});
  CheckError(a.Run(grad, testing::Vec<int32_t>({1, 0, 4})),
             "Index 4 at offset 2 in indices is out of range");
  CheckError(a.Run(grad, testing::Vec<int64_t>({1, -1, 0})),
             "Index -1 at offset 1 in indices is out of range");
  a.CheckUnchanged();

  const std::string var = NewResourceVariable("momentum_var", Matrix(kVar));
  const std::string accum = NewResourceVariable("momentum_accum", Matrix(kAccum));
  const absl::Status status = OpTester("ResourceSparseApplyMomentum", IoRegistry())
                                  .Attr("T", DT_FLOAT)
                                  .Attr("Tindices", DT_INT32)
                                  .Input(HandleOf(var))
                                  .Input(HandleOf(accum))
                                  .Input(F(0.1f))
                                  .Input(Matrix({1, 1, 1, 2, 2, 2}))
                                  .Input(testing::Vec<int32_t>({0, 9}))
                                  .Input(F(0.9f))
                                  .Run()
                                  .status();
  CheckError(status, "Index 9 at offset 1 in indices is out of range");
  CHECK(Values<float>(ResourceValue(var)) == kVar);
}

TEST_CASE("Sparse apply ops refuse mismatched shapes in TF's words", "[kernels][apply][sparse]") {
  Adagrad a;
  const Tensor two = testing::Vec<int32_t>({1, 2});
  CheckError(a.Run(Matrix({1, 1, 1, 2, 2, 2}), testing::Vec<int32_t>({1, 2, 3})),
             "grad must be the same size as indices in the first dimension.");
  CheckError(a.Run(testing::Filled<float>({2, 2}, {1, 1, 1, 1}), two),
             "var and grad must match in dimension 1");
  CheckError(a.Run(testing::Vec<float>({1, 1}), two),
             "grad must have the same number of dimensions as var");
  CheckError(a.Run(Matrix({1, 1, 1, 2, 2, 2}), testing::Filled<int32_t>({1, 2}, {1, 2})),
             "indices must be one-dimensional");
  CheckError(a.Run(Matrix({1, 1, 1, 2, 2, 2}), two, testing::Vec<float>({0.1f})),
             "lr is not a scalar: [1]");
  a.CheckUnchanged();

  const std::string short_accum =
      NewResourceVariable("short_accum", Matrix({0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f}));
  a.accum = short_accum;
  CheckError(a.Run(Matrix({1, 1, 1, 2, 2, 2}), two),
             "var and accum do not have the same shape[4,3] [2,3]");

  Adagrad scalar;
  scalar.var = NewResourceVariable("scalar_var", MakeTensor<float>({}, {1}));
  scalar.accum = NewResourceVariable("scalar_accum", MakeTensor<float>({}, {1}));
  CheckError(scalar.Run(testing::Vec<float>({1}), testing::Vec<int32_t>({0})),
             "var must be at least 1 dimensional");

  Adagrad empty_rows;
  empty_rows.var = NewResourceVariable("empty_rows_var", testing::Filled<float>({4, 0}, {}));
  empty_rows.accum = NewResourceVariable("empty_rows_accum", testing::Filled<float>({4, 0}, {}));
  CheckError(empty_rows.Run(testing::Filled<float>({2, 0}, {}), two),
             "Inner dimension should be greater than zero.");
}

TEST_CASE("Sparse apply ops with no indices change nothing", "[kernels][apply][sparse]") {
  Adagrad a;
  const Tensor before = ResourceValue(a.var);
  RequireOk(a.Run(testing::Filled<float>({0, 3}, {}), testing::Vec<int64_t>({})));
  a.CheckUnchanged();
  CHECK(ResourceValue(a.var).SharesBufferWith(before));  // not even copied
}

TEST_CASE("A sparse apply op leaves a value read before it as it was (copy-on-write)",
          "[kernels][apply][sparse]") {
  Adagrad a;
  const Tensor before = ResourceValue(a.var);
  RequireOk(a.Run(Matrix({1, 1, 1}), testing::Vec<int32_t>({3})));
  CHECK(Values<float>(before) == kVar);
  CHECK_FALSE(ResourceValue(a.var).SharesBufferWith(before));
  // Only row 3 moved: accum 1.0 + 1 = 2 (and 0.1 + 1, 0.2 + 1); var -= 0.1 / sqrt(accum).
  std::vector<float> want = kVar;
  want[9] -= 0.1f / std::sqrt(2.0f);
  want[10] -= 0.1f / std::sqrt(1.1f);
  want[11] -= 0.1f / std::sqrt(1.2f);
  CheckNear(Values<float>(ResourceValue(a.var)), want, 1e-6);
}

TEST_CASE("Sparse Ftrl checks its hyperparameters' signs in TF's words",
          "[kernels][apply][sparse]") {
  const std::string var = NewResourceVariable("ftrl_var", Matrix(kVar));
  const std::string accum = NewResourceVariable("ftrl_accum", Matrix(kAccum));
  const std::string linear = NewResourceVariable("ftrl_linear", Matrix(kAccum));
  // lr, l1, l2, l2_shrinkage, lr_power.
  auto run = [&](std::vector<float> scalars, bool by_lr = false) {
    OpTester t("ResourceSparseApplyFtrlV2", IoRegistry());
    t.Attr("T", DT_FLOAT).Attr("Tindices", DT_INT32).Attr("multiply_linear_by_lr", by_lr);
    t.Input(HandleOf(var)).Input(HandleOf(accum)).Input(HandleOf(linear));
    t.Input(Matrix({1, 1, 1})).Input(testing::Vec<int32_t>({0}));
    for (float s : scalars) t.Input(F(s));
    return t.Run().status();
  };
  CheckError(run({0, 0, 0, 0, -0.5f}),
             "lr is not a positive scalar (or zero if multiply_linear_by_lr is set): []");
  CheckError(run({0.1f, -1, 0, 0, -0.5f}),
             "l1 regularization strength is not a non-negative scalar: []");
  CheckError(run({0.1f, 0, -1, 0, -0.5f}),
             "l2 regularization strength is not a non-negative scalar: []");
  CheckError(run({0.1f, 0, 0, -1, -0.5f}),
             "l2 shrinkage regularization strength is not a non-negative scalar: []");
  CheckError(run({0.1f, 0, 0, 0, 0.5f}), "lr_power is not a non-positive scalar: []");
  CHECK(Values<float>(ResourceValue(var)) == kVar);
  // multiply_linear_by_lr allows lr 0.
  RequireOk(run({0, 0, 0, 0, -0.5f}, true));
}

TEST_CASE("Resource sparse apply ops refuse missing and uninitialized variables",
          "[kernels][apply][sparse]") {
  Adagrad a;
  a.accum = "no_such_accum";
  absl::Status status = a.Run(Matrix({1, 1, 1}), testing::Vec<int32_t>({0}));
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()), Contains("Could not find variable no_such_accum"));

  a.accum = "sparse_uninitialized_accum";
  testing::TestCpuDevice()->variables()->LookupOrCreateResource("", a.accum, DT_FLOAT);
  status = a.Run(Matrix({1, 1, 1}), testing::Vec<int32_t>({0}));
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()),
             Contains("Attempting to use uninitialized value sparse_uninitialized_accum"));
  CHECK(Values<float>(ResourceValue(a.var)) == kVar);
}

TEST_CASE("SparseApplyAdagrad on ref variables: uninitialized slots and bad indices",
          "[kernels][apply][sparse]") {
  testing::RefGraph g;
  g.Variable("var", Matrix(kVar));
  g.Const("accum/initial_value", Matrix(kAccum));
  NodeDef* accum = g.Node("accum", "VariableV2", {});
  testing::SetAttr(accum, "dtype", DT_FLOAT);
  *(*accum->mutable_attr())["shape"].mutable_shape() = TensorShape({4, 3}).ToProto();
  testing::SetAttr(g.Node("init_accum", "Assign", {"accum", "accum/initial_value"}), "T",
                   DT_FLOAT);
  g.Const("lr", F(0.1f));
  g.Const("grad", Matrix({1, 1, 1, 2, 2, 2}));
  g.Placeholder("indices", DT_INT64);
  NodeDef* apply = g.Node("apply", "SparseApplyAdagrad", {"var", "accum", "lr", "grad", "indices"});
  testing::SetAttr(apply, "T", DT_FLOAT);
  testing::SetAttr(apply, "Tindices", DT_INT64);
  auto session = g.Open();  // assigns var only: init_accum is not a variable's initializer
  std::vector<Tensor> out;
  const std::pair<std::string, Tensor> good{"indices", testing::Vec<int64_t>({3, 3})};
  absl::Status status = session->Run({good}, {"apply"}, {}, &out);
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()),
             Contains("Attempting to use uninitialized value accum"));

  testing::RunOk(*session, {}, {"init_accum"});
  status = session->Run({{"indices", testing::Vec<int64_t>({0, 4})}}, {"apply"}, {}, &out);
  CheckError(status, "Index 4 at offset 1 in indices is out of range");
  CHECK(Values<float>(testing::RunOk(*session, {"var"})[0]) == kVar);

  // Row 3 twice: accum 1 + 1 + 4 and var 3 - 0.1 / sqrt(2) - 0.2 / sqrt(6), in order.
  const std::vector<Tensor> applied = testing::RunOk(*session, {"apply"}, {}, {good});
  const float after_first = 3.0f - 0.1f * 1.0f / std::sqrt(2.0f);
  CHECK(Values<float>(applied[0])[9] == Approx(after_first - 0.1f * 2.0f / std::sqrt(6.0f)));
  CHECK(Values<float>(testing::RunOk(*session, {"accum"})[0])[9] == Approx(6.0f));
}

TEST_CASE("Concurrent sparse updates with use_locking=false lose nothing (dflow locks)",
          "[kernels][apply][sparse]") {
  // TF skips the locks without use_locking (Hogwild): concurrent updates of one row may
  // lose some. dflow always locks, so 4 threads x 50 steps of var -= 1 * 0.5 on rows {1, 1}
  // (a repeated index: twice a step) take row 1 down by exactly 200.
  const std::string var = NewResourceVariable("hogwild", Matrix(kVar));
  const KernelRegistry& registry = IoRegistry();
  std::vector<absl::Status> statuses(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int step = 0; step < 50 && statuses[t].ok(); ++step) {
        statuses[t] = OpTester("ResourceSparseApplyProximalGradientDescent", registry)
                          .Attr("T", DT_FLOAT)
                          .Attr("Tindices", DT_INT32)
                          .Attr("use_locking", false)
                          .Input(HandleOf(var))
                          .Input(F(1))
                          .Input(F(0))
                          .Input(F(0))
                          .Input(Matrix({0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f}))
                          .Input(testing::Vec<int32_t>({1, 1}))
                          .Run()
                          .status();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& status : statuses) RequireOk(status);
  std::vector<float> want = kVar;
  for (int j = 3; j < 6; ++j) want[j] -= 200;
  CHECK(Values<float>(ResourceValue(var)) == want);
}

TEST_CASE("ResourceSparseApplyMomentum updates double variables, int64 indices",
          "[kernels][apply][sparse]") {
  const std::string var =
      NewResourceVariable("double_var", testing::Filled<double>({3, 2}, {1, 2, 3, 4, 5, 6}));
  const std::string accum =
      NewResourceVariable("double_accum", testing::Filled<double>({3, 2}, {0.5, 0, 0, 0, 1, 1}));
  RequireOk(OpTester("ResourceSparseApplyMomentum", IoRegistry())
                .Attr("T", DT_DOUBLE)
                .Attr("Tindices", DT_INT64)
                .Input(HandleOf(var))
                .Input(HandleOf(accum))
                .Input(MakeTensor<double>({}, {0.25}))
                .Input(testing::Filled<double>({2, 2}, {2, -2, 4, 8}))
                .Input(testing::Vec<int64_t>({2, 0}))
                .Input(MakeTensor<double>({}, {0.5}))
                .Run()
                .status());
  // Row 2: accum = 0.5 * 1 + {2, -2} = {2.5, -1.5}; var -= 0.25 * accum.
  // Row 0: accum = 0.5 * {0.5, 0} + {4, 8} = {4.25, 8}.
  CheckNear(Values<double>(ResourceValue(accum)), {4.25, 8, 0, 0, 2.5, -1.5}, 1e-15);
  CheckNear(Values<double>(ResourceValue(var)), {1 - 1.0625, 2 - 2, 3, 4, 5 - 0.625, 6 + 0.375},
            1e-15);
}

}  // namespace
}  // namespace dflow
