"""TensorFlow 2.21's C++ DirectSession through its C API (ctypes): runs a GraphDef by
tensor names exactly as a C/C++ program would, and reports (code, message)."""
import ctypes, os, numpy as np
import tensorflow as tf
_lib = ctypes.CDLL(os.path.join(os.path.dirname(tf.__file__), "libtensorflow_cc.so.2"))
_lib.TF_NewStatus.restype = ctypes.c_void_p
_lib.TF_GetCode.argtypes = [ctypes.c_void_p]; _lib.TF_GetCode.restype = ctypes.c_int
_lib.TF_Message.argtypes = [ctypes.c_void_p]; _lib.TF_Message.restype = ctypes.c_char_p
_lib.TF_NewSessionOptions.restype = ctypes.c_void_p
_lib.TF_SetConfig.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
_lib.TF_NewDeprecatedSession.argtypes = [ctypes.c_void_p, ctypes.c_void_p]; _lib.TF_NewDeprecatedSession.restype = ctypes.c_void_p
_lib.TF_ExtendGraph.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
_lib.TF_AllocateTensor.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.c_int, ctypes.c_size_t]; _lib.TF_AllocateTensor.restype = ctypes.c_void_p
_lib.TF_TensorData.argtypes = [ctypes.c_void_p]; _lib.TF_TensorData.restype = ctypes.c_void_p
_lib.TF_TensorByteSize.argtypes = [ctypes.c_void_p]; _lib.TF_TensorByteSize.restype = ctypes.c_size_t
_lib.TF_TensorType.argtypes = [ctypes.c_void_p]; _lib.TF_TensorType.restype = ctypes.c_int
_lib.TF_NumDims.argtypes = [ctypes.c_void_p]; _lib.TF_Dim.argtypes = [ctypes.c_void_p, ctypes.c_int]; _lib.TF_Dim.restype = ctypes.c_int64
_lib.TF_Run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                        ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                        ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
CODES = {0:"OK",1:"CANCELLED",2:"UNKNOWN",3:"INVALID_ARGUMENT",4:"DEADLINE_EXCEEDED",5:"NOT_FOUND",6:"ALREADY_EXISTS",7:"PERMISSION_DENIED",8:"RESOURCE_EXHAUSTED",9:"FAILED_PRECONDITION",10:"ABORTED",11:"OUT_OF_RANGE",12:"UNIMPLEMENTED",13:"INTERNAL",14:"UNAVAILABLE",15:"DATA_LOSS",16:"UNAUTHENTICATED"}
def _status(st):
    return CODES[_lib.TF_GetCode(st)], _lib.TF_Message(st).decode()
def _np_dtype_enum(a):
    return tf.as_dtype(a.dtype).as_datatype_enum
def _to_tf(a):
    a = np.ascontiguousarray(a)
    dims = (ctypes.c_int64 * a.ndim)(*a.shape)
    t = _lib.TF_AllocateTensor(_np_dtype_enum(a), dims, a.ndim, a.nbytes)
    ctypes.memmove(_lib.TF_TensorData(t), a.ctypes.data, a.nbytes)
    return t
def _from_tf(t):
    dt = tf.as_dtype(_lib.TF_TensorType(t)).as_numpy_dtype
    shape = [_lib.TF_Dim(t, i) for i in range(_lib.TF_NumDims(t))]
    n = _lib.TF_TensorByteSize(t)
    buf = ctypes.string_at(_lib.TF_TensorData(t), n)
    return np.frombuffer(buf, dtype=dt).reshape(shape).copy()
def run(graph_def_bytes, feeds=None, fetches=(), targets=(), config_bytes=b""):
    """Returns ("OK", [arrays]) or (CODE, message). Create errors are returned too."""
    st = _lib.TF_NewStatus(); opts = _lib.TF_NewSessionOptions()
    if config_bytes:
        _lib.TF_SetConfig(opts, config_bytes, len(config_bytes), st)
        if _lib.TF_GetCode(st): return _status(st)
    sess = _lib.TF_NewDeprecatedSession(opts, st)
    if _lib.TF_GetCode(st): return _status(st)
    _lib.TF_ExtendGraph(sess, graph_def_bytes, len(graph_def_bytes), st)
    if _lib.TF_GetCode(st): return _status(st)
    feeds = feeds or {}
    in_names = (ctypes.c_char_p * len(feeds))(*[k.encode() for k in feeds])
    in_vals = (ctypes.c_void_p * len(feeds))(*[_to_tf(np.asarray(v)) for v in feeds.values()])
    out_names = (ctypes.c_char_p * len(fetches))(*[f.encode() for f in fetches])
    outs = (ctypes.c_void_p * len(fetches))()
    tg = (ctypes.c_char_p * len(targets))(*[t.encode() for t in targets])
    _lib.TF_Run(sess, None, in_names, in_vals, len(feeds), out_names, outs, len(fetches), tg, len(targets), None, st)
    if _lib.TF_GetCode(st): return _status(st)
    return "OK", [_from_tf(outs[i]) for i in range(len(fetches))]
