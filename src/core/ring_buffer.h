// A bounded ring: pushing into a full ring drops the oldest element and counts it.
// Not synchronized; owners guard it (the meter's timeline does, with one lock).
#pragma once
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace wattlab {

template <class T>
class RingBuffer {
 public:
  explicit RingBuffer(std::size_t capacity) : buf_(capacity) {
    if (capacity == 0) throw std::invalid_argument("RingBuffer capacity must be > 0");
  }
  std::size_t capacity() const { return buf_.size(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == buf_.size(); }
  std::size_t dropped() const { return dropped_; }  // elements overwritten since construction

  void push(const T& v) {
    buf_[(head_ + size_) % buf_.size()] = v;
    if (full()) {
      head_ = (head_ + 1) % buf_.size();
      ++dropped_;
    } else {
      ++size_;
    }
  }
  // i = 0 is the oldest element.
  const T& operator[](std::size_t i) const { return buf_[(head_ + i) % buf_.size()]; }
  T& operator[](std::size_t i) { return buf_[(head_ + i) % buf_.size()]; }
  const T& front() const { return (*this)[0]; }
  const T& back() const { return (*this)[size_ - 1]; }
  void pop_front() {
    if (size_ == 0) throw std::out_of_range("RingBuffer::pop_front on empty ring");
    head_ = (head_ + 1) % buf_.size();
    --size_;
  }
  void clear() { head_ = size_ = 0; }

 private:
  std::vector<T> buf_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
  std::size_t dropped_ = 0;
};

}  // namespace wattlab
