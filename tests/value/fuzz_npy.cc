// libFuzzer target: any bytes given to the .npy parser must yield a Literal or
// a Status, never a crash, a sanitizer report or an allocation beyond the
// input's size. Parsed values are serialised again, which must succeed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sim/hlo/primitive_type.h"
#include "sim/value/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tpusim::hlo::PrimitiveType;
  using tpusim::value::NpyReadOptions;
  if (size == 0) return 0;
  // The last byte picks an expected element type (or none), so that the
  // raw-bits and sub-byte paths are reached too; the rest is the file.
  const std::string_view file(reinterpret_cast<const char*>(data), size - 1);
  NpyReadOptions options;
  const auto type = static_cast<PrimitiveType>(data[size - 1] % tpusim::hlo::kPrimitiveTypeCount);
  if (data[size - 1] < 128 && tpusim::hlo::IsArrayType(type)) options.element_type = type;
  tpusim::StatusOr<tpusim::value::Literal> literal =
      tpusim::value::ParseNpy(file, "fuzz.npy", options);
  if (literal.ok() && !tpusim::value::SerializeNpy(*literal).ok()) std::abort();
  return 0;
}
