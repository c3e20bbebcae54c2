#include "sim/eval/physical_order.h"

#include <algorithm>
#include <cstddef>

namespace tpusim::eval {

std::optional<PhysicalOrder> PhysicalOrder::Of(const hlo::Shape& shape) {
  if (!shape.IsArray() || !shape.has_layout()) return std::nullopt;
  const hlo::Layout& layout = shape.layout();
  const int64_t rank = shape.rank();
  if (static_cast<int64_t>(layout.minor_to_major().size()) != rank || layout.tiles.size() > 1) {
    return std::nullopt;
  }
  PhysicalOrder order;
  const auto& dims = shape.dimensions();
  // Row-major strides of the logical (evaluator) order.
  std::vector<int64_t> logical_stride(static_cast<size_t>(rank), 1);
  for (int64_t d = rank - 2; d >= 0; --d) logical_stride[d] = logical_stride[d + 1] * dims[d + 1];
  std::vector<int64_t> major_to_minor;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = layout.minor_to_major().size(); i-- > 0;) {
    const int64_t d = layout.minor_to_major()[i];
    if (d < 0 || d >= rank || seen[d]) return std::nullopt;
    seen[d] = true;
    major_to_minor.push_back(d);
  }
  const std::vector<int64_t> tile =
      layout.tiles.empty() ? std::vector<int64_t>{} : layout.tiles[0].dimensions;
  // A tile longer than the rank tiles leading dimensions of size 1.
  const int64_t added = std::max<int64_t>(0, static_cast<int64_t>(tile.size()) - rank);
  const int64_t positions = rank + added;
  for (int64_t p = 0; p < positions; ++p) {
    const int64_t d = p < added ? -1 : major_to_minor[p - added];
    const int64_t extent = d < 0 ? 1 : dims[d];
    // Tile dimension k covers the k-th of the tile.size() minor positions.
    const int64_t k = p - (positions - static_cast<int64_t>(tile.size()));
    const int64_t t = k >= 0 ? tile[k] : 1;
    if (t <= 0) return std::nullopt;  // combined (`*`) or invalid tile dimensions
    order.logical_dim_.push_back(d);
    order.stride_.push_back(d < 0 ? 0 : logical_stride[d]);
    order.extent_.push_back(extent);
    order.tile_.push_back(t);
    order.tiles_.push_back((extent + t - 1) / t);
    order.tile_elements_ *= t;
    order.size_ *= order.tiles_.back() * t;
  }
  return order;
}

std::optional<int64_t> PhysicalOrder::LogicalAt(int64_t offset) const {
  int64_t tile_number = offset / tile_elements_, within = offset % tile_elements_;
  int64_t logical = 0;
  for (size_t p = logical_dim_.size(); p-- > 0;) {
    const int64_t i = (tile_number % tiles_[p]) * tile_[p] + within % tile_[p];
    tile_number /= tiles_[p];
    within /= tile_[p];
    if (i >= extent_[p]) return std::nullopt;
    logical += i * stride_[p];
  }
  return logical;
}

int64_t PhysicalOrder::RunLength(int64_t offset) const {
  if (logical_dim_.empty()) return 1;
  const size_t minor = logical_dim_.size() - 1;
  if (stride_[minor] != 1) return 1;
  const int64_t within = offset % tile_[minor];
  const int64_t i = (offset / tile_elements_ % tiles_[minor]) * tile_[minor] + within;
  // Past the extent the rest of the tile row is padding; before it, the row
  // runs on to the extent.
  return i >= extent_[minor] ? tile_[minor] - within
                             : std::min(tile_[minor] - within, extent_[minor] - i);
}

}  // namespace tpusim::eval
