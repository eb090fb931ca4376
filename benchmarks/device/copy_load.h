// An HBM load for the memory domain: device-to-device copies of `bytes` (one half of a buffer into
// the other), one copy per unit of a UnitLoad.
#pragma once
#include <cstddef>
#include <string>

#include "unit_load.h"

namespace wattlab::device {

class CopyLoad final : public UnitLoad {
 public:
  explicit CopyLoad(std::size_t bytes);
  ~CopyLoad() override;
  std::size_t bytes() const { return bytes_; }
  std::string describe() const override;

 protected:
  void enqueue_unit() override;

 private:
  std::size_t bytes_;
  void* buf_ = nullptr;
};

}  // namespace wattlab::device
