#include "sim/timing/layout_bytes.h"

#include <algorithm>
#include <optional>

#include "sim/base/arith.h"

namespace tpusim::timing {

int64_t PhysicalBytes(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const hlo::Shape& element : shape.tuple_shapes())
      total = SatAdd(total, PhysicalBytes(element));
    return total;
  }
  if (shape.IsBuffer()) return PhysicalBytes(shape.tuple_shapes(0));
  if (!shape.IsArray()) return 0;
  const std::optional<int64_t> bits = hlo::PhysicalBits(shape);
  return bits ? CeilDiv(*bits, 8) : kInt64Max;
}

bool InVmem(const hlo::Shape& array) {
  return array.IsArray() && array.has_layout() && array.layout().memory_space == 1;
}

bool InHostMemory(const hlo::Shape& array) {
  return array.IsArray() && array.has_layout() && array.layout().memory_space == 5;
}

int64_t VregCount(const hlo::Shape& array, int64_t sublanes, int64_t lanes) {
  if (!array.IsArray()) return 0;
  const std::vector<int64_t> order = hlo::MajorToMinor(array);
  const size_t rank = order.size();
  if (rank == 0) return 1;
  if (rank == 1) return std::max<int64_t>(1, CeilDiv(array.dimensions(order[0]), sublanes * lanes));
  int64_t vregs = SatMul(CeilDiv(array.dimensions(order[rank - 1]), lanes),
                         CeilDiv(array.dimensions(order[rank - 2]), sublanes));
  for (size_t i = 0; i + 2 < rank; ++i) vregs = SatMul(vregs, array.dimensions(order[i]));
  return vregs;
}

int64_t LaneDimension(const hlo::Shape& array) {
  const std::vector<int64_t> order = hlo::MajorToMinor(array);
  return order.empty() ? -1 : order.back();
}

int64_t SublaneDimension(const hlo::Shape& array) {
  const std::vector<int64_t> order = hlo::MajorToMinor(array);
  return order.size() < 2 ? -1 : order[order.size() - 2];
}

}  // namespace tpusim::timing
