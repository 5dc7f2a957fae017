"""Expected values of resize_grad_ops_test.cc and lrn_ops_test.cc, from TensorFlow.

Run with TF 2.21 (tensorflow-cpu, x86):  python resize_grad_lrn_tf.py > tables.txt
It calls ResizeBilinearGrad, ResizeNearestNeighborGrad, LRN and LRNGrad through tf.raw_ops
on the CPU and prints C++ initializers (floats with 9 significant digits, doubles with 17;
half results as the float they convert to exactly).

Inputs are always made with tf.constant(x, dtype): in TF 2.21 eager, a raw op that was
once called with a float32 NumPy array converts later float16 arrays to float32.
"""
import numpy as np
import tensorflow as tf

raw = tf.raw_ops


def grad_image(shape):
    """The C++ test's GradImage: (i * 7 % 11) - 5 + i / 4, exact in half and float."""
    i = np.arange(int(np.prod(shape)))
    return ((i * 7 % 11) - 5 + i * 0.25).astype(np.float32).reshape(shape)


def lrn_image(shape, seed, period=1 << 30):
    """The C++ test's LrnImage: ((i * 7 + seed) % 13) * 3/8 - 9/4 + (i % period) / 16."""
    i = np.arange(int(np.prod(shape)))
    v = ((i * 7 + seed) % 13) * 0.375 - 2.25 + (i % period) * 0.0625
    return v.astype(np.float32).reshape(shape)


def floats(values):
    return ", ".join("%.9g" % float(v) for v in np.asarray(values, np.float32).ravel())


def doubles(values):
    return ", ".join("%.17g" % float(v) for v in np.asarray(values, np.float64).ravel())


def flag(b):
    return "true" if b else "false"


def resize_grad_tables():
    # (original h, w; resized h, w): upsampling, downsampling, and a one-row original,
    # where TF's gradient takes the legacy scale even with align_corners.
    sizes = [(2, 3, 3, 5), (3, 4, 2, 3), (1, 3, 3, 4)]
    print("// ResizeGradCase tables: {op, original h, w, resized h, w, align_corners, "
          "half_pixel_centers, want}")
    for op in ["ResizeBilinearGrad", "ResizeNearestNeighborGrad"]:
        combos = [(False, False), (True, False), (False, True)]
        if op == "ResizeNearestNeighborGrad":
            combos.append((True, True))  # accepted by the nearest gradient only
        for oh, ow, rh, rw in sizes:
            for ac, hp in combos:
                g = tf.constant(grad_image([2, rh, rw, 3]))
                if op == "ResizeBilinearGrad":
                    out = raw.ResizeBilinearGrad(
                        grads=g, original_image=tf.zeros([2, oh, ow, 3]),
                        align_corners=ac, half_pixel_centers=hp)
                else:
                    out = raw.ResizeNearestNeighborGrad(
                        grads=g, size=[oh, ow], align_corners=ac, half_pixel_centers=hp)
                print('    {"%s", %d, %d, %d, %d, %s, %s, {%s}},' % (
                    op, oh, ow, rh, rw, flag(ac), flag(hp), floats(out.numpy())))


def resize_grad_dtypes():
    g = tf.constant(grad_image([1, 3, 5, 2]))
    for dt in [tf.float64, tf.float16, tf.bfloat16]:
        out = raw.ResizeBilinearGrad(grads=g, original_image=tf.zeros([1, 2, 3, 2], dt),
                                     half_pixel_centers=True)
        text = doubles(out.numpy()) if dt == tf.float64 else floats(
            tf.cast(out, tf.float32).numpy())
        print("// ResizeBilinearGrad %s, 3x5 -> 2x3, half_pixel_centers: {%s}" % (
            dt.name, text))
    # Nearest: a half sum that rounds at each addition (16 grads into one pixel).
    hv = np.array([1000.5, 1.5, 3.25, 700.75, 2.5, 0.5, 1.25, 350.5,
                   1.5, 2.5, 0.75, 7.5, 3.5, 4.5, 0.25, 1.5], np.float32)
    for dt in [tf.float16, tf.bfloat16]:
        out = raw.ResizeNearestNeighborGrad(grads=tf.constant(hv.reshape([1, 4, 4, 1]), dt),
                                            size=[1, 1])
        print("// ResizeNearestNeighborGrad %s 4x4 -> 1x1: %s (float sum %s)" % (
            dt.name, floats(tf.cast(out, tf.float32).numpy()), "%.9g" % hv.sum()))
    for dt, vals in [(tf.uint8, [200, 100, 50, 30]), (tf.int8, [100, 100, 50, -30]),
                     (tf.int32, [2**31 - 1, 1, 5, 7])]:
        out = raw.ResizeNearestNeighborGrad(grads=tf.constant(vals, dt, shape=[1, 2, 2, 1]),
                                            size=[1, 1])
        print("// ResizeNearestNeighborGrad %s %s -> %s" % (dt.name, vals, out.numpy().ravel()))


LRN_PARAMS = [(2, 1.0, 1.0, 0.5), (2, 1.5, 0.25, 0.75), (2, 2.0, 0.125, 1.0)]


def lrn_tables():
    shape = [2, 2, 3, 7]
    print("// LrnCase tables: {depth_radius, bias, alpha, beta, want}")
    for dt in [tf.float32, tf.float16]:
        x = tf.constant(lrn_image(shape, 3), dt)
        g = tf.constant(lrn_image(shape, 5), dt)
        y = tf.constant(lrn_image(shape, 11), dt)  # any output_image: LRNGrad only reads it
        for r, bias, alpha, beta in LRN_PARAMS:
            out = raw.LRN(input=x, depth_radius=r, bias=bias, alpha=alpha, beta=beta)
            grad = raw.LRNGrad(input_grads=g, input_image=x, output_image=y, depth_radius=r,
                               bias=bias, alpha=alpha, beta=beta)
            for name, t in [("LRN", out), ("LRNGrad", grad)]:
                print('    // %s %s' % (name, dt.name))
                print('    {%d, %g, %g, %g, {%s}},' % (
                    r, bias, alpha, beta, floats(tf.cast(t, tf.float32).numpy())))
    # Depth past 384 with beta 0.5 or 1: TF's running-sum path.
    picks = [0, 1, 2, 3, 57, 199, 200, 396, 397, 398, 399]
    for dt in [tf.float32, tf.float16]:
        x = tf.constant(lrn_image([1, 1, 1, 400], 3, period=29), dt)
        for r, bias, alpha, beta in [(2, 1.0, 0.01, 0.5), (5, 2.0, 0.001, 1.0)]:
            out = raw.LRN(input=x, depth_radius=r, bias=bias, alpha=alpha, beta=beta)
            v = tf.cast(out, tf.float32).numpy().ravel()
            print("// LRN depth 400 %s r=%d bias=%g alpha=%g beta=%g at %s: {%s}" % (
                dt.name, r, bias, alpha, beta, picks, floats(v[picks])))


def errors():
    def show(name, f):
        try:
            f()
            print("// %s: OK" % name)
        except tf.errors.OpError as e:
            print("// %s: %s" % (name, e.message.split(" [Op:")[0].split("}} ")[-1]))
    one = tf.ones([1, 2, 2, 1])
    show("bilinear both", lambda: raw.ResizeBilinearGrad(
        grads=one, original_image=tf.zeros([1, 3, 3, 1]), align_corners=True,
        half_pixel_centers=True))
    show("bilinear grads 3-D", lambda: raw.ResizeBilinearGrad(
        grads=tf.ones([2, 2, 1]), original_image=tf.zeros([1, 3, 3, 1])))
    show("bilinear resized 0", lambda: raw.ResizeBilinearGrad(
        grads=tf.ones([1, 0, 2, 1]), original_image=tf.zeros([1, 3, 3, 1])))
    show("bilinear original 3-D", lambda: raw.ResizeBilinearGrad(
        grads=one, original_image=tf.zeros([3, 3, 1])))
    show("bilinear original 0", lambda: raw.ResizeBilinearGrad(
        grads=one, original_image=tf.zeros([1, 3, 0, 1])))
    show("bilinear original 2^31-1", lambda: raw.ResizeBilinearGrad(
        grads=one, original_image=tf.zeros([0, 2**31 - 1, 1, 1])))
    show("bilinear batch and channels from grads", lambda: print(raw.ResizeBilinearGrad(
        grads=tf.ones([2, 2, 2, 3]), original_image=tf.zeros([1, 3, 3, 1])).shape))
    show("nearest grads 3-D", lambda: raw.ResizeNearestNeighborGrad(
        grads=tf.ones([2, 2, 1]), size=[3, 3]))
    show("nearest size 2-D", lambda: raw.ResizeNearestNeighborGrad(grads=one, size=[[3, 3]]))
    show("nearest size 3", lambda: raw.ResizeNearestNeighborGrad(grads=one, size=[3, 3, 3]))
    show("nearest size 0", lambda: raw.ResizeNearestNeighborGrad(grads=one, size=[0, 3]))
    show("nearest size -1", lambda: raw.ResizeNearestNeighborGrad(grads=one, size=[3, -1]))
    show("nearest empty grads", lambda: print(raw.ResizeNearestNeighborGrad(
        grads=tf.ones([1, 0, 2, 1]), size=[2, 3]).numpy().ravel()))
    four = tf.ones([1, 1, 1, 3])
    show("LRN 3-D", lambda: raw.LRN(input=tf.ones([1, 1, 3])))
    show("LRN radius -1", lambda: raw.LRN(input=four, depth_radius=-1))
    show("LRN radius 2^31", lambda: raw.LRN(input=four, depth_radius=2**31))
    show("LRNGrad grads 3-D", lambda: raw.LRNGrad(
        input_grads=tf.ones([1, 1, 3]), input_image=four, output_image=four))
    show("LRNGrad image shape", lambda: raw.LRNGrad(
        input_grads=four, input_image=tf.ones([1, 1, 1, 4]), output_image=four))
    show("LRNGrad output 3-D", lambda: raw.LRNGrad(
        input_grads=four, input_image=four, output_image=tf.ones([1, 1, 3])))
    show("LRNGrad radius -1", lambda: raw.LRNGrad(
        input_grads=four, input_image=four, output_image=four, depth_radius=-1))


if __name__ == "__main__":
    resize_grad_tables()
    resize_grad_dtypes()
    lrn_tables()
    errors()
