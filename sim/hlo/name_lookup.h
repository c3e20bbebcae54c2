// Compile-time hash tables from spellings to enum indices, for the parser's
// name lookups (opcodes, element types, attribute names). Internal to sim/hlo.
#ifndef TPUSIM_SIM_HLO_NAME_LOOKUP_H_
#define TPUSIM_SIM_HLO_NAME_LOOKUP_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tpusim::hlo::internal {

/// A cheap hash of the length and three characters (collisions only cost a
/// probe); constexpr so that the tables are built by the compiler.
constexpr uint32_t SpellingHash(std::string_view s) {
  if (s.empty()) return 0;
  const auto at = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(s[i])); };
  const uint32_t h = static_cast<uint32_t>(s.size()) * 0x9e3779b1u ^ at(0) * 0x85ebca6bu ^
                     at(s.size() - 1) * 0xc2b2ae35u ^ at(s.size() / 2) * 0x27d4eb2fu;
  return h ^ (h >> 15);
}

/// Open-addressing table of `Size` slots (a power of two, well above the
/// number of names) holding indices into a names array; 0xff is empty.
template <size_t Size>
struct SpellingTable {
  static_assert((Size & (Size - 1)) == 0);
  std::array<uint8_t, Size> slots{};

  template <typename Names>
  static constexpr SpellingTable Build(const Names& names) {
    SpellingTable t;
    for (auto& s : t.slots) s = 0xff;
    for (size_t i = 0; i < names.size(); ++i) {
      size_t j = SpellingHash(names[i]) & (Size - 1);
      while (t.slots[j] != 0xff) j = (j + 1) & (Size - 1);
      t.slots[j] = static_cast<uint8_t>(i);
    }
    return t;
  }

  /// Index of `name` in `names`, or -1.
  template <typename Names>
  constexpr int Find(const Names& names, std::string_view name) const {
    for (size_t j = SpellingHash(name) & (Size - 1);; j = (j + 1) & (Size - 1)) {
      const uint8_t i = slots[j];
      if (i == 0xff) return -1;
      if (names[i] == name) return i;
    }
  }
};

}  // namespace tpusim::hlo::internal

#endif  // TPUSIM_SIM_HLO_NAME_LOOKUP_H_
