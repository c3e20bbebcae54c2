// ForeignPlatformOf: the backend a module's custom calls and fusion kinds
// belong to, when it is not TPU.
#include "sim/hlo/platform.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "sim/hlo/instruction.h"
#include "sim/hlo/parser.h"

namespace tpusim::hlo {
namespace {

std::unique_ptr<HloModule> Parse(const std::string& text) {
  StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "m.hlo");
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(*module) : nullptr;
}

TEST(ForeignPlatform, GpuAndNeuronCustomCallsNameTheirBackend) {
  const auto gpu = Parse(R"(HloModule m
ENTRY e {
  a = f32[4,4] parameter(0)
  s = f32[4,4] custom-call(a), custom_call_target="Sharding"
  g = f32[4,4] custom-call(s), custom_call_target="__cublas$gemm"
  ROOT f = f32[4,4] custom-call(g), custom_call_target="te_fused_attn_forward_ffi"
})");
  ASSERT_NE(gpu, nullptr);
  const std::optional<ForeignPlatform> found = ForeignPlatformOf(*gpu);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->platform, "GPU");
  EXPECT_EQ(found->first->name(), "g");  // Sharding is a TPU/SPMD marker, not a GPU kernel
  EXPECT_EQ(found->evidence, "custom call '__cublas$gemm'");
  EXPECT_EQ(found->instructions, 2);

  const auto neuron = Parse(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT g = f32[4] custom-call(a), custom_call_target="AwsNeuronGelu"
})");
  ASSERT_NE(neuron, nullptr);
  ASSERT_TRUE(ForeignPlatformOf(*neuron).has_value());
  EXPECT_EQ(ForeignPlatformOf(*neuron)->platform, "AWS Neuron");
}

TEST(ForeignPlatform, TritonFusionKindIsGpu) {
  const auto module = Parse(R"(HloModule m
fused {
  a = f32[4,4] parameter(0)
  ROOT d = f32[4,4] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  a = f32[4,4] parameter(0)
  ROOT f = f32[4,4] fusion(a), kind=kCustom, calls=fused, backend_config={"fusion_backend_config":{"kind":"__triton_gemm"}}
})");
  ASSERT_NE(module, nullptr);
  const std::optional<ForeignPlatform> found = ForeignPlatformOf(*module);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->platform, "GPU");
  EXPECT_EQ(found->evidence, "fusion kind \"__triton_gemm\"");
}

TEST(ForeignPlatform, TpuModulesShowNone) {
  const auto module = Parse(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  h = f32[4] custom-call(a), custom_call_target="MoveToHost"
  ROOT k = f32[4] custom-call(h), custom_call_target="tpu_custom_call", backend_config="{}"
})");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(ForeignPlatformOf(*module).has_value());
}

}  // namespace
}  // namespace tpusim::hlo
