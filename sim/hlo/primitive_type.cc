#include "sim/hlo/primitive_type.h"

#include <array>

#include "sim/hlo/name_lookup.h"

namespace tpusim::hlo {
namespace {

struct TypeInfo {
  std::string_view name;
  int bits;
  PrimitiveKind kind;
};

constexpr std::array<TypeInfo, kPrimitiveTypeCount> kTypeInfo = {{
#define V(enumerator, name, bits, kind) {name, bits, PrimitiveKind::kind},
#include "sim/hlo/primitive_type.def"
#undef V
}};

constexpr std::array<std::string_view, kPrimitiveTypeCount> kTypeNames = [] {
  std::array<std::string_view, kPrimitiveTypeCount> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = kTypeInfo[i].name;
  return names;
}();

constexpr auto kTypeTable = internal::SpellingTable<128>::Build(kTypeNames);

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType type) {
  return kTypeInfo[static_cast<int>(type)].name;
}

std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name) {
  // The parser asks this for every word that might start a shape; reject the
  // many words that cannot be a type before comparing any strings.
  if (name.empty() || name.size() > 13) return std::nullopt;
  switch (name[0]) {
    case 'b': case 'c': case 'f': case 'o': case 'p': case 's': case 't': case 'u':
      break;
    default:
      return std::nullopt;
  }
  const int i = kTypeTable.Find(kTypeNames, name);
  if (i < 0) return std::nullopt;
  return static_cast<PrimitiveType>(i);
}

int PrimitiveTypeBitWidth(PrimitiveType type) { return kTypeInfo[static_cast<int>(type)].bits; }

PrimitiveKind KindOf(PrimitiveType type) { return kTypeInfo[static_cast<int>(type)].kind; }

}  // namespace tpusim::hlo
