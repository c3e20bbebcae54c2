#include "sim/hlo/annotations.h"

namespace tpusim::hlo {

bool IsCompilerAnnotation(std::string_view target) {
  return target == "Sharding" || target == "SPMDFullToShardShape" ||
         target == "SPMDShardToFullShape" || target == "ShardBarrierTo" ||
         target == "ShardBarrierFrom" || target == "LayoutConstraint" || target == "SetBound";
}

}  // namespace tpusim::hlo
