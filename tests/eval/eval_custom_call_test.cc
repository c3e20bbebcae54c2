// custom-call targets with public meaning, infeed and outfeed.
#include <gtest/gtest.h>

#include <string>

#include "tests/eval/eval_test_util.h"

namespace tpusim::eval {
namespace {

using testing::Eval;
using testing::R1;
using testing::TryEval;
using value::Literal;

std::string CustomCall(std::string_view target) {
  return "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = f32[2] custom-call(p), "
         "custom_call_target=\"" +
         std::string(target) + "\"\n}\n";
}

std::string CustomCall3(std::string_view target) {
  return "HloModule m\nENTRY e {\n  p = f32[3] parameter(0)\n  ROOT c = f32[3] custom-call(p), "
         "custom_call_target=\"" +
         std::string(target) + "\"\n}\n";
}

TEST(EvalCustomCall, AnnotationsPassTheirOperandThrough) {
  const Literal x = R1<float>({1.5f, -2});
  for (const char* target :
       {"Sharding", "MoveToHost", "MoveToDevice", "SPMDFullToShardShape", "SPMDShardToFullShape",
        "ShardBarrierTo", "ShardBarrierFrom", "SetBound", "annotate_device_placement",
        "LayoutConstraint", "AwsNeuronTransferWithStaticRing"}) {
    EXPECT_EQ(Eval(CustomCall(target), {x}), x) << target;
  }
}

constexpr char kDynamicGte[] = R"(HloModule m
ENTRY e {
  t = (s32[2], s32[2], s32[2]) parameter(0)
  i = s32[] parameter(1)
  ROOT g = s32[2] custom-call(t, i), custom_call_target="DynamicGte"
}
)";

TEST(EvalCustomCall, DynamicGteSelectsTheTupleElementAtARuntimeIndex) {
  std::vector<Literal> elements;
  for (int32_t base : {10, 20, 30}) elements.push_back(R1<int32_t>({base, base + 1}));
  const Literal tuple = Literal::CreateTuple(std::move(elements));
  EXPECT_EQ(Eval(kDynamicGte, {tuple, Literal::CreateR0<int32_t>(2)}), R1<int32_t>({30, 31}));
  EXPECT_EQ(Eval(kDynamicGte, {tuple, Literal::CreateR0<int32_t>(0)}), R1<int32_t>({10, 11}));
  auto outside = TryEval(kDynamicGte, {tuple, Literal::CreateR0<int32_t>(3)});
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("outside the tuple of 3"), std::string::npos);
}

TEST(EvalCustomCall, NeuronGeluIsPyTorchsExactGeluAndItsDerivative) {
  // gelu(0) = 0, gelu(1) = Phi(1) = 0.841344746..., gelu(-1) = -(1 - Phi(1));
  // gelu'(0) = 1/2, gelu'(1) = Phi(1) + phi(1) = 0.841344746 + 0.241970725.
  const Literal x = R1<float>({0, 1, -1});
  const Literal y = Eval(CustomCall3("AwsNeuronGelu"), {x});
  EXPECT_EQ(y.data<float>()[0], 0.0f);
  EXPECT_EQ(y.data<float>()[1], 0.841344746f);
  EXPECT_EQ(y.data<float>()[2], -0.158655254f);
  const Literal dy = Eval(CustomCall3("AwsNeuronGeluBackward"), {x});
  EXPECT_EQ(dy.data<float>()[0], 0.5f);
  EXPECT_EQ(dy.data<float>()[1], static_cast<float>(0.841344746068543 + 0.241970724519143));
}

TEST(EvalCustomCall, UnknownTargetIsUnimplementedNamingTargetAndLocation) {
  auto result = TryEval(CustomCall("AwsNeuronGelu2"), {R1<float>({1, 2})});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(result.status().message().find("\"AwsNeuronGelu2\""), std::string::npos);
  EXPECT_NE(result.status().message().find(":4:"), std::string::npos);  // line of the custom-call
}

TEST(EvalFeed, InfeedYieldsZerosAndOutfeedATokenAfterConsumingIt) {
  const Literal out = Eval(R"(HloModule m
ENTRY e {
  t = token[] after-all()
  in = (s32[3], token[]) infeed(t), infeed_config="x"
  d = s32[3] get-tuple-element(in), index=0
  t2 = token[] get-tuple-element(in), index=1
  o = token[] outfeed(d, t2), outfeed_config="x"
  ROOT r = (s32[3], token[]) tuple(d, o)
})");
  EXPECT_EQ(out.tuple_element(0), R1<int32_t>({0, 0, 0}));
  EXPECT_EQ(out.tuple_element(1).shape().ToString(false), "token[]");
}

}  // namespace
}  // namespace tpusim::eval
