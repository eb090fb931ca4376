// A tensor-core kernel whose work is fixed by two numbers: `blocks` blocks of 256 threads, one per
// SM (each block reserves enough shared memory to have its SM alone), each warp doing `iters`
// rounds of four BF16 16x16x16 WMMA products on random register-resident operands. Its power
// follows the number of SMs busy, which is how meter_validate picks a level below the power cap.
#pragma once
#include <cstdint>

namespace wattlab::device {

inline constexpr int kMmaThreads = 256;
// FLOP of one unit: blocks x 8 warps x iters x 4 products x 2*16^3.
double mma_unit_flop(int blocks, int iters);
// Sets the kernel's shared-memory attribute once; throws std::runtime_error on failure.
void mma_kernel_setup();
// Enqueues one unit on `stream` (a cudaStream_t); `out` holds blocks * kMmaThreads floats.
void mma_kernel_launch(void* stream, int blocks, int iters, uint32_t seed, float* out);

}  // namespace wattlab::device
