// Built without CUDA: there is no GPU load, and open() says so.
#include "lab/gpu_load.h"

namespace wattlab::lab {
namespace {

Error no_cuda() {
  return Error{ErrorKind::unavailable, "this wattlab was built without CUDA (WATTLAB_HAVE_CUDA OFF): no built-in GPU load", ""};
}

}  // namespace

struct FmaLoad::Impl {};

Result<std::unique_ptr<FmaLoad>> FmaLoad::open(const std::string&, const std::string&) { return no_cuda(); }
FmaLoad::FmaLoad(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FmaLoad::~FmaLoad() = default;
std::string FmaLoad::describe() const { return "none"; }
Status FmaLoad::prepare() { return no_cuda(); }
Status FmaLoad::start(int64_t) { return no_cuda(); }
Status FmaLoad::finish(std::string&) { return no_cuda(); }

}  // namespace wattlab::lab
