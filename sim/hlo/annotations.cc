#include "sim/hlo/annotations.h"

namespace tpusim::hlo {

bool IsCompilerAnnotation(std::string_view target) {
  return target == "Sharding" || target == "SPMDFullToShardShape" ||
         target == "SPMDShardToFullShape" || target == "ShardBarrierTo" ||
         target == "ShardBarrierFrom" || target == "LayoutConstraint" || target == "SetBound";
}

bool IsDynamicPadderEdge(std::string_view target) {
  return target == "PadToStatic" || target == "SliceToDynamic";
}

}  // namespace tpusim::hlo
