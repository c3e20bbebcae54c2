// The MXU matrix product: operands split once into bf16 piece planes packed
// into panels, then a register-tiled kernel vectorised across result columns.
//
// Why the fast kernel gives exactly the documented scalar loop's bits:
// - Every result element still gets its own sequence of f32 operations in the
//   documented order (tiles of k, passes, increasing k): a vector lane is one
//   result element, and the kernel only chooses which elements run side by
//   side. Blocking over m and n changes which elements are computed when,
//   never the operations on one element.
// - Each product is a separate f32 multiply and each sum a separate f32 add,
//   both IEEE round-to-nearest-even (-ffp-contract=off everywhere; the avx2
//   target below does not enable FMA either). SSE2 and AVX2 lanes compute
//   exactly these IEEE operations, so the baseline and the AVX2 build (and a
//   wider one, should one be added) give identical bits; only the number of
//   lanes per instruction differs.
// - The scalar loop seeds a tile sum with its first product instead of adding
//   it to 0 (which would turn a -0 product into +0). The kernel starts every
//   sum at -0 instead: -0 + p == p bit for bit for every p, so the two agree
//   without a per-lane "seeded" flag. Likewise a skipped product (a zero piece
//   in a pass other than (0, 0)) becomes an added -0, which leaves any sum
//   unchanged, NaN included. Most tiles need no skipping at all and run
//   without masks; TileBody says when that is exact.
// - NaN results are canonicalised to 0x7FC00000. When both operands of an
//   add or multiply are NaN, x86 returns the first operand's NaN, and a
//   compiler may swap the operands of these commutative operations; so the
//   sign and payload of a NaN result would depend on the compiler. Every
//   other value is independent of operand order.
#include "sim/eval/mxu_matmul.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <complex>
#include <memory>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/eval/mxu_tile.h"
#include "sim/value/check.h"
#include "sim/value/element_type.h"
#include "sim/value/float_formats.h"

namespace tpusim::eval {
namespace {

/// Register tile: kMr lhs rows by kNr result columns of f32 sums, 8 AVX2
/// vectors, which leaves room in 16 vector registers for the rhs row, the
/// broadcast lhs value and the product (the masked path, which also needs
/// the zero masks, spills a few sums; it is rarely taken). A 6 x 16 tile
/// measured slower (docs/performance.md's benchmark, 512 and 1024).
constexpr int kMr = 4;
constexpr int kNr = 16;
constexpr int kLanes = 8;
constexpr int kNv = kNr / kLanes;
/// lhs panels per cache block: kMcPanels * kMr rows by one k tile of a piece
/// is 48 KiB, kept in L2 while every rhs panel (8 KiB a piece, in L1) passes.
constexpr int64_t kMcPanels = 24;

/// Eight f32 lanes. GCC vector extensions, so one source serves every target:
/// under the baseline target GCC lowers each operation to two SSE2 ones.
using Vec = float __attribute__((vector_size(32)));
/// Per-lane masks (all ones or zero), as vector comparisons produce.
using Mask = int32_t __attribute__((vector_size(32)));
/// Eight floats in memory at any float-aligned address, read and written
/// through this type so that the sums stay in registers (a memcpy of a sum
/// would make GCC keep it in memory). Written out at each use: a function
/// taking or returning a Vec would have a different ABI per target. The
/// alignment is lowered on the alias of Vec: clang 14 gives a type that
/// declares vector_size and aligned together the vector's own 32 bytes. A
/// pointer to it is never `auto`: GCC deduces the plain Vec, 32-byte aligned.
using UnalignedVec __attribute__((aligned(4), may_alias)) = Vec;
static_assert(alignof(UnalignedVec) == alignof(float));

/// Packed operands up to this many floats (16 MiB) reuse one buffer per
/// operand and thread from call to call. A fresh buffer faults in page by
/// page, which (with the zero fill the packing once did) took longer than
/// the product itself at n = 512 (docs/performance.md); a larger operand's
/// product outweighs that, and keeping its buffer would hold memory the rest
/// of the run may need.
constexpr int64_t kKeptPanelFloats = int64_t{4} << 20;
/// At most this many floats (64 MiB) kept over all threads at once: an SPMD
/// run has a thread per device, up to thousands, and none may hold memory
/// that the run's memory bound does not count.
constexpr int64_t kKeptPanelFloatsInAll = int64_t{16} << 20;

/// Floats in kept buffers, over every thread.
std::atomic<int64_t>& KeptPanelFloats() {
  static std::atomic<int64_t> floats{0};
  return floats;
}

/// One thread's kept buffer for one operand; its floats leave the count
/// when the thread ends.
struct KeptPanels {
  std::unique_ptr<float[]> data;
  int64_t size = 0;
  ~KeptPanels() { KeptPanelFloats().fetch_sub(size); }
};

/// `count` floats of scratch, not initialised: the calling thread's kept
/// buffer for `operand` (0: lhs, 1: rhs), or a fresh one held by `fresh`
/// when the operand is larger than kKeptPanelFloats or the buffers kept
/// over all threads would pass kKeptPanelFloatsInAll.
float* PanelScratch(int operand, int64_t count, std::unique_ptr<float[]>& fresh) {
  thread_local KeptPanels kept[2];
  KeptPanels& buffer = kept[operand];
  if (buffer.size >= count) return buffer.data.get();
  const int64_t growth = count - buffer.size;
  if (count <= kKeptPanelFloats &&
      KeptPanelFloats().fetch_add(growth) + growth <= kKeptPanelFloatsInAll) {
    buffer.data.reset(new float[static_cast<size_t>(count)]);
    buffer.size = count;
    return buffer.data.get();
  }
  if (count <= kKeptPanelFloats) KeptPanelFloats().fetch_sub(growth);
  fresh.reset(new float[static_cast<size_t>(count)]);
  return fresh.get();
}

/// An operand split into bf16 pieces and packed for the kernel: for each
/// piece, batch and panel of `width` consecutive rows, a [k][width] block, so
/// the kernel reads both operands sequentially. Rows past the end are zeros.
struct PackedOperand {
  int width = 0;
  int64_t batches = 0;
  int64_t panels = 0;  ///< per batch
  int64_t k = 0;
  int64_t piece_stride = 0;  ///< floats from one piece to the next
  float* data = nullptr;     ///< every piece; in PanelScratch's memory
  std::unique_ptr<float[]> fresh;
  int64_t k_tiles = 0;  ///< ceil(k / kMxuTile)
  /// For each batch, panel and k tile: whether the block holds an inf or a
  /// NaN (only piece 0 can). See TileBody for what that decides.
  std::vector<uint8_t> has_non_finite;

  /// Piece 0 of a panel, at k = 0.
  const float* Panel(int64_t batch, int64_t panel) const {
    return data + (batch * panels + panel) * k * width;
  }
  bool HasNonFinite(int64_t batch, int64_t panel, int64_t k_tile) const {
    return has_non_finite[static_cast<size_t>((batch * panels + panel) * k_tiles + k_tile)] != 0;
  }
};

/// Copies the operand's values into piece 0's panels, padding rows as zeros.
template <typename T>
void GatherTyped(std::span<const T> values, const MatrixView& view, PackedOperand& packed) {
  const int64_t rows = static_cast<int64_t>(view.row_offsets.size());
  float* out = packed.data;
  for (int64_t b = 0; b < packed.batches; ++b) {
    for (int64_t panel = 0; panel < packed.panels; ++panel) {
      const int64_t* row_offsets = view.row_offsets.data() + panel * packed.width;
      const int valid = static_cast<int>(std::min<int64_t>(packed.width, rows - panel * packed.width));
      for (int64_t k = 0; k < packed.k; ++k, out += packed.width) {
        const T* src = values.data() + view.batch_offsets[b] + view.k_offsets[k];
        for (int r = 0; r < valid; ++r) {
          if constexpr (std::is_same_v<T, float>) {
            out[r] = src[row_offsets[r]];
          } else {
            out[r] = src[row_offsets[r]].ToFloat();  // every narrow float is exact in f32
          }
        }
        std::fill(out + valid, out + packed.width, 0.0f);
      }
    }
  }
}

/// Replaces each value of piece 0 by its kPieces bf16 pieces, piece p
/// `stride` floats after piece 0.
template <int kPieces>
void SplitIntoPieces(float* data, int64_t stride) {
  for (int64_t i = 0; i < stride; ++i) {
    float pieces[kPieces];
    SplitIntoBf16Pieces(data[i], kPieces, pieces);
    for (int p = 0; p < kPieces; ++p) data[i + p * stride] = pieces[p];
  }
}

PackedOperand Pack(const MatrixView& view, int operand, int width, int pieces) {
  PackedOperand packed;
  packed.width = width;
  packed.batches = static_cast<int64_t>(view.batch_offsets.size());
  packed.panels = (static_cast<int64_t>(view.row_offsets.size()) + width - 1) / width;
  packed.k = static_cast<int64_t>(view.k_offsets.size());
  packed.piece_stride = packed.batches * packed.panels * packed.k * width;
  packed.data = PanelScratch(operand, packed.piece_stride * pieces, packed.fresh);
  value::VisitArrayType(view.values->element_type(), [&](auto tag) {
    using T = value::NativeType<decltype(tag)::value>;
    // The narrow floats are the class types other than the complex ones.
    constexpr bool kFloat = std::is_same_v<T, float> ||
                            (std::is_class_v<T> && !std::is_same_v<T, std::complex<float>> &&
                             !std::is_same_v<T, std::complex<double>>);
    if constexpr (kFloat) {
      GatherTyped<T>(view.values->template data<T>(), view, packed);
    } else {
      TPUSIM_VALUE_CHECK(false, "MxuMatMul operands must be f32 or narrower floats");
    }
  });
  if (pieces == 1) SplitIntoPieces<1>(packed.data, packed.piece_stride);
  if (pieces == 2) SplitIntoPieces<2>(packed.data, packed.piece_stride);
  if (pieces == 3) SplitIntoPieces<3>(packed.data, packed.piece_stride);
  packed.k_tiles = (packed.k + kMxuTile - 1) / kMxuTile;
  packed.has_non_finite.resize(static_cast<size_t>(packed.batches * packed.panels * packed.k_tiles));
  const float* panel = packed.data;  // piece 0
  uint8_t* flag = packed.has_non_finite.data();
  for (int64_t i = 0; i < packed.batches * packed.panels; ++i, panel += packed.k * width) {
    for (int64_t k0 = 0; k0 < packed.k; k0 += kMxuTile, ++flag) {
      const int64_t end = std::min(packed.k, k0 + kMxuTile) * width;
      *flag = std::any_of(panel + k0 * width, panel + end, [](float x) { return !std::isfinite(x); });
    }
  }
  return packed;
}

/// One call of the kernel: a kMr x kNr block of the result over one k tile.
struct TileJob {
  const float* lhs;  ///< piece 0 of the lhs panel at the tile's first k
  const float* rhs;  ///< piece 0 of the rhs panel at the tile's first k
  int64_t lhs_piece_stride;
  int64_t rhs_piece_stride;
  int64_t k_len;  ///< 1..kMxuTile
  const MxuPass* passes;
  /// Whether the lhs or rhs block holds an inf or NaN.
  bool non_finite;
  /// Whether a pass other than (0, 0) is among the passes.
  bool has_lower_pass;
  int pass_count;
  float* out;  ///< the result at the block's first row and column
  int64_t out_stride;
  int rows;  ///< rows of the block inside the result, 1..kMr
  int cols;  ///< columns of the block inside the result, 1..kNr
  bool first_tile;  ///< the result is the tile sum rather than result + tile sum
};

/// Sets `sum` to the tile sums of the job's passes. kSkip: lower passes skip
/// products with a zero piece (by adding -0 instead), as documented; without
/// it they add every product (see TileBody for when that is exact).
template <bool kSkip>
[[gnu::always_inline]] inline void Accumulate(const TileJob& job, Vec (&sum)[kMr][kNv]) {
  const Vec zero = {};
  const Vec neg_zero = {-0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f};
#pragma GCC unroll 4
  for (auto& row : sum) {
#pragma GCC unroll 2
    for (Vec& s : row) s = neg_zero;
  }
  for (int i = 0; i < job.pass_count; ++i) {
    const MxuPass pass = job.passes[i];
    const float* a = job.lhs + pass.lhs * job.lhs_piece_stride;
    const float* b = job.rhs + pass.rhs * job.rhs_piece_stride;
    if (!kSkip || (pass.lhs == 0 && pass.rhs == 0)) {
      for (int64_t k = 0; k < job.k_len; ++k, a += kMr, b += kNr) {
        Vec y[kNv];
#pragma GCC unroll 2
        for (int v = 0; v < kNv; ++v) y[v] = *reinterpret_cast<const UnalignedVec*>(b + v * kLanes);
#pragma GCC unroll 4
        for (int r = 0; r < kMr; ++r) {
          const float s = a[r];
          const Vec x = {s, s, s, s, s, s, s, s};
#pragma GCC unroll 2
          for (int v = 0; v < kNv; ++v) sum[r][v] = sum[r][v] + x * y[v];
        }
      }
      continue;
    }
    for (int64_t k = 0; k < job.k_len; ++k, a += kMr, b += kNr) {
      Vec y[kNv];
#pragma GCC unroll 2
      for (int v = 0; v < kNv; ++v) y[v] = *reinterpret_cast<const UnalignedVec*>(b + v * kLanes);
      Mask y_zero[kNv];
#pragma GCC unroll 2
      for (int v = 0; v < kNv; ++v) y_zero[v] = y[v] == zero;
#pragma GCC unroll 4
      for (int r = 0; r < kMr; ++r) {
        const float s = a[r];
        const Vec x = {s, s, s, s, s, s, s, s};
        const Mask x_zero = x == zero;
#pragma GCC unroll 2
        for (int v = 0; v < kNv; ++v) {
          const Vec product = x * y[v];
          sum[r][v] = sum[r][v] + ((x_zero | y_zero[v]) ? neg_zero : product);
        }
      }
    }
  }
}

/// The kernel body, compiled once per SimdLevel by the wrappers below.
///
/// Skipping a product with a zero piece only matters in two cases, so the
/// lower passes usually run unmasked (no compare and blend per product):
/// - A zero piece times an inf or NaN gives NaN where skipping gives nothing.
///   Only piece 0 can be non-finite, and blocks holding one take the masked
///   path.
/// - Otherwise the skipped product is ±0, and adding it changes a sum only
///   when the sum is -0 and the product +0. A sum of the documented loop is
///   -0 only while every product it has added is -0 (x + y is -0 only for
///   -0 + -0 in round-to-nearest); once it adds anything else, adding ±0
///   changes it no more, so the unmasked sum equals it from then on. So the
///   unmasked tile sum differs only where the documented tile sum is -0, and
///   then it is +0: a tile where some unmasked sum is +0 is recomputed masked.
[[gnu::always_inline]] inline void TileBody(const TileJob& job) {
  Vec sum[kMr][kNv];
  if (job.non_finite) {
    Accumulate<true>(job, sum);
  } else {
    Accumulate<false>(job, sum);
    if (job.has_lower_pass) {
      Mask positive_zero = {};
#pragma GCC unroll 4
      for (auto& row : sum) {
#pragma GCC unroll 2
        for (Vec& s : row) positive_zero |= reinterpret_cast<Mask>(s) == Mask{};
      }
      bool any = false;
      for (int lane = 0; lane < kLanes; ++lane) any |= positive_zero[lane] != 0;
      if (any) Accumulate<true>(job, sum);
    }
  }
  if (job.rows == kMr && job.cols == kNr) {
#pragma GCC unroll 4
    for (int r = 0; r < kMr; ++r) {
      float* out = job.out + r * job.out_stride;
#pragma GCC unroll 2
      for (int v = 0; v < kNv; ++v) {
        UnalignedVec* o = reinterpret_cast<UnalignedVec*>(out + v * kLanes);
        *o = job.first_tile ? sum[r][v] : *o + sum[r][v];
      }
    }
    return;
  }
  // A block at the result's edge: only its rows and columns inside are kept.
  float tile[kMr][kNr];
#pragma GCC unroll 4
  for (int r = 0; r < kMr; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < kNv; ++v) {
      *reinterpret_cast<UnalignedVec*>(&tile[r][v * kLanes]) = sum[r][v];
    }
  }
  for (int r = 0; r < job.rows; ++r) {
    float* out = job.out + r * job.out_stride;
    for (int c = 0; c < job.cols; ++c) out[c] = job.first_tile ? tile[r][c] : out[c] + tile[r][c];
  }
}

void TileBaseline(const TileJob& job) { TileBody(job); }
[[gnu::target("avx2")]] void TileAvx2(const TileJob& job) { TileBody(job); }

/// One product's packed operands and kernel. Columns runs the kernel over
/// one batch's rhs panels [j_begin, j_end) and every lhs panel: k tile by k
/// tile, and within one, a cache block of lhs panels against each of those
/// rhs panels.
struct PackedProduct {
  const PackedOperand& a;
  const PackedOperand& b;
  void (*tile)(const TileJob&);
  TileJob job;  ///< the fields every call shares
  float* result;
  int64_t m, n;

  void Columns(int64_t batch, int64_t j_begin, int64_t j_end) const {
    TileJob call = job;
    float* out = result + batch * m * n;
    for (int64_t k0 = 0; k0 < a.k; k0 += kMxuTile) {
      call.k_len = std::min(kMxuTile, a.k - k0);
      call.first_tile = k0 == 0;
      for (int64_t block = 0; block < a.panels; block += kMcPanels) {
        const int64_t block_end = std::min(a.panels, block + kMcPanels);
        for (int64_t j = j_begin; j < j_end; ++j) {
          call.rhs = b.Panel(batch, j) + k0 * kNr;
          const bool rhs_non_finite = b.HasNonFinite(batch, j, k0 / kMxuTile);
          call.cols = static_cast<int>(std::min<int64_t>(kNr, n - j * kNr));
          for (int64_t i = block; i < block_end; ++i) {
            call.lhs = a.Panel(batch, i) + k0 * kMr;
            call.non_finite = rhs_non_finite || a.HasNonFinite(batch, i, k0 / kMxuTile);
            call.rows = static_cast<int>(std::min<int64_t>(kMr, m - i * kMr));
            call.out = out + i * kMr * n + j * kNr;
            tile(call);
          }
        }
      }
    }
  }
};

/// Products (multiply-adds, pass by pass) that repay starting a thread:
/// about half a millisecond of the kernel, some ten thread starts.
constexpr double kProductsWorthAThread = double{1 << 24};
/// At most this many threads on one product, whatever is asked.
constexpr int64_t kMaxThreads = 256;

/// Hardware threads that products may borrow besides their callers', over
/// the whole process; SPMD device threads are callers and do not count.
std::atomic<int>& IdleThreads() {
  static std::atomic<int> idle(
      std::max(0, static_cast<int>(std::thread::hardware_concurrency()) - 1));
  return idle;
}

/// Takes up to `wanted` idle threads; returns how many it took.
int BorrowIdleThreads(int wanted) {
  int idle = IdleThreads().load();
  int take = 0;
  do {
    take = std::min(idle, wanted);
    if (take <= 0) return 0;
  } while (!IdleThreads().compare_exchange_weak(idle, idle - take));
  return take;
}

void ReturnIdleThreads(int count) {
  if (count > 0) IdleThreads().fetch_add(count);
}

}  // namespace

bool CpuSupports(SimdLevel level) {
  switch (level) {
    case SimdLevel::kBaseline:
      return true;
    case SimdLevel::kAvx2:
      return __builtin_cpu_supports("avx2");
  }
  return false;
}

SimdLevel BestSimdLevel() {
  static const SimdLevel best = CpuSupports(SimdLevel::kAvx2) ? SimdLevel::kAvx2 : SimdLevel::kBaseline;
  return best;
}

void MxuMatMul(const MatrixView& lhs, const MatrixView& rhs, std::span<const MxuPass> passes,
               SimdLevel level, std::span<float> result, int threads) {
  const int64_t batches = static_cast<int64_t>(lhs.batch_offsets.size());
  const int64_t m = static_cast<int64_t>(lhs.row_offsets.size());
  const int64_t n = static_cast<int64_t>(rhs.row_offsets.size());
  const int64_t k = static_cast<int64_t>(lhs.k_offsets.size());
  TPUSIM_VALUE_CHECK(static_cast<int64_t>(result.size()) == batches * m * n &&
                         rhs.batch_offsets.size() == lhs.batch_offsets.size() &&
                         rhs.k_offsets.size() == lhs.k_offsets.size() && !passes.empty(),
                     "MxuMatMul operand and result sizes disagree");
  TPUSIM_VALUE_CHECK(CpuSupports(level), "MxuMatMul at a SIMD level this CPU lacks");
  TPUSIM_VALUE_CHECK(threads >= 0, "MxuMatMul on a negative number of threads");
  if (k == 0) {
    std::fill(result.begin(), result.end(), 0.0f);  // an empty contraction is +0
    return;
  }
  if (result.empty()) return;  // the first k tile below writes every element
  int lhs_pieces = 1, rhs_pieces = 1;
  for (const MxuPass& pass : passes) {
    TPUSIM_VALUE_CHECK(pass.lhs >= 0 && pass.lhs < 3 && pass.rhs >= 0 && pass.rhs < 3,
                       "an MXU pass names a piece other than 0, 1 or 2");
    lhs_pieces = std::max(lhs_pieces, pass.lhs + 1);
    rhs_pieces = std::max(rhs_pieces, pass.rhs + 1);
  }
  const PackedOperand a = Pack(lhs, 0, kMr, lhs_pieces);
  const PackedOperand b = Pack(rhs, 1, kNr, rhs_pieces);
  TileJob job{};
  job.lhs_piece_stride = a.piece_stride;
  job.rhs_piece_stride = b.piece_stride;
  job.passes = passes.data();
  job.pass_count = static_cast<int>(passes.size());
  job.has_lower_pass = std::any_of(passes.begin(), passes.end(),
                                   [](const MxuPass& pass) { return pass.lhs != 0 || pass.rhs != 0; });
  job.out_stride = n;
  const PackedProduct run{
      a, b, level == SimdLevel::kAvx2 ? TileAvx2 : TileBaseline, job, result.data(), m, n};

  // Threads share the work by rhs panels (kNr result columns), each batch's
  // in turn. A thread computes whole result elements, each in the documented
  // order, so the bits are the same whichever thread computes which columns.
  // (Shares of lhs cache blocks instead were slower on two cores: each thread
  // then streams every rhs panel through its own caches.)
  const int64_t units = batches * b.panels;
  const double products = static_cast<double>(batches) * static_cast<double>(m) *
                          static_cast<double>(n) * static_cast<double>(k) *
                          static_cast<double>(passes.size());
  int borrowed = 0;
  if (threads == 0) {
    threads = 1;
    if (products >= kProductsWorthAThread) {
      const double wanted = std::min(
          {static_cast<double>(units), products / kProductsWorthAThread, double{kMaxThreads}});
      borrowed = BorrowIdleThreads(static_cast<int>(wanted) - 1);
      threads += borrowed;
    }
  }
  threads = static_cast<int>(std::min<int64_t>({threads, units, kMaxThreads}));
  const auto run_units = [&](int64_t begin, int64_t end) {
    while (begin < end) {
      const int64_t batch = begin / b.panels;
      const int64_t batch_end = std::min(end, (batch + 1) * b.panels);
      run.Columns(batch, begin - batch * b.panels, batch_end - batch * b.panels);
      begin = batch_end;
    }
  };
  std::vector<std::thread> workers;
  std::vector<std::pair<int64_t, int64_t>> for_the_caller = {{0, units / threads}};
  for (int t = 1; t < threads; ++t) {
    const std::pair<int64_t, int64_t> range = {units * t / threads, units * (t + 1) / threads};
    try {
      workers.emplace_back(run_units, range.first, range.second);
    } catch (const std::system_error&) {
      for_the_caller.push_back(range);  // no thread to be had: the caller computes it
    }
  }
  for (const auto& [begin, end] : for_the_caller) run_units(begin, end);
  for (std::thread& worker : workers) worker.join();
  ReturnIdleThreads(borrowed);
  for (float& x : result) {
    if (x != x) x = std::bit_cast<float>(uint32_t{0x7FC0'0000});
  }
}

}  // namespace tpusim::eval
