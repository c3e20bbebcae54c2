#include "sim/base/fingerprint.h"

#include <cstdio>

namespace tpusim {
namespace {

constexpr uint64_t kFnv1aPrime = 1099511628211ULL;

}  // namespace

uint64_t Fnv1a(std::span<const std::byte> bytes, uint64_t hash) {
  for (const std::byte b : bytes) hash = (hash ^ static_cast<uint64_t>(b)) * kFnv1aPrime;
  return hash;
}

uint64_t Fnv1a(std::string_view text, uint64_t hash) {
  return Fnv1a(std::as_bytes(std::span(text.data(), text.size())), hash);
}

std::string Hex16(uint64_t value) {
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx", static_cast<unsigned long long>(value));
  return digits;
}

}  // namespace tpusim
