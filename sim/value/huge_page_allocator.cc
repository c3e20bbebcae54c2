#include "sim/value/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdint>

namespace tpusim::value {

void AdviseHugePages(void* data, size_t bytes) {
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const uintptr_t start = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (start + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (start + bytes) & ~(kHugePage - 1);
  if (first >= end) return;  // no whole huge page inside
  // A hint: if the kernel refuses, the memory is only slower to fault in.
  madvise(reinterpret_cast<void*>(first), end - first, MADV_HUGEPAGE);
}

}  // namespace tpusim::value
