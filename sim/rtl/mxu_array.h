// The Verilated weight-stationary MXU array (models/rtl/mxu_array.sv) driven
// cycle by cycle from C++: a sequencer that loads weight tiles and streams
// rows at the earliest cycles the dataflow allows, and counts the cycles.
#ifndef TPUSIM_SIM_RTL_MXU_ARRAY_H_
#define TPUSIM_SIM_RTL_MXU_ARRAY_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace tpusim::rtl {

/// One weight tile and the rows streamed through it, as the array's raw bits
/// (bf16 values, or int8 values in the low byte).
struct ArrayTile {
  std::vector<uint16_t> weights;      ///< rows x cols, [k][column]
  std::vector<uint16_t> activations;  ///< m x rows, [row][k]; m >= 1
  std::vector<uint32_t> seeds;        ///< m x cols: the sums each column starts from
  bool skip_zero = false;             ///< skip products with a zero factor (bf16)
};

/// What a run of tiles produced.
struct ArrayRun {
  /// Per tile, m x cols sums (f32 or s32 bits), in the order rows entered.
  std::vector<std::vector<uint32_t>> sums;
  /// Cycles from the clock edge that took the first tile's first row to the
  /// edge that put out the last tile's last result, both included.
  int64_t cycles = 0;
};

/// A Verilated array of a fixed size.
class MxuArray {
 public:
  virtual ~MxuArray() = default;
  virtual int rows() const = 0;
  virtual int cols() const = 0;
  /// Runs `tiles` back to back from a fresh array: the first tile's weights
  /// load (8 rows per cycle) before its rows stream; each next tile's weights
  /// load as early as the dataflow allows (double-buffered: while the previous
  /// tile streams; otherwise once its last row has passed the top PE row), and
  /// its rows stream once the previous tile's rows have entered and its
  /// weights have landed. int8: s8 x s8 summed in s32 instead of bf16 in f32.
  virtual ArrayRun Run(std::span<const ArrayTile> tiles, bool int8, bool double_buffer) = 0;
};

/// The array sizes that are Verilated, ascending (the build makes one model per
/// size: TPUSIM_RTL_ARRAY_SIZES, 8, 16 and 128 by default).
std::vector<int> MxuArraySizes();
/// A fresh `size` x `size` array; `size` must be one of MxuArraySizes().
std::unique_ptr<MxuArray> MakeMxuArray(int size);

}  // namespace tpusim::rtl

#endif  // TPUSIM_SIM_RTL_MXU_ARRAY_H_
