// Reading and writing numpy .npy files (format versions 1.0, 2.0 and 3.0;
// little-endian, C order).
//
// Element types numpy knows are written as themselves ('|b1', '<i4', '<f2',
// '<c8', ...); s1/s2/s4 and u1/u2/u4 as one '|i1'/'|u1' per element. bf16 and
// the f8/f4 types, which numpy lacks, are written as a one-field structured
// dtype named after the ml_dtypes type and holding the raw bits, e.g.
// `[('bfloat16', '<u2')]`: plain numpy loads it, the field name says what it
// is, and `np.load(p).view(ml_dtypes.bfloat16)` gives the values.
// docs/values.md has the full table.
//
// Every malformed file gives a Status naming the file and what was expected;
// none crashes, and memory use stays proportional to the file's size (the
// data is sized from the header only after the file is known to hold it).
#ifndef TPUSIM_SIM_VALUE_NPY_H_
#define TPUSIM_SIM_VALUE_NPY_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "sim/base/status.h"
#include "sim/hlo/primitive_type.h"
#include "sim/value/literal.h"

namespace tpusim::value {

struct NpyReadOptions {
  /// The element type the caller needs (e.g. the parameter's). When set, the
  /// file must hold exactly that type or a storage of it: '|i1'/'|u1' for the
  /// sub-byte integers (values must fit), raw bits for bf16/f8/f4 (our
  /// structured dtype, 'V' bytes as np.save writes ml_dtypes arrays, or an
  /// unsigned integer of the same size). Without it, raw 'V' files are an
  /// error because their type is unknown.
  std::optional<hlo::PrimitiveType> element_type;
  /// Files whose data would exceed this many bytes are refused before reading.
  int64_t max_bytes = std::numeric_limits<int64_t>::max();
};

/// Reads the .npy file at `path` straight into a Literal.
StatusOr<Literal> ReadNpy(const std::string& path, const NpyReadOptions& options = {});
/// Parses a whole .npy file held in memory; `name` prefixes error messages.
StatusOr<Literal> ParseNpy(std::string_view contents, std::string_view name,
                           const NpyReadOptions& options = {});

/// The .npy bytes of an array literal (format 1.0, or 2.0 for a header over
/// 64 KiB); tuples and tokens are an error.
StatusOr<std::string> SerializeNpy(const Literal& literal);
/// Writes SerializeNpy(literal) to `path` atomically.
Status WriteNpy(const std::string& path, const Literal& literal);

}  // namespace tpusim::value

#endif  // TPUSIM_SIM_VALUE_NPY_H_
