// DimensionVector: the int64 list of a shape's dimensions or a layout's
// minor_to_major, with room for six entries inside the object.
//
// Why: nearly every HLO instruction has an array shape with a layout, and with
// std::vector each of those two short lists was its own heap block (two of the
// ~9 blocks per parsed instruction, see docs/performance.md). Ranks above six
// are rare; they spill to the heap like a std::vector.
//
// It is a contiguous range of int64_t: it converts implicitly to
// std::span<const int64_t>, works with range-for, [], size(), ==, and the few
// std::vector members the code base uses.
#ifndef TPUSIM_SIM_HLO_DIMENSION_VECTOR_H_
#define TPUSIM_SIM_HLO_DIMENSION_VECTOR_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

namespace tpusim::hlo {

class DimensionVector {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;

  /// Entries held without a heap block.
  static constexpr size_t kInlineCapacity = 6;

  DimensionVector() = default;
  DimensionVector(std::initializer_list<int64_t> values) { assign(values.begin(), values.end()); }
  DimensionVector(const std::vector<int64_t>& values) { assign(values.data(), values.data() + values.size()); }
  explicit DimensionVector(std::span<const int64_t> values) {
    assign(values.data(), values.data() + values.size());
  }
  DimensionVector(const DimensionVector& other) { assign(other.begin(), other.end()); }
  DimensionVector(DimensionVector&& other) noexcept { TakeFrom(other); }
  DimensionVector& operator=(const DimensionVector& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  DimensionVector& operator=(DimensionVector&& other) noexcept {
    if (this != &other) {
      FreeHeap();
      TakeFrom(other);
    }
    return *this;
  }
  DimensionVector& operator=(std::initializer_list<int64_t> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  ~DimensionVector() { FreeHeap(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }
  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  int64_t& operator[](size_t i) { return data_[i]; }
  const int64_t& operator[](size_t i) const { return data_[i]; }
  int64_t& front() { return data_[0]; }
  const int64_t& front() const { return data_[0]; }
  int64_t& back() { return data_[size_ - 1]; }
  const int64_t& back() const { return data_[size_ - 1]; }

  void reserve(size_t n) {
    if (n > capacity_) Grow(n);
  }
  void clear() { size_ = 0; }
  void push_back(int64_t v) {
    if (size_ == capacity_) Grow(capacity_ * 2);
    data_[size_++] = v;
  }
  void pop_back() { --size_; }
  /// New entries are `value`.
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }
  void assign(const int64_t* first, const int64_t* last) {
    const size_t n = static_cast<size_t>(last - first);
    if (n > capacity_) {
      clear();
      Grow(n);
    }
    std::copy(first, last, data_);
    size_ = n;
  }

  friend bool operator==(const DimensionVector& a, const DimensionVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool OnHeap() const { return data_ != inline_; }
  void FreeHeap() {
    if (OnHeap()) delete[] data_;
  }
  /// Capacity at least `n`, keeping the entries.
  void Grow(size_t n) {
    int64_t* bigger = new int64_t[n];
    std::copy(data_, data_ + size_, bigger);
    FreeHeap();
    data_ = bigger;
    capacity_ = n;
  }
  /// Moves `other`'s entries here (stealing its heap block) and empties it;
  /// this object's own heap block must already be freed.
  void TakeFrom(DimensionVector& other) {
    if (other.OnHeap()) {
      data_ = other.data_;
      capacity_ = other.capacity_;
      other.data_ = other.inline_;
      other.capacity_ = kInlineCapacity;
    } else {
      data_ = inline_;
      capacity_ = kInlineCapacity;
      std::copy(other.data_, other.data_ + other.size_, inline_);
    }
    size_ = other.size_;
    other.size_ = 0;
  }

  int64_t* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = kInlineCapacity;
  int64_t inline_[kInlineCapacity] = {};
};

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_DIMENSION_VECTOR_H_
