// The collective algorithms, one file each in this folder. Each appends the
// flows of one collective, every group at once, to a FlowBuilder, or returns
// kInvalidArgument for a collective it cannot run. PlanCollective
// (sim/ici/collectives.cc) calls the one an ici::Algorithm names, after the
// auto rule (auto_rule.cc) has replaced kAuto. docs/interconnect.md
// ("Collective algorithms") derives every byte count and latency.
#ifndef TPUSIM_SIM_ICI_ALGORITHMS_COLLECTIVE_ALGORITHM_H_
#define TPUSIM_SIM_ICI_ALGORITHMS_COLLECTIVE_ALGORITHM_H_

#include "sim/base/status.h"
#include "sim/ici/algorithms/flow_builder.h"
#include "sim/ici/collectives.h"

namespace tpusim::ici::algorithms {

/// Builds the flows of one collective. The algorithms below are declared
/// through this type so that each has exactly this signature.
using CollectiveAlgorithm = Status(FlowBuilder& builder, const ChipCollective& collective);

CollectiveAlgorithm RingAlgorithm;               ///< ring.cc
CollectiveAlgorithm BidirectionalRingAlgorithm;  ///< ring.cc
CollectiveAlgorithm TorusAlgorithm;              ///< torus.cc
CollectiveAlgorithm HamiltonianRingsAlgorithm;   ///< hamiltonian_rings.cc
CollectiveAlgorithm TreeAlgorithm;               ///< tree.cc
CollectiveAlgorithm HalvingDoublingAlgorithm;    ///< halving_doubling.cc
CollectiveAlgorithm DirectAlgorithm;             ///< direct.cc

}  // namespace tpusim::ici::algorithms

#endif  // TPUSIM_SIM_ICI_ALGORITHMS_COLLECTIVE_ALGORITHM_H_
