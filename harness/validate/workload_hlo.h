// The HLO module a published measurement timed, written the way XLA's TPU
// backend emits it for that JAX program: the same opcodes and fusions, TPU
// tiled layouts on every array (docs/validation.md, "What each row runs").
#ifndef TPUSIM_HARNESS_VALIDATE_WORKLOAD_HLO_H_
#define TPUSIM_HARNESS_VALIDATE_WORKLOAD_HLO_H_

#include <string>

#include "harness/validate/measurement.h"
#include "sim/base/status.h"

namespace tpusim::harness {

/// A module to time and what of it the measurement covers.
struct Workload {
  std::string hlo_text;
  /// The instruction whose time was measured (the published op's HLO name);
  /// empty when the time covers the whole module.
  std::string timed_instruction;
  /// A collective across the row's devices: timed on the row's network.
  bool collective = false;
};

/// The module `m` timed: a matmul fusion, a standalone elementwise op, an
/// activation fusion, batch/layer/RMS normalisation, a pooling reduce-window,
/// an HBM copy or a collective (collective-permute, all-gather, all-reduce,
/// reduce-scatter, all-to-all), recognised from the row's op, shapes and note.
/// kUnimplemented ("FILE:LINE: error: no HLO generator for ...") for a row of
/// another kind; kInvalidArgument for shapes that cannot be read.
StatusOr<Workload> WorkloadFor(const Measurement& m);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_VALIDATE_WORKLOAD_HLO_H_
