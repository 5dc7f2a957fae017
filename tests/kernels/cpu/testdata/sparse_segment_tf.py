"""Expected values and error texts of tests/kernels/cpu/sparse_segment_ops_test.cc, from
TensorFlow.

Run with TF 2.21 (tensorflow-cpu):  python sparse_segment_tf.py
Each line prints a call's tf.raw_ops results (values, shape, dtype; both outputs of the
GradV2 ops) or its error text without the eager wrapper's "{{function_node ...}}" prefix.
Cases mixing int64 ids with other dtypes are printed by a fresh process each: TF 2.21's
eager kernel cache can hand a later call the kernel of an earlier call with other index
dtypes, which gives wrong values.
"""
import re
import subprocess
import sys

import numpy as np
import tensorflow as tf

r = tf.raw_ops


def show(label, fn, **kw):
    try:
        v = fn(**kw)
        outs = v if isinstance(v, (list, tuple)) else [v]
        print("%s: %s" % (label, " | ".join(
            "%s %s %s" % (o.numpy().astype(np.float64).ravel().tolist()
                          if o.dtype in (tf.half, tf.bfloat16) else o.numpy().ravel().tolist(),
                          list(o.shape), o.dtype.name) for o in outs)))
    except tf.errors.OpError as e:
        msg = re.sub(r"^\{\{function_node [^}]*\}\} ", "", e.message).split(" [Op:")[0]
        print("%s: %s: %s" % (label, type(e).__name__, msg))


f32 = lambda v: np.array(v, np.float32)
i64 = lambda v: np.array(v, np.int64)
DATA = f32([[1, 2], [3, 4], [5, 6], [-7, 8]])
EMPTY = np.zeros([0], np.int32)

if len(sys.argv) > 1:  # one isolated case (see the docstring)
    exec(sys.argv[1])
    sys.exit(0)

print("# forward: repeated index 1, empty segment 1")
for name in ("Sum", "Mean", "SqrtN"):
    op = getattr(r, "SparseSegment" + name)
    wns = getattr(r, "SparseSegment%sWithNumSegments" % name)
    show(name, op, data=DATA, indices=[0, 1, 1, 3, 2], segment_ids=[0, 0, 0, 2, 2])
    show(name + " num_segments=5", wns, data=DATA, indices=[0, 1, 1, 3, 2],
         segment_ids=[0, 0, 0, 2, 2], num_segments=5)
    show(name + " no indices, num_segments=3", wns, data=DATA, indices=EMPTY,
         segment_ids=EMPTY, num_segments=3)
    # Summation order: 2-9 rows one after another, then groups of 8 added.
    show(name + " 10 rows", op, data=f32([1e8] + [1] * 8 + [-1e8]), indices=list(range(10)),
         segment_ids=[0] * 10)
    show(name + " 18 rows", op, data=f32([1e8] + [1] * 16 + [-1e8]),
         indices=list(range(18)), segment_ids=[0] * 18)
    show(name + " 3 rows", op, data=f32([0.1, 0.2, 0.7]), indices=[0, 1, 2],
         segment_ids=[0, 0, 0])
    show(name + " 3-D", op, data=np.arange(12, dtype=np.float32).reshape(3, 2, 2),
         indices=[2, 0, 1], segment_ids=[0, 1, 1])
    for dt in (np.float16, tf.bfloat16.as_numpy_dtype):
        show("%s %s" % (name, np.dtype(dt).name), op, data=np.array([2048, 1, 1], dt),
             indices=[0, 1, 2], segment_ids=[0, 0, 0])
        show("%s %s 0.1" % (name, np.dtype(dt).name), op,
             data=np.array([0.1, 0.2, 0.7], dt), indices=[0, 1, 2], segment_ids=[0, 0, 0])
show("Sum int8", r.SparseSegmentSum, data=np.array([100, 100, 5], np.int8),
     indices=[0, 1, 2], segment_ids=[0, 0, 1])

print("# forward errors")
S = r.SparseSegmentSum
show("unsorted", S, data=DATA, indices=[0, 1, 2], segment_ids=[1, 0, 1])
show("negative first", S, data=DATA, indices=[0, 1, 2], segment_ids=[-1, 0, 1])
show("negative last", S, data=DATA, indices=[0, 1, 2], segment_ids=[0, 0, -1])
show("bad index", S, data=DATA, indices=[0, 4, 2], segment_ids=[0, 0, 1])
show("bad index after unsorted", S, data=DATA, indices=[9, 1, 2], segment_ids=[1, 0, 1])
show("sizes", S, data=DATA, indices=[0, 1, 2], segment_ids=[0, 0])
show("indices matrix", S, data=DATA, indices=[[0, 1]], segment_ids=[0, 0])
show("scalar data", S, data=np.float32(1), indices=[0], segment_ids=[0])
W = r.SparseSegmentMeanWithNumSegments
show("num_segments too small", W, data=DATA, indices=[0, 1, 2], segment_ids=[0, 0, 3],
     num_segments=3)
show("num_segments negative", W, data=DATA, indices=[0, 1, 2], segment_ids=[0, 0, 1],
     num_segments=-1)
show("num_segments vector", W, data=DATA, indices=[0, 1, 2], segment_ids=[0, 0, 1],
     num_segments=[3])

print("# gradients")
G = f32([[1, 2], [3, 4], [5, 6]])
for name in ("Sum", "Mean", "SqrtN"):
    g1 = getattr(r, "SparseSegment%sGrad" % name)
    g2 = getattr(r, "SparseSegment%sGradV2" % name)
    show(name + "Grad", g1, grad=G, indices=[0, 1, 1, 3, 2], segment_ids=[0, 0, 0, 2, 2],
         output_dim0=5)
    show(name + "GradV2", g2, grad=G, indices=[3, 1, 0, 1, 2], segment_ids=[0, 0, 0, 2, 2],
         dense_output_dim0=5)
    # Contributions to one row are added in input order.
    show(name + "GradV2 order", g2, grad=f32([1, 1e8, -1e8]), indices=[0, 1, 0, 1, 0],
         segment_ids=[0, 0, 1, 1, 2], dense_output_dim0=2)
    # TF leaves this output uninitialised (prints garbage); dflow's kernel writes 0.
    show(name + "Grad no indices", g1, grad=G, indices=EMPTY, segment_ids=EMPTY,
         output_dim0=3)
    show(name + "GradV2 no indices", g2, grad=G, indices=EMPTY, segment_ids=EMPTY,
         dense_output_dim0=3)
    for dt in (np.float16, tf.bfloat16.as_numpy_dtype):
        show("%sGrad %s" % (name, np.dtype(dt).name), g1, grad=np.array([2048, 1, 0.7], dt),
             indices=[0, 0, 0, 1], segment_ids=[0, 1, 2, 2], output_dim0=2)

print("# gradient errors")
for name in ("Sum", "Mean"):
    g1 = getattr(r, "SparseSegment%sGrad" % name)
    g2 = getattr(r, "SparseSegment%sGradV2" % name)
    for label, fn, dim in (("Grad", g1, "output_dim0"), ("GradV2", g2, "dense_output_dim0")):
        show(name + label + " bad index", fn, grad=G, indices=[0, 7, 1],
             segment_ids=[0, 0, 1], **{dim: 4})
        show(name + label + " last id too big", fn, grad=G, indices=[0, 1, 2],
             segment_ids=[0, 0, 3], **{dim: 4})
        show(name + label + " negative id before bad index", fn, grad=G, indices=[0, 9, 2],
             segment_ids=[0, -1, 1], **{dim: 4})
        show(name + label + " dim0 vector", fn, grad=G, indices=[0], segment_ids=[0],
             **{dim: [4]})
        show(name + label + " dim0 negative", fn, grad=G, indices=[0], segment_ids=[0],
             **{dim: -1})
        show(name + label + " scalar grad", fn, grad=np.float32(1), indices=[0],
             segment_ids=[0], **{dim: 4})

print("# int64 indices and ids (one process each)")
for case in (
        "show('Sum int64', r.SparseSegmentSum, data=DATA, indices=i64([0, 1, 1, 3, 2]),"
        " segment_ids=i64([0, 0, 0, 2, 2]))",
        "show('SqrtN num_segments int64', r.SparseSegmentSqrtNWithNumSegments, data=DATA,"
        " indices=i64([0, 1, 1, 3, 2]), segment_ids=[0, 0, 0, 2, 2], num_segments=i64(4))",
        # TF reads num_segments as an int32: 2**32 + 5 gives 5 segments.
        "show('num_segments 2**32 + 5', r.SparseSegmentSumWithNumSegments, data=DATA,"
        " indices=[0, 1, 2], segment_ids=[0, 0, 1], num_segments=i64(2**32 + 5))",
        "show('last id int32 max', r.SparseSegmentSum, data=DATA, indices=[0, 1, 2],"
        " segment_ids=i64([0, 0, 2**31 - 1]))",
        "show('MeanGradV2 int64', r.SparseSegmentMeanGradV2, grad=f32([[1, 2], [3, 4]]),"
        " indices=i64([3, 1, 3]), segment_ids=i64([0, 1, 1]), dense_output_dim0=4)"):
    sys.stdout.flush()
    subprocess.run([sys.executable, __file__, case], check=True)
