// Built without CUDA: there is no GPU load, and open() says so.
#include "gpu_load.h"

namespace wattlab::gpu_load {

struct FmaLoad::Impl {};

bool built_with_cuda() { return false; }

std::unique_ptr<FmaLoad> FmaLoad::open(const std::string&, const std::string&, std::string& error) {
  error = "this wattlab was built without CUDA (WATTLAB_HAVE_CUDA OFF): no built-in GPU load";
  return nullptr;
}
FmaLoad::FmaLoad(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FmaLoad::~FmaLoad() = default;
std::string FmaLoad::describe() const { return "none"; }
bool FmaLoad::prepare(std::string& error) { return error = "built without CUDA", false; }
bool FmaLoad::start(int64_t, std::string& error) { return error = "built without CUDA", false; }
bool FmaLoad::finish(std::string&, std::string& error) { return error = "built without CUDA", false; }

}  // namespace wattlab::gpu_load
