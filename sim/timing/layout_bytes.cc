#include "sim/timing/layout_bytes.h"

#include <algorithm>
#include <span>

#include "sim/base/arith.h"
#include "sim/hlo/primitive_type.h"

namespace tpusim::timing {

std::vector<int64_t> MajorToMinor(const hlo::Shape& array) {
  std::vector<int64_t> order;
  const int64_t rank = array.rank();
  // A layout that is not a permutation of the dimensions (which the verifier
  // rejects) is ignored rather than trusted.
  const auto is_permutation = [&](std::span<const int64_t> m2m) {
    if (static_cast<int64_t>(m2m.size()) != rank) return false;
    std::vector<bool> seen(rank, false);
    for (int64_t d : m2m) {
      if (d < 0 || d >= rank || seen[d]) return false;
      seen[d] = true;
    }
    return true;
  };
  if (array.has_layout() && is_permutation(array.layout().minor_to_major())) {
    const std::span<const int64_t> m2m = array.layout().minor_to_major();
    order.assign(m2m.rbegin(), m2m.rend());
  } else {
    for (int64_t d = 0; d < rank; ++d) order.push_back(d);
  }
  return order;
}

namespace {

int64_t ArrayBytes(const hlo::Shape& array) {
  std::vector<int64_t> physical;
  for (int64_t d : MajorToMinor(array)) physical.push_back(array.dimensions(d));
  int64_t bits = hlo::PrimitiveTypeBitWidth(array.element_type());
  if (array.has_layout()) {
    const hlo::Layout& layout = array.layout();
    if (layout.element_size_in_bits > 0) bits = layout.element_size_in_bits;
    if (!layout.tiles.empty()) {
      const std::vector<int64_t>& tile = layout.tiles.front().dimensions;
      while (physical.size() < tile.size()) physical.insert(physical.begin(), 1);
      const size_t offset = physical.size() - tile.size();
      for (size_t i = 0; i < tile.size(); ++i) {
        if (tile[i] > 0) physical[offset + i] = RoundUp(physical[offset + i], tile[i]);
      }
    }
  }
  int64_t elements = 1;
  for (int64_t d : physical) elements = SatMul(elements, d);
  return CeilDiv(SatMul(elements, bits), 8);
}

}  // namespace

int64_t PhysicalBytes(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const hlo::Shape& element : shape.tuple_shapes())
      total = SatAdd(total, PhysicalBytes(element));
    return total;
  }
  if (shape.IsBuffer()) return PhysicalBytes(shape.tuple_shapes(0));
  if (!shape.IsArray()) return 0;
  return ArrayBytes(shape);
}

bool InVmem(const hlo::Shape& array) {
  return array.IsArray() && array.has_layout() && array.layout().memory_space == 1;
}

int64_t VregCount(const hlo::Shape& array, int64_t sublanes, int64_t lanes) {
  if (!array.IsArray()) return 0;
  const std::vector<int64_t> order = MajorToMinor(array);
  const size_t rank = order.size();
  if (rank == 0) return 1;
  if (rank == 1) return std::max<int64_t>(1, CeilDiv(array.dimensions(order[0]), sublanes * lanes));
  int64_t vregs = SatMul(CeilDiv(array.dimensions(order[rank - 1]), lanes),
                         CeilDiv(array.dimensions(order[rank - 2]), sublanes));
  for (size_t i = 0; i + 2 < rank; ++i) vregs = SatMul(vregs, array.dimensions(order[i]));
  return vregs;
}

int64_t LaneDimension(const hlo::Shape& array) {
  const std::vector<int64_t> order = MajorToMinor(array);
  return order.empty() ? -1 : order.back();
}

int64_t SublaneDimension(const hlo::Shape& array) {
  const std::vector<int64_t> order = MajorToMinor(array);
  return order.size() < 2 ? -1 : order[order.size() - 2];
}

}  // namespace tpusim::timing
