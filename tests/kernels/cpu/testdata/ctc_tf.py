"""Expected values and error texts of tests/kernels/cpu/ctc_loss_op_test.cc, from TensorFlow.

Run with TF 2.21 (tensorflow-cpu):  python ctc_tf.py
Each line prints a call's tf.raw_ops results (values, shape, dtype; %.9g for float, %.17g
for double) or its error text without the eager wrapper's "{{function_node ...}}" prefix.

The logits are Logits(max_time, batch, classes): ((7t + 13b + 5c + 3tc) % 17 - 8) / 4,
exact in float and double, so the C++ test builds the same tensor from the formula.
Double cases run in a fresh process each: TF 2.21's eager kernel cache can hand a later
call the kernel of an earlier call with another T, which gives float results.
CTCLossV2 has no CPU kernel in TF (cuDNN only); its expected values are those of
tf.nn.ctc_loss(..., blank_index=0) on CPU, which rotates the blank to the last class,
shifts the labels down by one and runs CTCLoss, and of its gradient w.r.t. the logits.
"""
import re
import subprocess
import sys

import numpy as np
import tensorflow as tf

r = tf.raw_ops


def logits(max_time, batch, classes, dtype=np.float32):
    t, b, c = np.meshgrid(np.arange(max_time), np.arange(batch), np.arange(classes),
                          indexing="ij")
    return (((7 * t + 13 * b + 5 * c + 3 * t * c) % 17 - 8) / 4.0).astype(dtype)


def fmt(o):
    a = o.numpy() if hasattr(o, "numpy") else o
    if a.dtype == np.float32:
        vals = ["%.9g" % v for v in a.ravel()]
    elif a.dtype == np.float64:
        vals = ["%.17g" % v for v in a.ravel()]
    else:
        vals = [str(v) for v in a.ravel().tolist()]
    return "{%s} %s %s" % (", ".join(vals), list(a.shape), a.dtype.name)


def show(label, fn, **kw):
    try:
        v = fn(**kw)
        outs = v if isinstance(v, (list, tuple)) else [v]
        print("%s: %s" % (label, " | ".join(fmt(o) for o in outs)))
    except tf.errors.OpError as e:
        msg = re.sub(r"^\{\{function_node [^}]*\}\} ", "", e.message).split(" [Op:")[0]
        print("%s: %s: %r" % (label, type(e).__name__, msg))


def sparse(labels):
    """Row-major sparse indices and values of a list of label lists."""
    idx = [[b, i] for b, l in enumerate(labels) for i in range(len(l))]
    vals = [v for l in labels for v in l]
    return np.array(idx, np.int64).reshape(-1, 2), np.array(vals, np.int32)


def ctc(label, labels, seq_len, x=None, idx=None, vals=None, **attrs):
    x = logits(6, 3, 5) if x is None else x
    if idx is None:
        idx, vals = sparse(labels)
    show(label, r.CTCLoss, inputs=x, labels_indices=idx, labels_values=vals,
         sequence_length=np.array(seq_len, np.int32), **attrs)


def isolated(code):
    """Runs `code` (a call of this file's functions) in a fresh process."""
    sys.stdout.flush()
    subprocess.run([sys.executable, __file__, code], check=True)


MAIN = [[1, 2], [3, 3, 0], [2]]
SEQ = [6, 5, 4]

if len(sys.argv) > 1:  # one isolated case (see the docstring)
    exec(sys.argv[1])
    sys.exit(0)

print("# CTCLoss: max_time 6, batch 3, 5 classes (blank 4)")
ctc("default", MAIN, SEQ)
ctc("collapse", MAIN, SEQ, preprocess_collapse_repeated=True)
ctc("no merge", MAIN, SEQ, ctc_merge_repeated=False)
isolated('ctc("double", MAIN, SEQ, x=logits(6, 3, 5, np.float64))')
ctc("ignore longer", MAIN, [6, 2, 4], ignore_longer_outputs_than_inputs=True)
ctc("ignore longer, seq 0", MAIN, [6, 5, 0], ignore_longer_outputs_than_inputs=True)
# Labels >= blank end the sequence: [1, 4] is [1]; [7] is no label at all (l' = [blank]).
ctc("null labels", [[1, 4], [3, 3, 0], [7]], SEQ)
# [3, 3] needs 3 steps when repeats merge: no path in 2 steps, loss inf, gradient = softmax.
ctc("no path", [[1, 2], [3, 3], [2]], [6, 2, 4])
# Gaps in the label columns are fine: values are taken in order.
ctc("gap", None, SEQ, idx=np.array([[0, 0], [0, 2], [1, 0], [1, 1], [1, 2], [2, 0]], np.int64),
    vals=np.array([1, 2, 3, 3, 0, 2], np.int32))
ctc("one class", None, SEQ, x=logits(6, 3, 1),
    idx=sparse(MAIN)[0], vals=sparse(MAIN)[1])

print("# CTCLoss errors")
ctc("seq > max_time", MAIN, [7, 5, 4])
ctc("labels longer", MAIN, [6, 2, 4])
ctc("labels longer, seq 0", MAIN, [6, 5, 0])
ctc("null then label", [[4, 1], [3, 3, 0], [2]], SEQ)
ctc("negative label", [[1, 2], [3, 3, 0], [-1]], SEQ)
ctc("negative seq", MAIN, [6, 5, -1])
ctc("empty labels", [[1, 2], [3, 3, 0], []], SEQ)
ctc("unsorted", None, SEQ, idx=np.array([[0, 1], [0, 0], [1, 0], [1, 1], [1, 2], [2, 0]],
                                        np.int64), vals=sparse(MAIN)[1])
ctc("repeated", None, SEQ, idx=np.array([[0, 0], [0, 0], [1, 0], [1, 1], [1, 2], [2, 0]],
                                        np.int64), vals=sparse(MAIN)[1])
ctc("batch out of bounds", None, SEQ,
    idx=np.array([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [3, 0]], np.int64),
    vals=sparse(MAIN)[1])
ctc("negative column", None, SEQ,
    idx=np.array([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [2, -1]], np.int64),
    vals=sparse(MAIN)[1])
ctc("batch mismatch", MAIN, [6, 5])
ctc("rows mismatch", None, SEQ, idx=sparse(MAIN)[0], vals=sparse(MAIN)[1][:5])
ctc("inputs 2-D", None, SEQ, x=logits(6, 3, 5)[0], idx=sparse(MAIN)[0], vals=sparse(MAIN)[1])
ctc("seq 2-D", None, [[6], [5], [4]], idx=sparse(MAIN)[0], vals=sparse(MAIN)[1])
ctc("indices 1 column", None, SEQ, idx=sparse(MAIN)[0][:, :1], vals=sparse(MAIN)[1])
ctc("indices 3 columns", None, SEQ, idx=np.concatenate([sparse(MAIN)[0]] * 2, 1)[:, :3],
    vals=sparse(MAIN)[1])
ctc("max_time 0", None, [0, 0, 0], x=logits(0, 3, 5), idx=sparse(MAIN)[0],
    vals=sparse(MAIN)[1])
ctc("batch 0", None, [], x=logits(6, 0, 5), idx=sparse(MAIN)[0], vals=sparse(MAIN)[1])

print("# CTCLossV2 as tf.nn.ctc_loss(blank_index=0)")
x = tf.constant(logits(6, 3, 5))
idx, vals = sparse([[2, 3], [4, 4, 1], [3]])  # MAIN's classes moved up by one
with tf.GradientTape() as tape:
    tape.watch(x)
    loss = tf.nn.ctc_loss(tf.SparseTensor(idx, vals, [3, 3]), x,
                          label_length=None, logit_length=np.array(SEQ, np.int32),
                          logits_time_major=True, blank_index=0)
print("v2: %s | %s" % (fmt(loss), fmt(tape.gradient(loss, x))))

print("# CTCGreedyDecoder")
G = r.CTCGreedyDecoder
x = logits(6, 3, 5)
show("greedy", G, inputs=x, sequence_length=np.array(SEQ, np.int32))
# Repeats, a blank between repeats, ties (the first column wins) and NaN (never a maximum,
# except in column 0, where it stays the maximum): classes 4, blank 3.
nan = float("nan")
REPEATS = np.array([[[0, 2, 1, 0], [1, 1, 1, 1]],
                    [[0, 3, 1, 0], [-1, -2, -3, -0.5]],
                    [[0, 0, 0, 5], [0.5, 0.5, 0, 0]],
                    [[1, 4, 0, 0], [0.5, 0.25, 0, 0]],
                    [[2, nan, 2, 1], [nan, 1, 0, 0]]], np.float32)
show("greedy repeats", G, inputs=REPEATS, sequence_length=np.array([5, 4], np.int32))
show("greedy repeats merge", G, inputs=REPEATS, sequence_length=np.array([5, 5], np.int32),
     merge_repeated=True)
show("greedy blank 0", G, inputs=x, sequence_length=np.array([6, 0, 3], np.int32),
     blank_index=0)
isolated('show("greedy double", r.CTCGreedyDecoder, inputs=logits(6, 3, 5, np.float64), '
         'sequence_length=np.array(SEQ, np.int32), merge_repeated=True)')
show("greedy blank 5", G, inputs=x, sequence_length=np.array(SEQ, np.int32), blank_index=5)
show("greedy blank -6", G, inputs=x, sequence_length=np.array(SEQ, np.int32), blank_index=-6)
show("greedy seq > max_time", G, inputs=x, sequence_length=np.array([7, 1, 1], np.int32))
show("greedy batch mismatch", G, inputs=x, sequence_length=np.array([6, 5], np.int32))
show("greedy empty", G, inputs=logits(6, 3, 0), sequence_length=np.array(SEQ, np.int32))
show("greedy 2-D", G, inputs=x[0], sequence_length=np.array(SEQ, np.int32))
show("greedy seq 2-D", G, inputs=x, sequence_length=np.array([[6], [5], [4]], np.int32))
