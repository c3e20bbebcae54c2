// FNV-1a (64-bit), the hash behind output checksums, chip preset hashes and
// sweep stamps and point keys: fixed by its definition, so the same on every
// machine and in every build (std::hash is neither), which the goldens and
// results files stamped with it need.
#ifndef TPUSIM_SIM_BASE_FINGERPRINT_H_
#define TPUSIM_SIM_BASE_FINGERPRINT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tpusim {

/// FNV-1a's 64-bit offset basis: the hash of nothing.
inline constexpr uint64_t kFnv1aBasis = 14695981039346656037ULL;

/// `hash` extended by `bytes` (chain calls to hash several pieces).
uint64_t Fnv1a(std::span<const std::byte> bytes, uint64_t hash = kFnv1aBasis);
uint64_t Fnv1a(std::string_view text, uint64_t hash = kFnv1aBasis);

/// The 16 lower-case hex digits of `value`, e.g. "00ff00ff00ff00ff".
std::string Hex16(uint64_t value);

}  // namespace tpusim

#endif  // TPUSIM_SIM_BASE_FINGERPRINT_H_
