// PlanCollective: the algorithm a collective runs, by name or by the auto
// rule, builds its flows. Each algorithm is a file of sim/ici/algorithms/.
#include "sim/ici/collectives.h"

#include "sim/ici/algorithms/collective_algorithm.h"
#include "sim/ici/algorithms/flow_builder.h"

namespace tpusim::ici {
namespace {

/// The implementation of `algorithm`; nullptr for kAuto, which names none.
algorithms::CollectiveAlgorithm *ImplementationOf(Algorithm algorithm) {
  switch (algorithm) {
  case Algorithm::kRing:
    return algorithms::RingAlgorithm;
  case Algorithm::kBidirectionalRing:
    return algorithms::BidirectionalRingAlgorithm;
  case Algorithm::kTorus:
    return algorithms::TorusAlgorithm;
  case Algorithm::kHamiltonianRings:
    return algorithms::HamiltonianRingsAlgorithm;
  case Algorithm::kTree:
    return algorithms::TreeAlgorithm;
  case Algorithm::kHalvingDoubling:
    return algorithms::HalvingDoublingAlgorithm;
  case Algorithm::kDirect:
    return algorithms::DirectAlgorithm;
  case Algorithm::kAuto:
    break;
  }
  return nullptr;
}

} // namespace

StatusOr<CollectivePlan> PlanCollective(const Topology &topology,
                                        const Router &router,
                                        const ChipCollective &collective,
                                        Algorithm algorithm) {
  CollectivePlan plan;
  plan.algorithm = algorithm == Algorithm::kAuto
                       ? ChooseAlgorithm(topology, router, collective)
                       : algorithm;
  algorithms::CollectiveAlgorithm *const build =
      ImplementationOf(plan.algorithm);
  if (build == nullptr)
    return Internal("ChooseAlgorithm returned auto");
  algorithms::FlowBuilder builder(topology, router, collective.start);
  TPUSIM_RETURN_IF_ERROR(build(builder, collective));
  plan.flows = builder.Take();
  return plan;
}

} // namespace tpusim::ici
