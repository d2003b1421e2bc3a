// First of two translation units linked into one host .so (two bundles in .hip_fatbin).
#include "hip_defs.h"
__global__ void tu_a_fill(float* p, float v) { p[BID_X() * 64 + TID_X()] = v; }
