// Test helper for npy_numpy_test.py, which checks our .npy reader and writer
// against numpy itself.
//
//   npy_tool copy IN OUT [TYPE]   read IN (expecting element TYPE, if given)
//                                 and write it to OUT
//   npy_tool samples DIR          write DIR/<type>.npy for every array type,
//                                 holding 0, 1, -1, 2.5, -6, 3 as a 2x3 array
//
// Errors go to stderr with exit code 2.
#include <cstdio>
#include <string>

#include "sim/hlo/primitive_type.h"
#include "sim/value/literal.h"
#include "sim/value/npy.h"

namespace tpusim::value {
namespace {

int Fail(const Status& status) {
  std::fprintf(stderr, "%s\n", status.message().c_str());
  return 2;
}

int Copy(const std::string& in, const std::string& out, const char* type_name) {
  NpyReadOptions options;
  if (type_name != nullptr) {
    options.element_type = hlo::PrimitiveTypeFromName(type_name);
    if (!options.element_type)
      return Fail(InvalidArgument(std::string("unknown type ") + type_name));
  }
  StatusOr<Literal> literal = ReadNpy(in, options);
  if (!literal.ok()) return Fail(literal.status());
  const Status written = WriteNpy(out, *literal);
  return written.ok() ? 0 : Fail(written);
}

int Samples(const std::string& dir) {
  for (int t = 0; t < hlo::kPrimitiveTypeCount; ++t) {
    const auto type = static_cast<hlo::PrimitiveType>(t);
    if (!hlo::IsArrayType(type)) continue;
    Literal literal(hlo::Shape(type, {2, 3}));
    const double values[] = {0, 1, -1, 2.5, -6, 3};
    for (int i = 0; i < 6; ++i) literal.SetFromDouble(i, values[i]);
    const Status written =
        WriteNpy(dir + "/" + std::string(hlo::PrimitiveTypeName(type)) + ".npy", literal);
    if (!written.ok()) return Fail(written);
  }
  return 0;
}

}  // namespace
}  // namespace tpusim::value

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "copy" && (argc == 4 || argc == 5)) {
    return tpusim::value::Copy(argv[2], argv[3], argc == 5 ? argv[4] : nullptr);
  }
  if (command == "samples" && argc == 3) return tpusim::value::Samples(argv[2]);
  std::fprintf(stderr, "usage: npy_tool copy IN OUT [TYPE] | npy_tool samples DIR\n");
  return 2;
}
