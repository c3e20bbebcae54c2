// FNV-1a 64 against the published test vectors, chaining, and Hex16.
#include "sim/base/fingerprint.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <span>

namespace tpusim {
namespace {

TEST(Fingerprint, Fnv1aMatchesThePublishedVectors) {
  EXPECT_EQ(Fnv1a(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Fnv1a("foobar"), 0x85944171f73967e8ULL);
}

TEST(Fingerprint, ChainedPiecesHashAsTheirConcatenation) {
  EXPECT_EQ(Fnv1a("bar", Fnv1a("foo")), Fnv1a("foobar"));
  const std::byte bytes[] = {std::byte{'f'}, std::byte{'o'}, std::byte{'o'}};
  EXPECT_EQ(Fnv1a(std::span<const std::byte>(bytes)), Fnv1a("foo"));
}

TEST(Fingerprint, Hex16IsSixteenLowerCaseDigits) {
  EXPECT_EQ(Hex16(0xff), "00000000000000ff");
  EXPECT_EQ(Hex16(0x85944171f73967e8ULL), "85944171f73967e8");
}

}  // namespace
}  // namespace tpusim
