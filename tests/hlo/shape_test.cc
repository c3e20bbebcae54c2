// Shapes and layouts: construction, comparison and XLA's text form.
#include "sim/hlo/shape.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace tpusim::hlo {
namespace {

Shape WithLayout(PrimitiveType type, std::vector<int64_t> dims,
                 std::vector<int64_t> minor_to_major) {
  Shape s(type, std::move(dims));
  s.mutable_layout().mutable_minor_to_major() = std::move(minor_to_major);
  return s;
}

TEST(Shape, ArrayPrintsTypeDimensionsAndLayout) {
  EXPECT_EQ(WithLayout(PrimitiveType::kF32, {2, 3}, {1, 0}).ToString(), "f32[2,3]{1,0}");
  EXPECT_EQ(Shape(PrimitiveType::kS8, {4}).ToString(), "s8[4]");
  EXPECT_EQ(Shape(PrimitiveType::kF8E4M3FN, {}).ToString(), "f8e4m3fn[]");
}

TEST(Shape, ToStringWithoutLayoutOmitsIt) {
  Shape s = WithLayout(PrimitiveType::kBF16, {8, 128}, {1, 0});
  s.mutable_layout().tiles = {Tile{{8, 128}}, Tile{{2, 1}}};
  EXPECT_EQ(s.ToString(), "bf16[8,128]{1,0:T(8,128)(2,1)}");
  EXPECT_EQ(s.ToString(/*print_layout=*/false), "bf16[8,128]");
  EXPECT_EQ(Shape::Tuple({s, Shape::Token()}).ToString(false), "(bf16[8,128], token[])");
}

TEST(Shape, ScalarLayoutWithExtrasHasEmptyMinorToMajorThenColon) {
  Shape s(PrimitiveType::kF32, {});
  s.mutable_layout().tiles = {Tile{{128}}};
  EXPECT_EQ(s.ToString(), "f32[]{:T(128)}");
  Shape u(PrimitiveType::kU32, {});
  u.mutable_layout().memory_space = 2;
  EXPECT_EQ(u.ToString(), "u32[]{:S(2)}");
}

TEST(Shape, ScalarWithEmptyLayoutKeepsBracesSoThePresenceRoundTrips) {
  Shape s(PrimitiveType::kF32, {});
  s.mutable_layout();
  EXPECT_EQ(s.ToString(), "f32[]{}");
  EXPECT_EQ(Shape(PrimitiveType::kF32, {}).ToString(), "f32[]");
}

TEST(Shape, DynamicDimensionsPrintBoundOrQuestionMark) {
  Shape s(PrimitiveType::kS32, {4, 2});
  s.set_dynamic_dimension(0, true);
  EXPECT_EQ(s.ToString(), "s32[<=4,2]");
  EXPECT_FALSE(s.is_static());
  s.set_dynamic_dimension(0, false);
  EXPECT_TRUE(s.is_static());
  EXPECT_EQ(s.ToString(), "s32[4,2]");

  Shape u(PrimitiveType::kF32, {Shape::kUnboundedSize});
  u.set_dynamic_dimension(0, true);
  EXPECT_EQ(u.ToString(), "f32[?]");
}

TEST(Shape, TuplesTokensOpaqueAndBuffers) {
  Shape nested = Shape::Tuple({Shape(PrimitiveType::kS32, {}), Shape::Token()});
  Shape t = Shape::Tuple({WithLayout(PrimitiveType::kF32, {2}, {0}), nested});
  EXPECT_EQ(t.ToString(), "(f32[2]{0}, (s32[], token[]))");
  EXPECT_EQ(Shape::Tuple({}).ToString(), "()");
  EXPECT_EQ(Shape::Opaque().ToString(), "opaque[]");
  EXPECT_TRUE(Shape(PrimitiveType::kToken, {}).IsToken());
  Shape b = Shape::Buffer(Shape(PrimitiveType::kF32, {4, 16}));
  EXPECT_TRUE(b.IsBuffer());
  EXPECT_EQ(b.ToString(), "b(f32[4,16])");
}

TEST(Shape, LayoutExtrasPrintInXlaOrderAndOnlyWhenNotDefault) {
  Shape s = WithLayout(PrimitiveType::kS4, {8, 128}, {1, 0});
  Layout& l = s.mutable_layout();
  l.dim_level_types = {"D", "C+"};
  l.tiles = {Tile{{Tile::kCombinedDimension, 128}}, Tile{{8, 1}}};
  l.tail_padding_alignment_in_elements = 4;
  l.index_primitive_type = PrimitiveType::kU16;
  l.pointer_primitive_type = PrimitiveType::kU32;
  l.element_size_in_bits = 4;
  l.memory_space = 1;
  l.split_configs = {SplitConfig{0, {10, 20}}, SplitConfig{1, {5}}};
  Shape physical = WithLayout(PrimitiveType::kS4, {1024}, {0});
  l.physical_shape = std::make_unique<Shape>(physical);
  l.dynamic_shape_metadata_prefix_bytes = 8;
  EXPECT_EQ(s.ToString(),
            "s4[8,128]{1,0:D(D,C+)T(*,128)(8,1)L(4)#(u16)*(u32)E(4)S(1)SC(0:10,20)(1:5)"
            "P(s4[1024]{0})M(8)}");
  EXPECT_TRUE(l.HasExtras());
  EXPECT_FALSE(Layout({1, 0}).HasExtras());
}

TEST(Shape, ElementCountIsTheProductAndSaturates) {
  EXPECT_EQ(Shape(PrimitiveType::kF32, {}).element_count(), 1);
  EXPECT_EQ(Shape(PrimitiveType::kF32, {2, 3, 4}).element_count(), 24);
  EXPECT_EQ(Shape(PrimitiveType::kF32, {25769803776}).element_count(), 25'769'803'776);
  EXPECT_EQ(Shape(PrimitiveType::kF32, {0, std::numeric_limits<int64_t>::max()}).element_count(),
            0);
  EXPECT_EQ(Shape(PrimitiveType::kF32, {int64_t{1} << 40, int64_t{1} << 40}).element_count(),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Shape(PrimitiveType::kF32, {Shape::kUnboundedSize, 2}).element_count(),
            std::numeric_limits<int64_t>::max());
}

/// `shape` with tiles `tiles` (outermost first) added to its layout.
Shape Tiled(Shape shape, std::vector<std::vector<int64_t>> tiles) {
  for (std::vector<int64_t>& t : tiles) shape.mutable_layout().tiles.push_back(Tile{std::move(t)});
  return shape;
}

TEST(Shape, PhysicalBitsPadToEveryTileInTurn) {
  const Shape f32 = WithLayout(PrimitiveType::kF32, {3, 5}, {1, 0});
  EXPECT_EQ(PhysicalBits(f32), 3 * 5 * 32);
  EXPECT_EQ(PhysicalBits(Tiled(f32, {{8, 128}})), 8 * 128 * 32);
  // Physical order: {0,1} puts dimension 0 (3) minor, padded to 128.
  EXPECT_EQ(PhysicalBits(Tiled(WithLayout(PrimitiveType::kF32, {3, 5}, {0, 1}), {{8, 128}})),
            8 * 128 * 32);
  EXPECT_EQ(PhysicalBits(Tiled(WithLayout(PrimitiveType::kF32, {20, 5}, {0, 1}), {{8, 128}})),
            8 * 128 * 32);
  // A later tile splits the tiled shape's minor dimensions: (2,1) divides
  // (8,128), (3,1) pads each 8-row tile to 9 rows, and a 1-D tile beyond pads
  // the (3,1) tile's single column to 4. The rank-1 bf16 layout's (2,1)
  // splits the 8 tiles of 128 its (1024)(128) makes: nothing is padded.
  const Shape bf16 = WithLayout(PrimitiveType::kBF16, {16, 256}, {1, 0});
  EXPECT_EQ(PhysicalBits(Tiled(bf16, {{8, 128}, {2, 1}})), 16 * 256 * 16);
  EXPECT_EQ(PhysicalBits(Tiled(bf16, {{8, 128}, {3, 1}})), 18 * 256 * 16);
  EXPECT_EQ(PhysicalBits(Tiled(bf16, {{8, 128}, {3, 1}, {4}})), 18 * 256 * 4 * 16);
  const Shape vector = WithLayout(PrimitiveType::kBF16, {4096}, {0});
  EXPECT_EQ(PhysicalBits(Tiled(vector, {{1024}, {128}, {2, 1}})), 4096 * 16);
  EXPECT_EQ(PhysicalBits(Tiled(WithLayout(PrimitiveType::kBF16, {1000}, {0}),
                               {{1024}, {128}, {2, 1}})),
            1024 * 16);
  // Past 2^63 bits, whichever tile takes it there.
  EXPECT_EQ(PhysicalBits(Tiled(f32, {{int64_t{1} << 32, int64_t{1} << 32}})), std::nullopt);
  EXPECT_EQ(PhysicalBits(Tiled(f32, {{8, 128}, {2, 1}, {int64_t{1} << 32, int64_t{1} << 32}})),
            std::nullopt);
}

TEST(Shape, CompatibleIgnoresLayoutsButEqualityDoesNot) {
  Shape a = WithLayout(PrimitiveType::kF32, {2, 3}, {1, 0});
  Shape b = WithLayout(PrimitiveType::kF32, {2, 3}, {0, 1});
  Shape c(PrimitiveType::kF32, {2, 3});
  EXPECT_TRUE(a.Compatible(b));
  EXPECT_TRUE(a.Compatible(c));
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(a == c);
  EXPECT_TRUE(a == WithLayout(PrimitiveType::kF32, {2, 3}, {1, 0}));
  EXPECT_FALSE(a.Compatible(Shape(PrimitiveType::kF16, {2, 3})));
  EXPECT_FALSE(a.Compatible(Shape::Tuple({a})));
  EXPECT_TRUE(Shape::Tuple({a, Shape::Token()}).Compatible(Shape::Tuple({c, Shape::Token()})));
  Shape d = c;
  d.set_dynamic_dimension(1, true);
  EXPECT_FALSE(c.Compatible(d));
}

TEST(Layout, CopyIsDeepAndComparesPhysicalShapeByValue) {
  Layout a({0});
  a.physical_shape = std::make_unique<Shape>(PrimitiveType::kS32, std::vector<int64_t>{7});
  Layout b = a;
  ASSERT_NE(b.physical_shape, nullptr);
  EXPECT_NE(b.physical_shape.get(), a.physical_shape.get());
  EXPECT_TRUE(a == b);
  b.physical_shape->mutable_dimensions()[0] = 8;
  EXPECT_FALSE(a == b);
  Layout c;
  c = a;
  EXPECT_TRUE(c == a);
  c.physical_shape.reset();
  EXPECT_FALSE(c == a);
}

}  // namespace
}  // namespace tpusim::hlo
