// The order in which a TPU array layout stores elements in memory: the
// minor_to_major dimension order plus one level of tiling (`T(8,128)`), with
// each tiled dimension padded to a whole number of tiles. A bitcast that
// changes the element count (the padding differs between the two shapes but
// the memory size does not) reinterprets this memory, so the evaluator needs
// the order to give such bitcasts their real meaning. Internal to sim/eval.
#ifndef TPUSIM_SIM_EVAL_PHYSICAL_ORDER_H_
#define TPUSIM_SIM_EVAL_PHYSICAL_ORDER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/hlo/shape.h"

namespace tpusim::eval {

class PhysicalOrder {
 public:
  /// The order of an array shape's layout; nullopt when the shape has no
  /// layout or one this model does not cover (nested tiles, combined tile
  /// dimensions).
  static std::optional<PhysicalOrder> Of(const hlo::Shape& shape);

  /// Elements in memory, padding included.
  int64_t size() const { return size_; }
  /// The logical row-major index stored at memory offset `offset`; nullopt
  /// for padding.
  std::optional<int64_t> LogicalAt(int64_t offset) const;
  /// How many offsets from `offset` on (within one row of the minor tile) are
  /// all padding or hold consecutive logical indices; at least 1.
  int64_t RunLength(int64_t offset) const;

 private:
  /// Per physical position, major to minor (after leading size-1 dims a
  /// longer tile adds): the logical dimension (-1 for an added one), its
  /// row-major stride in the logical order, its size, its tile size (1 when
  /// untiled) and its number of tiles.
  std::vector<int64_t> logical_dim_, stride_, extent_, tile_, tiles_;
  int64_t tile_elements_ = 1;
  int64_t size_ = 1;
};

}  // namespace tpusim::eval

#endif  // TPUSIM_SIM_EVAL_PHYSICAL_ORDER_H_
