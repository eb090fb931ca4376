// One macro so the element-wise code compiles the same for the host and for CUDA devices.
#pragma once

#if defined(__CUDACC__)
#define WATTLAB_HD __host__ __device__
#else
#define WATTLAB_HD
#endif
