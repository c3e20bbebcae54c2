// Element types of HLO arrays (XLA's PrimitiveType), generated from
// primitive_type.def.
#ifndef TPUSIM_SIM_HLO_PRIMITIVE_TYPE_H_
#define TPUSIM_SIM_HLO_PRIMITIVE_TYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace tpusim::hlo {

enum class PrimitiveType : uint8_t {
#define V(enumerator, name, bits, kind) enumerator,
#include "sim/hlo/primitive_type.def"
#undef V
};

/// Number of PrimitiveType enumerators.
inline constexpr int kPrimitiveTypeCount = 0
#define V(enumerator, name, bits, kind) +1
#include "sim/hlo/primitive_type.def"
#undef V
    ;

enum class PrimitiveKind : uint8_t { kPred, kSigned, kUnsigned, kFloat, kComplex, kNonArray };

/// HLO spelling, e.g. "bf16".
std::string_view PrimitiveTypeName(PrimitiveType type);
/// Inverse of PrimitiveTypeName; nullopt for a word that is not a type.
std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name);
/// Packed storage width in bits (pred: 8; token and opaque: 0).
int PrimitiveTypeBitWidth(PrimitiveType type);
PrimitiveKind KindOf(PrimitiveType type);

inline bool IsFloatingPoint(PrimitiveType t) { return KindOf(t) == PrimitiveKind::kFloat; }
inline bool IsComplex(PrimitiveType t) { return KindOf(t) == PrimitiveKind::kComplex; }
inline bool IsSignedInt(PrimitiveType t) { return KindOf(t) == PrimitiveKind::kSigned; }
inline bool IsUnsignedInt(PrimitiveType t) { return KindOf(t) == PrimitiveKind::kUnsigned; }
inline bool IsInteger(PrimitiveType t) { return IsSignedInt(t) || IsUnsignedInt(t); }
/// True for element types that can appear in an array (not token/opaque).
inline bool IsArrayType(PrimitiveType t) { return KindOf(t) != PrimitiveKind::kNonArray; }

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_PRIMITIVE_TYPE_H_
