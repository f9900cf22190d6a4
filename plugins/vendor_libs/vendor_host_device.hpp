// KILN_VENDOR_HD marks the few rule functions shared by kernels and host code (and so testable
// on a machine without a GPU): `__host__ __device__` under nvcc, nothing under a host compiler.
// A macro because C++ has no other way to say it.
#pragma once
#if defined(__CUDACC__)
#define KILN_VENDOR_HD __host__ __device__
#else
#define KILN_VENDOR_HD
#endif
