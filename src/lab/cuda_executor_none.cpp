// A build without CUDA has no GPU executor: say so plainly (the SIMULATED one is --device sim).
#include "lab/cuda_executor.h"

namespace wattlab::lab {

bool cuda_executor_available() { return false; }

Result<std::unique_ptr<GemmExecutor>> make_cuda_executor(const CudaExecutorOptions&) {
  return Error{ErrorKind::unavailable, "this wattlab was built without CUDA, so it cannot run GEMMs on a GPU",
               "rebuild with the CUDA toolkit (cmake --preset cuda), or use --device sim for the SIMULATED executor"};
}

}  // namespace wattlab::lab
