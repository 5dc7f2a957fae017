
.
aPlaceholder*
dtype0*
shape:
.
bPlaceholder*
dtype0*
shape:

maxMaximumab*
T0

minMinimumab*
T0"ª