#include "sim/chip/memory.h"

#include <algorithm>

#include "sim/base/arith.h"

namespace tpusim::chip {

Hbm::Hbm(const arch::ChipConfig& chip)
    : granularity_(chip.hbm.access_granularity.value()),
      clock_hz_(chip.clock.value()),
      bytes_per_second_(
          std::max<int64_t>(1, chip.hbm.bandwidth.value() / 100 * chip.hbm.efficiency_percent /
                                   chip.tensorcores_per_chip)) {}

int64_t Hbm::AccessBytes(int64_t bytes) const {
  return bytes <= 0 ? 0 : RoundUp(bytes, granularity_);
}

int64_t Hbm::Cycles(int64_t bytes) const { return MulDivCeil(bytes, clock_hz_, bytes_per_second_); }

Vmem::Vmem(const arch::ChipConfig& chip)
    : capacity_(chip.vmem.capacity.value()),
      clock_hz_(chip.clock.value()),
      bytes_per_second_(chip.vmem.bandwidth.value()) {}

int64_t Vmem::Cycles(int64_t bytes) const {
  return MulDivCeil(bytes, clock_hz_, bytes_per_second_);
}

int64_t Vmem::StreamedMatmulBytes(const MatmulFootprint& f) const {
  const int64_t once = SatAdd(SatAdd(f.lhs_bytes, f.rhs_bytes), f.out_bytes);
  const int64_t usable = capacity_ / 2;
  // Resident smaller operand, the other two streamed block by block: each
  // byte crosses HBM once as long as the resident one leaves room to stream.
  if (once <= usable || std::min(f.lhs_bytes, f.rhs_bytes) <= usable / 2) return once;
  constexpr int64_t kAccumulatorBytes = 4;  // f32 output block
  constexpr int64_t kBlockQuantum = 128;    // MXU-aligned block edge
  int64_t b = kBlockQuantum;
  while (kAccumulatorBytes * (b + kBlockQuantum) * (b + kBlockQuantum) <= usable / 2)
    b += kBlockQuantum;
  return SatAdd(SatAdd(SatMul(f.lhs_bytes, CeilDiv(std::max<int64_t>(f.n, 1), b)),
                       SatMul(f.rhs_bytes, CeilDiv(std::max<int64_t>(f.m, 1), b))),
                f.out_bytes);
}

Dma::Dma(const arch::ChipConfig& chip)
    : hbm_(chip),
      start_(chip.overhead.dma_start.value()),
      clock_hz_(chip.clock.value()),
      pcie_bytes_per_second_(chip.pcie.bandwidth.value() / chip.tensorcores_per_chip) {}

int64_t Dma::Cycles(int64_t hbm_bytes, int64_t host_bytes) const {
  if (hbm_bytes <= 0 && host_bytes <= 0) return 0;
  if (pcie_bytes_per_second_ <= 0)
    return SatAdd(start_, hbm_.Cycles(SatAdd(hbm_bytes, host_bytes)));
  const int64_t pcie =
      MulDivCeil(std::max<int64_t>(host_bytes, 0), clock_hz_, pcie_bytes_per_second_);
  return SatAdd(start_, std::max(hbm_.Cycles(std::max<int64_t>(hbm_bytes, 0)), pcie));
}

HbmSharing::HbmSharing(int64_t begin, int64_t cycles, int64_t hbm_cycles, int64_t copies_end)
    : begin_(begin),
      cycles_(std::max<int64_t>(cycles, 0)),
      hbm_cycles_(std::clamp<int64_t>(hbm_cycles, 0, cycles_)),
      copy_cycles_(std::max<int64_t>(copies_end - begin, 0)),
      shared_cycles_(std::max(cycles_, SatMul(2, hbm_cycles_))),
      copy_work_meanwhile_(shared_cycles_ - hbm_cycles_) {}

int64_t HbmSharing::KernelCycles() const {
  if (copy_cycles_ == 0) return cycles_;
  if (copy_cycles_ >= copy_work_meanwhile_) return shared_cycles_;
  // The copies finish first, after 2 x copy_cycles_ at half the bandwidth, or
  // without slowing a kernel that needs at most half: the kernel has then done
  // copy_cycles_ x cycles_ / hbm_cycles_ of its work and runs the rest alone.
  if (SatMul(2, hbm_cycles_) <= cycles_) return cycles_;
  return SatAdd(cycles_, MulDivCeil(copy_cycles_, SatMul(2, hbm_cycles_) - cycles_, hbm_cycles_));
}

int64_t HbmSharing::CopyEnd(int64_t end) const {
  const int64_t work = end - begin_;
  if (work <= 0 || copy_cycles_ == 0) return end;
  // At the rate copy_work_meanwhile_ / shared_cycles_ while the kernel runs,
  // then at the whole bandwidth: hbm_cycles_ later than alone.
  if (work <= copy_work_meanwhile_) {
    return SatAdd(begin_, MulDivCeil(work, shared_cycles_, copy_work_meanwhile_));
  }
  return SatAdd(end, hbm_cycles_);
}

int64_t PcieQueues::EndOf(int64_t now, int64_t cycles, bool to_host) const {
  const int64_t after = to_host ? to_host_idle_at_ : std::max(from_host_idle_at_, to_host_idle_at_);
  return SatAdd(std::max(now, after), cycles);
}

void PcieQueues::Delay(int64_t now, int64_t cycles) {
  for (int64_t* idle_at : {&to_host_idle_at_, &from_host_idle_at_}) {
    if (*idle_at > now) *idle_at = SatAdd(*idle_at, cycles);
  }
}

}  // namespace tpusim::chip
