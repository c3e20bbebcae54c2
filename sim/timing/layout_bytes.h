// Physical sizes of HLO buffers from their layouts: tiles pad the minor
// dimensions (an f32[3,5]{1,0:T(8,128)} occupies a whole 8x128 tile, 4 KiB),
// `S(1)` places a buffer in VMEM, and the minor-to-major order decides which
// dimension runs along the vector lanes.
#ifndef TPUSIM_SIM_TIMING_LAYOUT_BYTES_H_
#define TPUSIM_SIM_TIMING_LAYOUT_BYTES_H_

#include <cstdint>
#include <vector>

#include "sim/hlo/shape.h"

namespace tpusim::timing {

/// Bytes an array occupies in memory: hlo::PhysicalBits in whole bytes
/// (INT64_MAX past 64 bits). Tuples: the sum of their elements; tokens and
/// opaque values: 0.
int64_t PhysicalBytes(const hlo::Shape& shape);

/// True for an array whose layout says `S(1)` (VMEM).
bool InVmem(const hlo::Shape& array);
/// True for an array whose layout says `S(5)` (host memory, as XLA's host
/// offloading places it).
bool InHostMemory(const hlo::Shape& array);

/// Vregs of `sublanes` x `lanes` 32-bit slots an array occupies in the vector
/// unit: the most minor physical dimension along lanes, the next along
/// sublanes, both padded; rank 1 is packed linearly; a scalar takes one.
/// Narrow types are widened to 32 bits in the VPU [Q PL, SB], so packing does
/// not reduce the count.
int64_t VregCount(const hlo::Shape& array, int64_t sublanes, int64_t lanes);

/// The logical dimension laid along the lanes (the most minor one); -1 for a scalar.
int64_t LaneDimension(const hlo::Shape& array);
/// The logical dimension laid along the sublanes (second most minor); -1 below rank 2.
int64_t SublaneDimension(const hlo::Shape& array);

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_LAYOUT_BYTES_H_
