// HBM, VMEM and the DMA engine of one TensorCore: bytes to cycles.
#ifndef TPUSIM_SIM_CHIP_MEMORY_H_
#define TPUSIM_SIM_CHIP_MEMORY_H_

#include <cstdint>

#include "sim/arch/chip_config.h"

namespace tpusim::chip {

/// HBM as one TensorCore sees it. The chip's bandwidth is shared evenly by
/// its TensorCores: on a megacore chip both cores run halves of the same
/// kernel; elsewhere each core is its own device with half the HBM
/// bandwidth (v3, 7x). Every buffer access is rounded up to the access
/// granularity.
class Hbm {
 public:
  explicit Hbm(const arch::ChipConfig& chip);
  /// Bytes HBM really moves for one access of `bytes`: rounded up to the
  /// access granularity; 0 stays 0.
  int64_t AccessBytes(int64_t bytes) const;
  /// ceil(bytes x clock x tensorcores / the chip's achievable bandwidth,
  /// hbm.bandwidth x hbm.efficiency_percent / 100).
  int64_t Cycles(int64_t bytes) const;

 private:
  int64_t granularity_;       ///< bytes
  int64_t clock_hz_;          ///< TensorCore clock
  int64_t bytes_per_second_;  ///< this core's share of the chip bandwidth
};

/// Operand sizes of a matmul kernel, for deciding whether it fits in VMEM.
struct MatmulFootprint {
  int64_t lhs_bytes = 0;  ///< streamed operand [m, k]
  int64_t rhs_bytes = 0;  ///< weight operand [k, n]
  int64_t out_bytes = 0;  ///< result [m, n]
  int64_t m = 0;
  int64_t n = 0;
};

/// On-chip vector memory of one TensorCore.
class Vmem {
 public:
  explicit Vmem(const arch::ChipConfig& chip);
  int64_t capacity() const { return capacity_; }
  /// ceil(bytes x clock / VMEM bandwidth).
  int64_t Cycles(int64_t bytes) const;
  /// HBM bytes of a matmul kernel that streams its operands through VMEM.
  /// Half the capacity is usable (the other half double-buffers the next
  /// blocks). When everything, or the smaller operand with room to stream the
  /// rest, fits, every byte crosses HBM once. Otherwise the kernel keeps
  /// b x b f32 output blocks (b the largest multiple of 128 with 4 b² within
  /// half the usable space) and re-reads the lhs ceil(n / b) times and the rhs
  /// ceil(m / b) times.
  int64_t StreamedMatmulBytes(const MatmulFootprint& f) const;

 private:
  int64_t capacity_;          ///< bytes
  int64_t clock_hz_;          ///< TensorCore clock
  int64_t bytes_per_second_;  ///< VMEM <-> vreg bandwidth
};

/// The DMA engine of one TensorCore: asynchronous copies at this core's HBM
/// bandwidth after a fixed start-up (`overhead.dma_start`); a copy to or from
/// host memory at this core's share of the chip's PCIe bandwidth.
class Dma {
 public:
  explicit Dma(const arch::ChipConfig& chip);
  /// dma_start + the longer of the HBM cycles of `hbm_bytes` and the PCIe
  /// cycles of `host_bytes` (which cross HBM too when `pcie.bandwidth` is 0);
  /// 0 for no bytes.
  int64_t Cycles(int64_t hbm_bytes, int64_t host_bytes) const;
  /// True when a copy of `host_bytes` in host memory is paced by PCIe, not
  /// HBM: it has some, and `pcie.bandwidth` is modelled.
  bool OverPcie(int64_t host_bytes) const { return host_bytes > 0 && pcie_bytes_per_second_ > 0; }

 private:
  Hbm hbm_;        ///< the memory the copies cross
  int64_t start_;  ///< cycles before the first byte moves
  int64_t clock_hz_;
  int64_t pcie_bytes_per_second_;  ///< this core's share of the chip's; 0: not modelled
};

/// The PCIe link between a chip and its host, which is full duplex: lanes
/// each way, each at `pcie.bandwidth` (16 GB/s each way on v4 [SB]).
/// Transfers queue per direction, so offloads do not wait behind reloads;
/// a transfer from the host also waits for those still going to it, which may
/// carry what it reads back (an offload ahead of its reload).
class PcieQueues {
 public:
  /// The cycle a transfer of `cycles` issued at cycle `now` would end.
  int64_t EndOf(int64_t now, int64_t cycles, bool to_host) const;
  /// Queues it: its direction is busy until `end` (from EndOf).
  void Take(int64_t end, bool to_host) { (to_host ? to_host_idle_at_ : from_host_idle_at_) = end; }
  /// The cycle the last queued transfer ends, each way.
  int64_t to_host_idle_at() const { return to_host_idle_at_; }
  int64_t from_host_idle_at() const { return from_host_idle_at_; }
  /// Moves what is still queued after cycle `now` `cycles` later (the
  /// iterations of a loop skipped over).
  void Delay(int64_t now, int64_t cycles);

 private:
  int64_t to_host_idle_at_ = 0;
  int64_t from_host_idle_at_ = 0;
};

/// One TensorCore's HBM shared by a kernel and the copies queued on its DMA
/// engine, as a fluid model with max-min fair rates (the rule the
/// interconnect's flow model applies to links). The kernel asks for
/// `hbm_cycles` of HBM time spread evenly over its `cycles`, a rate of
/// hbm_cycles / cycles; the copies ask for all of it. While both run, the
/// kernel gets its rate or half, whichever is less, and the copies the rest;
/// once one has finished, the other has all it asks for. A kernel that needs
/// HBM for at most half its time is not slowed and the copies take hbm_cycles
/// longer; an HBM-bound kernel and the copies split the bandwidth evenly.
class HbmSharing {
 public:
  /// A kernel issued at cycle `begin`, `cycles` long alone, while the copies
  /// queued on the DMA engine run until cycle `copies_end` alone.
  HbmSharing(int64_t begin, int64_t cycles, int64_t hbm_cycles, int64_t copies_end);
  /// The kernel's cycles with the copies in flight: at least `cycles`.
  int64_t KernelCycles() const;
  /// The cycle at which a queued copy that would end at cycle `end` alone
  /// ends with the kernel beside it: `end` when that is not after `begin`.
  int64_t CopyEnd(int64_t end) const;

 private:
  int64_t begin_;        ///< the kernel's issue cycle
  int64_t cycles_;       ///< the kernel's, alone
  int64_t hbm_cycles_;   ///< of cycles_, the kernel's HBM time
  int64_t copy_cycles_;  ///< the queued copies' remaining work at begin_
  /// The kernel's cycles while the copies run all along: cycles_ when it
  /// needs HBM for at most half of them, else 2 hbm_cycles_ (half the rate).
  int64_t shared_cycles_;
  /// The copies' work done meanwhile: shared_cycles_ - hbm_cycles_.
  int64_t copy_work_meanwhile_;
};

}  // namespace tpusim::chip

#endif  // TPUSIM_SIM_CHIP_MEMORY_H_
