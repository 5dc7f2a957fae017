#!/usr/bin/env python3
"""N v1 while loops nested N deep (issue 15's "super-linear nested loops"), as a GraphDef text.

    python3 bench/nested_loops/gen.py N > /tmp/nN.pbtxt
    /usr/bin/time -f "%es %MKB" bazel-bin/tools/dflow run --graph=/tmp/nN.pbtxt --fetch=L0/exit

Each loop runs one trip with an int32 counter; the innermost body adds 1, so L0/exit is 1.
No dependencies beyond the standard library.
"""
import sys
N=int(sys.argv[1])
out=[]
def node(name, op, inputs=(), attrs=""):
    s="node { name: '%s' op: '%s'"%(name,op)
    for i in inputs: s+=" input: '%s'"%i
    out.append(s+attrs+" }")
i32=" attr { key: 'T' value { type: DT_INT32 } }"
def const(name, v, ctl=None):
    node(name,'Const',[ctl] if ctl else [], " attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} int_val: %d } } }"%v)
const('x0',0)
prev='x0'; ctl=None
# build nested loops: loop k carries value; body of loop k contains loop k+1; innermost adds 1; each loop runs 1 trip
for k in range(N):
    p='L%d'%k
    fr=" attr { key: 'frame_name' value { s: '%s' } }"%p
    const(p+'/zero',0,ctl)
    node(p+'/ei','Enter',[p+'/zero'],i32+fr); node(p+'/ex','Enter',[prev],i32+fr)
    node(p+'/mi','Merge',[p+'/ei',p+'/ni'],i32+" attr { key: 'N' value { i: 2 } }")
    node(p+'/mx','Merge',[p+'/ex',p+'/nx'],i32+" attr { key: 'N' value { i: 2 } }")
    const(p+'/lim',1,'^'+p+'/mi'); node(p+'/less','Less',[p+'/mi',p+'/lim'],i32)
    node(p+'/cond','LoopCond',[p+'/less'])
    node(p+'/si','Switch',[p+'/mi',p+'/cond'],i32); node(p+'/sx','Switch',[p+'/mx',p+'/cond'],i32)
    node(p+'/ii','Identity',[p+'/si:1'],i32); node(p+'/ix','Identity',[p+'/sx:1'],i32)
    const(p+'/one',1,'^'+p+'/ii'); node(p+'/add','Add',[p+'/ii',p+'/one'],i32)
    node(p+'/ni','NextIteration',[p+'/add'],i32)
    node(p+'/exit','Exit',[p+'/sx'],i32)
    prev=p+'/ix'; ctl='^'+p+'/ii'
# innermost body: value + 1
const('inner/one',1,ctl); node('inner/add','Add',[prev,'inner/one'],i32)
# close loops from innermost outward
nxt='inner/add'
for k in reversed(range(N)):
    p='L%d'%k
    node(p+'/nx','NextIteration',[nxt],i32)
    nxt=p+'/exit'
    if k>0:
        pass
# NextIteration of loop k must take exit of loop k+1: fix: for k<N-1, nx input is L(k+1)/exit
out2=[]
for l in out:
    out2.append(l)
text="\n".join(out2)
for k in range(N-1):
    text=text.replace("node { name: 'L%d/nx' op: 'NextIteration' input: 'L%d/exit'"%(k,k),"node { name: 'L%d/nx' op: 'NextIteration' input: 'L%d/exit'"%(k,k+1))
print(text)
