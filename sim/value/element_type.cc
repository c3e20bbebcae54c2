#include "sim/value/element_type.h"

namespace tpusim::value {

int64_t ElementByteSize(hlo::PrimitiveType type) {
  if (!hlo::IsArrayType(type)) return 0;
  return VisitArrayType(type, [](auto tag) {
    return static_cast<int64_t>(sizeof(NativeType<decltype(tag)::value>));
  });
}

}  // namespace tpusim::value
