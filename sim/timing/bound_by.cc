// BoundBy's conversions and names, generated from sim/chip/unit.def so that
// a unit added there is a BoundBy member with the same name.
#include "sim/timing/timing.h"

namespace tpusim::timing {

BoundBy BoundByUnit(chip::Unit unit) {
  switch (unit) {
#define V(enumerator, name)   \
  case chip::Unit::enumerator: \
    return BoundBy::enumerator;
#include "sim/chip/unit.def"
#undef V
  }
  return BoundBy::kLatency;  // unreachable: every Unit returns above
}

std::string_view BoundByName(BoundBy bound) {
  switch (bound) {
#define V(enumerator, name) \
  case BoundBy::enumerator: \
    return name;
#include "sim/chip/unit.def"
#undef V
    case BoundBy::kLatency:
      return "latency";
    case BoundBy::kIci:
      return "ICI";
  }
  return "?";  // unreachable: every BoundBy returns above
}

}  // namespace tpusim::timing
