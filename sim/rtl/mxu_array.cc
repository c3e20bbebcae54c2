// The sequencer: the cycle at which each tile's weight groups and streamed
// rows enter follows from when each PE reads and writes its weight registers
// (docs/rtl.md derives it). An input row entering at edge t reaches PE (k, c)
// at edge t + 1 + k + c; so does a weight group (8 rows, one vreg) entering at
// edge t. Loading group j at L0 + j therefore writes PE (k, c), k in group j,
// at L0 + j + 1 + k + c, which must not precede the edge at which the previous
// occupant of that register is last read, and must precede the edge at which
// the tile's first row reads it.
#include "sim/rtl/mxu_array.h"

#include <algorithm>
#include <stdexcept>

#include "verilated.h"
#ifdef TPUSIM_RTL_HAS_8
#include "Vmxu_array_8.h"
#endif
#ifdef TPUSIM_RTL_HAS_16
#include "Vmxu_array_16.h"
#endif
#ifdef TPUSIM_RTL_HAS_128
#include "Vmxu_array_128.h"
#endif

namespace tpusim::rtl {
namespace {

/// Sets field `index` of `width` (16 or 32) bits of a packed Verilator port.
template <typename Port>
void SetField(Port& port, int index, int width, uint32_t value) {
  const int bit = index * width;
  uint32_t& word = port[bit / 32];
  if (width == 32) {
    word = value;
  } else {
    const int shift = bit % 32;
    word = (word & ~(0xFFFFu << shift)) | ((value & 0xFFFFu) << shift);
  }
}

/// Weight rows per load cycle: one vreg of 8 sublanes (mxu_array.sv's WR).
constexpr int kWeightRowsPerCycle = 8;

template <typename Model, int kSize>
class VerilatedMxuArray final : public MxuArray {
  static_assert(kSize % kWeightRowsPerCycle == 0, "the array loads whole groups of weight rows");
  static constexpr int kGroups = kSize / kWeightRowsPerCycle;

 public:
  VerilatedMxuArray() : model_(&context_) {}

  int rows() const override { return kSize; }
  int cols() const override { return kSize; }

  ArrayRun Run(std::span<const ArrayTile> tiles, bool int8, bool double_buffer) override {
    for (const ArrayTile& tile : tiles) {
      const size_t m = tile.activations.size() / kSize;
      if (m == 0 || tile.weights.size() != size_t{kSize} * kSize ||
          tile.activations.size() != m * kSize || tile.seeds.size() != m * kSize) {
        throw std::invalid_argument("MxuArray::Run: tile sizes do not match the array");
      }
    }
    ArrayRun run;
    if (tiles.empty()) return run;
    // Per tile: the edge its first weight group enters (load) and its first
    // streamed row enters (start).
    std::vector<int64_t> load(tiles.size()), start(tiles.size());
    load[0] = 0;
    start[0] = kGroups;
    for (size_t i = 1; i < tiles.size(); ++i) {
      const int64_t m = static_cast<int64_t>(tiles[i - 1].activations.size() / kSize);
      // Double-buffered: PE (k, c)'s second register is free once the
      // previous tile's first row has switched it over (edge start + 1 + k + c;
      // a write at that very edge is read after). Single: the active register
      // is free after the previous tile's last row has read it.
      load[i] = double_buffer ? start[i - 1] : start[i - 1] + m - 1;
      // Group j lands at load + j + 1 + k + c; the first row reads it at
      // start + 1 + k + c, which must be later for every j < kGroups.
      start[i] = std::max(start[i - 1] + m, load[i] + kGroups);
    }
    Reset(int8, double_buffer);
    run.sums.resize(tiles.size());
    size_t out_tile = 0, out_row = 0;
    int64_t last_output = 0;
    const int64_t end_input = start.back() + static_cast<int64_t>(tiles.back().activations.size() / kSize);
    for (int64_t t = 0; out_tile < tiles.size(); ++t) {
      model_.in_valid = 0;
      model_.in_commit = 0;
      model_.wt_valid = 0;
      if (t < end_input) {
        for (size_t i = 0; i < tiles.size(); ++i) {
          const ArrayTile& tile = tiles[i];
          const int64_t m = static_cast<int64_t>(tile.activations.size() / kSize);
          if (t >= load[i] && t < load[i] + kGroups) {
            const int group = static_cast<int>(t - load[i]);
            model_.wt_valid = 1;
            model_.wt_row = static_cast<uint32_t>(group);
            for (int r = 0; r < kWeightRowsPerCycle; ++r) {
              const size_t k = static_cast<size_t>(group * kWeightRowsPerCycle + r);
              for (int c = 0; c < kSize; ++c) SetField(model_.wt_data, r * kSize + c, 16, tile.weights[k * kSize + c]);
            }
          }
          if (t >= start[i] && t < start[i] + m) {
            const size_t row = static_cast<size_t>(t - start[i]);
            model_.in_valid = 1;
            model_.in_commit = row == 0 ? 1 : 0;
            model_.in_skip = tile.skip_zero ? 1 : 0;
            for (int k = 0; k < kSize; ++k) SetField(model_.in_act, k, 16, tile.activations[row * kSize + k]);
            for (int c = 0; c < kSize; ++c) SetField(model_.in_seed, c, 32, tile.seeds[row * kSize + c]);
          }
        }
      }
      Tick();
      if (model_.out_valid) {
        std::vector<uint32_t>& sums = run.sums[out_tile];
        for (int c = 0; c < kSize; ++c) sums.push_back(model_.out_sum[c]);
        last_output = t;
        if (++out_row == tiles[out_tile].activations.size() / kSize) {
          ++out_tile;
          out_row = 0;
        }
      }
      if (t > end_input + 4 * kSize) throw std::logic_error("MxuArray::Run: the array stopped producing rows");
    }
    run.cycles = last_output - start[0] + 1;
    return run;
  }

 private:
  void Tick() {
    model_.clk = 1;
    model_.eval();
    model_.clk = 0;
    model_.eval();
  }

  /// Sets the modes and empties the pipeline of a previous run: enough idle
  /// edges for every valid bit to clear. Weights need no clearing: every tile
  /// loads all of its own before its first row reads them.
  void Reset(bool int8, bool double_buffer) {
    model_.int8_mode = int8 ? 1 : 0;
    model_.in_valid = 0;
    model_.in_commit = 0;
    model_.wt_valid = 0;
    model_.double_buffer = double_buffer ? 1 : 0;
    for (int i = 0; i < 3 * kSize + 4; ++i) Tick();
  }

  VerilatedContext context_;
  Model model_;
};

}  // namespace

std::vector<int> MxuArraySizes() { return {TPUSIM_RTL_SIZES}; }

std::unique_ptr<MxuArray> MakeMxuArray(int size) {
#ifdef TPUSIM_RTL_HAS_8
  if (size == 8) return std::make_unique<VerilatedMxuArray<Vmxu_array_8, 8>>();
#endif
#ifdef TPUSIM_RTL_HAS_16
  if (size == 16) return std::make_unique<VerilatedMxuArray<Vmxu_array_16, 16>>();
#endif
#ifdef TPUSIM_RTL_HAS_128
  if (size == 128) return std::make_unique<VerilatedMxuArray<Vmxu_array_128, 128>>();
#endif
  throw std::invalid_argument("MakeMxuArray: no Verilated array of this size");
}

}  // namespace tpusim::rtl
