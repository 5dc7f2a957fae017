#!/usr/bin/env python3
"""Records TensorFlow's results for the optimizer apply and scatter op tests.

Runs each case with tf.raw_ops on resource variables (TF 2.21, CPU) and rewrites the
tables between the `// BEGIN <table>` and `// END <table>` lines of

    tests/kernels/io/apply_ops_test.cc          kDenseCases   (Apply*/ResourceApply*)
    tests/kernels/io/sparse_apply_ops_test.cc   kSparseCases  (SparseApply*, Resource*)
    tests/kernels/io/scatter_ops_test.cc        kScatterCases (Scatter*, ResourceScatter*)

so the C++ tests compare dflow with what TF computed. Run by hand (bazel test never needs
TensorFlow):

    /work/tfvenv/bin/python tests/kernels/io/record_tf_values.py

Each case names the ref form of the op (the tests run it and its resource twin). Floats are
written with 9 significant digits, which round-trip a float32 exactly.
"""
import inspect
import os
import re

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
raw = tf.raw_ops


def f32(values):
  return np.asarray(values, np.float32)


def fmt(values, suffix="f"):
  """A C++ braced list: floats as the shortest text that reads back as the same float32."""
  out = []
  for v in np.asarray(values).ravel():
    if suffix == "f":
      text = np.format_float_positional(np.float32(v), unique=True, trim="0")
      if len(text) > 12:
        text = np.format_float_scientific(np.float32(v), unique=True, trim="0")
      out.append(text + "f")
    else:
      out.append("%d" % v)
  return "{" + ", ".join(out) + "}"


def wrap(line, indent=6, width=100):
  """Breaks `line` after commas so no line exceeds `width`."""
  lines = []
  while len(line) > width:
    cut = line.rfind(", ", 0, width - 1)
    lines.append(line[:cut + 1])
    line = " " * indent + line[cut + 2:]
  return "\n".join(lines + [line])


def run_apply(op, attrs, slots, scalars, grad, indices=None):
  """Runs Resource<op>; returns the slots' values after the step."""
  fn = getattr(raw, "Resource" + op)
  params = [p for p in inspect.signature(fn).parameters
            if p not in ("use_locking", "name") and p not in attrs and
            p not in ("use_nesterov", "update_slots", "multiply_linear_by_lr")]
  variables = [tf.Variable(f32(s)) for s in slots]
  args = {}
  rest = []
  for i, p in enumerate(params):
    if i < len(slots):
      args[p] = variables[i].handle
    elif p in ("grad", "delta"):
      args[p] = tf.constant(f32(grad))
      rest.append("G")
    elif p == "global_step":
      args[p] = tf.constant(np.int64(scalars[p]))
      rest.append("Step(%d)" % scalars[p])
    elif p == "indices":
      args[p] = tf.constant(np.asarray(indices, np.int32))
      rest.append("I")
    else:
      args[p] = tf.constant(np.float32(scalars[p]))
      rest.append("S(%s)" % fmt([scalars[p]])[1:-1])
  fn(**args, **attrs)
  return [v.numpy() for v in variables], rest


def attrs_text(attrs):
  return "{" + ", ".join('{"%s", %s}' % (k, "true" if v else "false")
                         for k, v in attrs.items()) + "}"


def apply_case(op, attrs, shape, slots, scalars, grad, indices=None, eps=1e-6, note=""):
  want, rest = run_apply(op, attrs, slots, scalars, grad, indices)
  lines = ["    // %s%s" % (op, note),
           '    {"%s", %s, {%s},' % (op, attrs_text(attrs), ", ".join(map(str, shape))),
           "     {%s}," % ",\n      ".join(fmt(s) for s in slots),
           "     {%s}," % ", ".join(rest),
           "     {%s}, %s," % (", ".join(map(str, np.shape(grad))), fmt(grad)),
           "     %s," % (fmt(indices, "d") if indices is not None else "{}"),
           "     {%s}," % ",\n      ".join(fmt(w) for w in want),
           "     %g}," % eps]
  return "\n".join(wrap(l) for line in lines for l in line.split("\n"))


# ---------------------------------------------------------------------------------
# Sparse: var [4, 3], gradient rows for indices [2, 0, 2] (2 repeated: applied twice, in
# order); one-element rows (var [5], indices [3, 1, 3]) for the kernels with TF's scalar loop.

VAR = f32([[1, 2, 3], [-1, 0.5, 0], [0.25, -2, 1.5], [3, -3, 0.75]])
POS = f32([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9], [1.0, 0.1, 0.2]])
SMALL = f32([[0.05, -0.1, 0.2], [0.3, -0.4, 0.0], [-0.2, 0.1, 0.15], [0.0, 0.25, -0.3]])
GRAD = f32([[0.5, -1, 2], [1, 0.25, -0.5], [-0.75, 1.5, 0.1]])
IDX = [2, 0, 2]
VAR1 = f32([1, -2, 0.5, 3, -0.25])
POS1 = f32([0.1, 0.2, 0.3, 0.4, 0.5])
SMALL1 = f32([0.05, -0.1, 0.2, 0.3, -0.4])
GRAD1 = f32([0.5, -1, 2])
IDX1 = [3, 1, 3]

FTRL = {"lr": 0.1, "l1": 0.05, "l2": 0.02, "lr_power": -0.5}
FTRL_V2 = dict(FTRL, l2_shrinkage=0.1)


def sparse_cases():
  out = []

  def add(op, attrs, slots, scalars, one_row=False, eps=1e-6, note=""):
    if one_row:
      out.append(apply_case(op, attrs, [5], slots, scalars, GRAD1, IDX1, eps,
                            note + " (one-element rows)"))
    else:
      out.append(apply_case(op, attrs, [4, 3], slots, scalars, GRAD, IDX, eps, note))

  for one in (False, True):
    v, p, s = (VAR1, POS1, SMALL1) if one else (VAR, POS, SMALL)
    add("SparseApplyMomentum", {}, [v, s], {"lr": 0.1, "momentum": 0.9}, one)
    add("SparseApplyMomentum", {"use_nesterov": True}, [v, s], {"lr": 0.1, "momentum": 0.9}, one)
    add("SparseApplyAdagrad", {}, [v, p], {"lr": 0.1}, one)
    add("SparseApplyAdagrad", {"update_slots": False}, [v, p], {"lr": 0.1}, one)
    add("SparseApplyAdagradV2", {}, [v, p], {"lr": 0.1, "epsilon": 0.01}, one)
    add("SparseApplyRMSProp", {}, [v, p, s],
        {"lr": 0.01, "rho": 0.9, "momentum": 0.5, "epsilon": 1e-6}, one)
    add("SparseApplyCenteredRMSProp", {}, [v, s, p, s],
        {"lr": 0.01, "rho": 0.9, "momentum": 0.5, "epsilon": 1e-6}, one)
    add("SparseApplyAdadelta", {}, [v, p, s * s], {"lr": 1.0, "rho": 0.95, "epsilon": 1e-6}, one)
    add("SparseApplyFtrl", {}, [v, p, s], FTRL, one)
    add("SparseApplyFtrl", {"multiply_linear_by_lr": True}, [v, p, s], FTRL, one)
    add("SparseApplyFtrl", {}, [v, p, s], dict(FTRL, lr_power=-0.7), one, eps=1e-5,
        note=", lr_power -0.7 (TF's vectorized pow: a few ulps)")
    add("SparseApplyFtrl", {}, [v, p, s * 10], dict(FTRL, l1=0.8), one,
        note=", l1 0.8 (linear inside [-l1, l1] zeroes var)")
    add("SparseApplyFtrlV2", {}, [v, p, s], FTRL_V2, one)
    add("SparseApplyFtrlV2", {"multiply_linear_by_lr": True}, [v, p, s], FTRL_V2, one)
    add("SparseApplyProximalAdagrad", {}, [v, p], {"lr": 0.1, "l1": 0.05, "l2": 0.02}, one)
    add("SparseApplyProximalAdagrad", {}, [v, p], {"lr": 0.1, "l1": 0.0, "l2": 0.02}, one)
    add("SparseApplyProximalGradientDescent", {}, [v], {"alpha": 0.1, "l1": 0.05, "l2": 0.02},
        one)
    add("SparseApplyProximalGradientDescent", {}, [v], {"alpha": 0.1, "l1": 0.0, "l2": 0.02},
        one)
    add("SparseApplyAdagradDA", {}, [v, s, p],
        {"lr": 0.1, "l1": 0.05, "l2": 0.02, "global_step": 3}, one)
    add("SparseApplyAdagradDA", {}, [v, s, p],
        {"lr": 0.1, "l1": 0.0, "l2": 0.02, "global_step": 3}, one)
    add("SparseApplyKerasMomentum", {"use_nesterov": True}, [v, s],
        {"lr": 0.1, "momentum": 0.9}, one, note=" (resource form only)")
  return out


# ---------------------------------------------------------------------------------
# Dense: var [2, 3].

DVAR = f32([[1, -2, 0.5], [3, -0.25, 0]])
DPOS = f32([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
DSMALL = f32([[0.05, -0.1, 0.2], [0.3, -0.4, 0.0]])
DGRAD = f32([[0.5, -1, 2], [1, 0.25, -0.5]])


def dense_cases():
  out = []

  def add(op, attrs, slots, scalars, eps=1e-6, note=""):
    out.append(apply_case(op, attrs, [2, 3], slots, scalars, DGRAD, None, eps, note))

  add("ApplyFtrl", {}, [DVAR, DPOS, DSMALL], FTRL)
  add("ApplyFtrl", {"multiply_linear_by_lr": True}, [DVAR, DPOS, DSMALL], FTRL)
  add("ApplyFtrl", {}, [DVAR, DPOS, DSMALL], dict(FTRL, lr_power=-0.7), eps=1e-5,
      note=", lr_power -0.7 (TF's vectorized pow: a few ulps)")
  add("ApplyFtrl", {"multiply_linear_by_lr": True}, [DVAR, DPOS, DSMALL],
      dict(FTRL, lr_power=-0.7), eps=1e-5, note=", lr_power -0.7")
  add("ApplyFtrl", {}, [DVAR, DPOS, DSMALL * 10], dict(FTRL, l1=0.8),
      note=", l1 0.8 (linear inside [-l1, l1] zeroes var)")
  add("ApplyFtrlV2", {}, [DVAR, DPOS, DSMALL], FTRL_V2)
  add("ApplyFtrlV2", {"multiply_linear_by_lr": True}, [DVAR, DPOS, DSMALL], FTRL_V2)
  add("ApplyProximalGradientDescent", {}, [DVAR], {"alpha": 0.1, "l1": 0.05, "l2": 0.02})
  add("ApplyProximalGradientDescent", {}, [DVAR], {"alpha": 0.1, "l1": 0.0, "l2": 0.02})
  add("ApplyAdagradDA", {}, [DVAR, DSMALL, DPOS],
      {"lr": 0.1, "l1": 0.05, "l2": 0.02, "global_step": 3})
  add("ApplyAdagradDA", {}, [DVAR, DSMALL, DPOS],
      {"lr": 0.1, "l1": 0.0, "l2": 0.02, "global_step": 3})
  add("ApplyProximalAdagrad", {}, [DVAR, DPOS], {"lr": 0.1, "l1": 0.05, "l2": 0.02})
  add("ApplyProximalAdagrad", {}, [DVAR, DPOS], {"lr": 0.1, "l1": 0.0, "l2": 0.02})
  add("ApplyAdaMax", {}, [DVAR, DSMALL, DPOS],
      {"beta1_power": 0.729, "lr": 0.01, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-7})
  add("ApplyAddSign", {}, [DVAR, DSMALL],
      {"lr": 0.1, "alpha": 1.0, "sign_decay": 0.5, "beta": 0.9})
  add("ApplyPowerSign", {}, [DVAR, DSMALL],
      {"lr": 0.1, "logbase": 0.6931472, "sign_decay": 0.5, "beta": 0.9})
  add("ApplyKerasMomentum", {}, [DVAR, DSMALL], {"lr": 0.1, "momentum": 0.9},
      note=" (resource form only)")
  add("ApplyKerasMomentum", {"use_nesterov": True}, [DVAR, DSMALL],
      {"lr": 0.1, "momentum": 0.9}, note=" (resource form only)")
  return out


# ---------------------------------------------------------------------------------
# Scatter: params [4, 3]; indices [[2, 0], [2, 3]] (2 repeated) with updates [2, 2, 3], and
# a scalar update for indices [1, 1].

PARAMS = np.array([[1, 2, 3], [-4, 5, -6], [8, -2, 4], [0, 7, -1]])
SIDX = np.array([[2, 0], [2, 3]])
UPD = np.array([[[2, -1, 4], [1, 3, -2]], [[-3, 2, 5], [6, -4, 1]]])


def scatter_cases():
  out = []
  for dtype, name in ((np.float32, "DT_FLOAT"), (np.int32, "DT_INT32")):
    for op in ("Update", "Add", "Sub", "Mul", "Div", "Min", "Max"):
      for indices, updates in ((SIDX, UPD), (np.array([1, 1]), np.array(3))):
        v = tf.Variable(PARAMS.astype(dtype))
        getattr(raw, "ResourceScatter" + op)(resource=v.handle, indices=tf.constant(indices),
                                             updates=tf.constant(updates.astype(dtype)))
        out.append(wrap('    {"Scatter%s", %s, %s, {%s}, %s, {%s}, %s, %s},' % (
            op, name, fmt(PARAMS, "d"), ", ".join(map(str, indices.shape)), fmt(indices, "d"),
            ", ".join(map(str, updates.shape)), fmt(updates, "d"), fmt(v.numpy(), "d")
            if dtype == np.int32 else fmt(v.numpy())), indent=5))
  return out


def splice(path, table, lines):
  text = open(path).read()
  begin = "// BEGIN %s (record_tf_values.py)\n" % table
  end = "    // END %s" % table
  start = text.index(begin) + len(begin)
  stop = text.index(end)
  text = text[:start] + "\n".join(lines) + "\n" + text[stop:]
  open(path, "w").write(text)


def main():
  splice(os.path.join(HERE, "sparse_apply_ops_test.cc"), "kSparseCases", sparse_cases())
  splice(os.path.join(HERE, "apply_ops_test.cc"), "kDenseCases", dense_cases())
  splice(os.path.join(HERE, "scatter_ops_test.cc"), "kScatterCases", scatter_cases())
  print("recorded with TensorFlow", tf.__version__)


if __name__ == "__main__":
  main()
