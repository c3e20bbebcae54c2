// Structure-aware mutations of HLO text for fuzz_hlo_parser: the adversarial
// classes byte-level mutation rarely reaches (issue 18): shapes and computations
// nested past the parser's limits, dimensions and tiles near 2^31, 2^32 and
// 2^63, and operand lists thousands long.
#ifndef TPUSIM_TESTS_HLO_HLO_TEXT_MUTATOR_H_
#define TPUSIM_TESTS_HLO_HLO_TEXT_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace tpusim::test {

enum class HloMutation : uint8_t {
  kNestTupleShape,    ///< wrap a shape in tuple parentheses, up to thousands deep
  kBigDimension,      ///< a dimension of a shape becomes a huge number
  kBigNumber,         ///< any number (attributes, literals, indices) becomes a huge one
  kHugeTile,          ///< a layout gains or changes tiles, e.g. T(4294967296,4294967296)
  kNestComputations,  ///< the entry reaches a chain of calls, fusions and loops
  kDeepTupleValue,    ///< tuple instructions whose shapes nest around the depth limit
  kWideTuple,         ///< a tuple of thousands of operands
  kLongOperandList,   ///< an instruction's first operand repeated thousands of times
};
inline constexpr int kHloMutationCount = 8;

/// Applies `mutation` to `text`, with every choice (where, how deep, which
/// number) drawn from `seed`: the same arguments give the same text. Returns
/// false, leaving `text` as it was, when the text has no place for it (no
/// shape, no ENTRY) or the result would be longer than `max_size`. Names the
/// mutation adds carry a tag from `seed`, so mutating a mutant adds no
/// duplicate names. kNestComputations, kDeepTupleValue and kWideTuple keep a
/// valid module valid; the others usually make it invalid.
bool MutateHloText(HloMutation mutation, uint64_t seed, size_t max_size, std::string& text);

}  // namespace tpusim::test

#endif  // TPUSIM_TESTS_HLO_HLO_TEXT_MUTATOR_H_
