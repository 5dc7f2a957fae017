# How far float32 answers are from float64 ones on a zoo model: rewrites the frozen
# graph to float64 (every float attr and Const), runs it in TF, and prints the distance of
# the TF float32 golden and of each dflow `run --output=json` result given.
# Usage (in tests/data/zoo/large or tests/data/zoo): python float64_check.py NAME [dflow.json...]
import numpy as np, sys, tensorflow as tf
from tensorflow.core.framework import graph_pb2, types_pb2
from tensorflow.python.framework import tensor_util
name=sys.argv[1]
g=graph_pb2.GraphDef(); g.ParseFromString(open('graphs/%s.pb'%name,'rb').read())
for n in g.node:
  for k,v in n.attr.items():
    if v.type==types_pb2.DT_FLOAT: v.type=types_pb2.DT_DOUBLE
    if v.HasField('list'):
      for i,t in enumerate(v.list.type):
        if t==types_pb2.DT_FLOAT: v.list.type[i]=types_pb2.DT_DOUBLE
  if n.op=='Const' and n.attr['value'].tensor.dtype in (types_pb2.DT_FLOAT, types_pb2.DT_DOUBLE):
    a=tensor_util.MakeNdarray(n.attr['value'].tensor) if n.attr['value'].tensor.dtype==types_pb2.DT_FLOAT else None
    if a is not None: n.attr['value'].tensor.CopyFrom(tensor_util.make_tensor_proto(a.astype(np.float64)))
x=np.load('arrays/%s.x_0.npy'%name)
w=np.load('arrays/%s.Identity_0.npy'%name)
with tf.Graph().as_default() as gr:
  tf.import_graph_def(g,name='')
  with tf.compat.v1.Session() as s:
    y=s.run('Identity:0',{'x:0':x.astype(np.float64)})
print('TF float32 golden vs float64:', np.abs(y-w).max())
import json; 
for f in sys.argv[2:]:
  v=np.array(json.load(open(f))['outputs'][0]['values']); print(f, 'dflow vs float64', np.abs(v-y.ravel()).max())
