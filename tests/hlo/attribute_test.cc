// Attribute names, kinds and iota tile assignments.
#include "sim/hlo/attribute.h"

#include <gtest/gtest.h>

namespace tpusim::hlo {
namespace {

TEST(Attribute, EveryKnownNameMapsBackToItsId) {
  for (int i = 0; i < static_cast<int>(AttrId::kUnknown); ++i) {
    const AttrId id = static_cast<AttrId>(i);
    EXPECT_EQ(AttrIdFromName(AttrName(id)), id) << AttrName(id);
  }
}

TEST(Attribute, UnknownNamesAndPrefixesAreUnknown) {
  EXPECT_EQ(AttrIdFromName("output_to_operand_aliasing"), AttrId::kUnknown);
  EXPECT_EQ(AttrIdFromName(""), AttrId::kUnknown);
  EXPECT_EQ(AttrIdFromName("dimension"), AttrId::kUnknown);
  EXPECT_EQ(AttrIdFromName("dimensionsx"), AttrId::kUnknown);
  EXPECT_EQ(AttrIdFromName("zzz"), AttrId::kUnknown);
  EXPECT_EQ(AttrName(AttrId::kUnknown), "");
}

TEST(Attribute, KindsComeFromTheTable) {
  EXPECT_EQ(AttrIdFromName("dimensions"), AttrId::kDimensions);
  EXPECT_EQ(AttrKindOf(AttrId::kDimensions), AttrKind::kIntList);
  EXPECT_EQ(AttrIdFromName("type"), AttrId::kComparisonType);
  EXPECT_EQ(AttrKindOf(AttrId::kWindow), AttrKind::kWindow);
  EXPECT_EQ(AttrKindOf(AttrId::kUnknown), AttrKind::kRaw);
  Attribute raw;
  raw.unknown_name = "foo";
  EXPECT_EQ(raw.kind(), AttrKind::kRaw);
  EXPECT_EQ(raw.spelling(), "foo");
}

TEST(IotaTileAssignment, WithoutTransposeIsIota) {
  IotaTileAssignment iota{{2, 4}, {8}, {}};
  EXPECT_EQ(iota.Expand(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(IotaTileAssignment, TransposeReordersTheReshapedIota) {
  // [2,4]<=[4,2]T(1,0): iota(8) as 4x2 {{0,1},{2,3},{4,5},{6,7}}, transposed
  // to 2x4 {{0,2,4,6},{1,3,5,7}}.
  IotaTileAssignment iota{{2, 4}, {4, 2}, {1, 0}};
  EXPECT_EQ(iota.Expand(), (std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7}));
}

TEST(IotaTileAssignment, ThreeDimensionalTranspose) {
  // [2,3,2]<=[3,2,2]T(1,0,2): element (i,j,k) of the result is iota element
  // (j,i,k) of the 3x2x2 array, i.e. 4j + 2i + k.
  IotaTileAssignment iota{{2, 3, 2}, {3, 2, 2}, {1, 0, 2}};
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 2; ++k) expected.push_back(4 * j + 2 * i + k);
    }
  }
  EXPECT_EQ(iota.Expand(), expected);
}

TEST(IotaTileAssignment, MalformedPermutationExpandsToNothing) {
  EXPECT_TRUE((IotaTileAssignment{{4}, {2, 2}, {0, 0}}.Expand().empty()));
  EXPECT_TRUE((IotaTileAssignment{{4}, {2, 2}, {0}}.Expand().empty()));
  EXPECT_TRUE((IotaTileAssignment{{4}, {2, 2}, {0, 2}}.Expand().empty()));
  EXPECT_TRUE((IotaTileAssignment{{4}, {-2, -2}, {}}.Expand().empty()));
}

}  // namespace
}  // namespace tpusim::hlo
