// The allocator of Literal's storage: std::allocator's memory, with large
// blocks backed by transparent huge pages where the kernel offers them.
//
// Why: a run allocates and frees an array at nearly every instruction, and
// glibc maps each large block afresh and unmaps it when it is freed. Every
// 4 KiB page of a new array is then a page fault, in which the kernel zeroes
// it. On the corpus's largest modules that was half the run time
// (docs/performance.md); a 2 MiB page takes one fault instead of 512. Values
// are unaffected: only where the bytes live changes.
#ifndef TPUSIM_SIM_VALUE_HUGE_PAGE_ALLOCATOR_H_
#define TPUSIM_SIM_VALUE_HUGE_PAGE_ALLOCATOR_H_

#include <cstddef>
#include <memory>

namespace tpusim::value {

/// Asks the kernel to back the whole 2 MiB pages inside [data, data + bytes)
/// with huge pages (madvise MADV_HUGEPAGE). A hint: where the kernel has no
/// transparent huge pages, or refuses, nothing changes.
void AdviseHugePages(void* data, size_t bytes);

template <typename T>
struct HugePageAllocator {
  using value_type = T;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: allocators convert implicitly

  T* allocate(size_t count) {
    T* data = std::allocator<T>().allocate(count);
    AdviseHugePages(data, count * sizeof(T));
    return data;
  }
  void deallocate(T* data, size_t count) { std::allocator<T>().deallocate(data, count); }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

}  // namespace tpusim::value

#endif  // TPUSIM_SIM_VALUE_HUGE_PAGE_ALLOCATOR_H_
