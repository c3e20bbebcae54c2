// The validation suite's pieces: the measurement CSV reader, the suite file,
// the HLO each kind of published workload becomes, and the error statistics.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "harness/validate/measurement.h"
#include "harness/validate/suite.h"
#include "harness/validate/validation.h"
#include "harness/validate/workload_hlo.h"
#include "sim/hlo/parser.h"
#include "sim/hlo/verifier.h"

namespace tpusim::harness {
namespace {

constexpr char kHeader[] =
    "id,chip,devices,devices_per_chip,topology,op,dtype,shapes,groups,measured_us,statistic,"
    "source,note\n";

/// A file in a fresh temporary directory, removed at the end of the test.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text) {
    char dir[] = "/tmp/tpusim_validate_test.XXXXXX";
    dir_ = mkdtemp(dir);
    path_ = (dir_ / name).string();
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove_all(dir_); }
  const std::string& path() const { return path_; }

 private:
  std::filesystem::path dir_;
  std::string path_;
};

Measurement Row(const std::string& op, const std::string& shapes, const std::string& note = "",
                const std::string& dtype = "f16") {
  Measurement m;
  m.id = "row-1";
  m.chip = "tpu-v4";
  m.op = op;
  m.shapes = shapes;
  m.note = note;
  m.dtype = dtype;
  m.measured_us = 1;
  m.where = "test.csv:2";
  return m;
}

/// The workload of `m` parses and verifies, and names an instruction it has.
void ExpectValidModule(const Measurement& m) {
  StatusOr<Workload> w = WorkloadFor(m);
  ASSERT_TRUE(w.ok()) << w.status().message();
  StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(w->hlo_text, "gen.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message() << "\n" << w->hlo_text;
  const Status verified = hlo::VerifyModule(**module);
  EXPECT_TRUE(verified.ok()) << verified.message() << "\n" << w->hlo_text;
  if (!w->timed_instruction.empty()) {
    EXPECT_NE(w->hlo_text.find("ROOT " + w->timed_instruction + " = "), std::string::npos)
        << w->hlo_text;
  }
}

TEST(Measurements, ReadsQuotedFieldsAndEveryColumn) {
  TempFile f("m.csv", std::string(kHeader) +
                          "a-1,tpu-v4,1,1,\"slice, one chip\",add,f16,\"f16[8],f16[8] -> f16[8]\",,"
                          "1.5,mean,src,\"say \"\"hi\"\"\"\n\n"
                          "a-2,tpu-v7x,1,2,2x2x1,copy,bf16,bf16[4] -> bf16[4],,2e1,p50,src,\n");
  StatusOr<std::vector<Measurement>> rows = LoadMeasurements(f.path());
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].topology, "slice, one chip");
  EXPECT_EQ((*rows)[0].shapes, "f16[8],f16[8] -> f16[8]");
  EXPECT_EQ((*rows)[0].note, "say \"hi\"");
  EXPECT_DOUBLE_EQ((*rows)[0].measured_us, 1.5);
  EXPECT_EQ((*rows)[0].where, f.path() + ":2");
  EXPECT_EQ((*rows)[1].devices_per_chip, 2);
  EXPECT_DOUBLE_EQ((*rows)[1].measured_us, 20);
  EXPECT_EQ((*rows)[1].where, f.path() + ":4");
}

TEST(Measurements, LocatedErrors) {
  const auto error = [](const std::string& text) {
    TempFile f("bad.csv", text);
    StatusOr<std::vector<Measurement>> rows = LoadMeasurements(f.path());
    EXPECT_FALSE(rows.ok());
    std::string message = rows.ok() ? "" : rows.status().message();
    const size_t at = message.find("bad.csv");
    return at == std::string::npos ? message : message.substr(at);
  };
  EXPECT_EQ(error("id,chip\n"), "bad.csv:1:1: error: the header has no column 'devices'");
  EXPECT_EQ(error(std::string(kHeader) + "a,tpu-v4,1,1,t,add,f16,s,,fast,m,s,n\n"),
            "bad.csv:2:27: error: column 'measured_us': expected a positive number of "
            "microseconds, got 'fast'");
  EXPECT_EQ(error(std::string(kHeader) + "a,tpu-v4,1,1,t,add,f16,s,,-1,m,s,n\n"),
            "bad.csv:2:27: error: column 'measured_us': expected a positive number of "
            "microseconds, got '-1'");
  EXPECT_EQ(error(std::string(kHeader) + "a,tpu-v4,0,1,t,add,f16,s,,1,m,s,n\n"),
            "bad.csv:2:10: error: column 'devices': expected a positive integer, got '0'");
  EXPECT_EQ(error(std::string(kHeader) + "a,tpu-v4,1\n"),
            "bad.csv:2:1: error: the row has 3 fields; expected a 'devices_per_chip' field "
            "(column 4)");
  EXPECT_EQ(error(std::string(kHeader) + "a,tpu-v4,1,1,\"open\n"),
            "bad.csv:2:14: error: unterminated quoted field (expected a closing '\"')");
  EXPECT_EQ(error(std::string(kHeader) + "a,tpu-v4,1,1,t,add,f16,s,,1,m,s,n\n" +
                  "a,tpu-v4,1,1,t,add,f16,s,,1,m,s,n\n"),
            "bad.csv:3:1: error: column 'id': duplicate id 'a'");
}

TEST(ValidationSuiteFile, LoadsFamiliesRelativeToItself) {
  TempFile f("s.validation.yaml",
             "families:\n  - name: mm\n    file: mm.csv\n    chip: tpu-v4\n    max_mape: 12%\n"
             "    target_mape: 8%\n");
  StatusOr<ValidationSuite> suite = LoadValidationSuite(f.path());
  ASSERT_TRUE(suite.ok()) << suite.status().message();
  ASSERT_EQ(suite->families.size(), 1u);
  EXPECT_EQ(suite->families[0].file,
            (std::filesystem::path(f.path()).parent_path() / "mm.csv").string());
  EXPECT_DOUBLE_EQ(suite->families[0].max_mape, 12);
  EXPECT_DOUBLE_EQ(suite->families[0].target_mape, 8);
}

TEST(ValidationSuiteFile, LocatedErrors) {
  const auto error = [](const std::string& text) {
    TempFile f("s.validation.yaml", text);
    StatusOr<ValidationSuite> suite = LoadValidationSuite(f.path());
    EXPECT_FALSE(suite.ok());
    std::string message = suite.ok() ? "" : suite.status().message();
    const size_t at = message.find("s.validation.yaml");
    return at == std::string::npos ? message : message.substr(at);
  };
  EXPECT_EQ(error("families:\n  - name: mm\n    file: a.csv\n    chip: tpu-v4\n    max_mape: 5%\n"
                  "    target_mape: 5%\n    bound: 3\n"),
            "s.validation.yaml:7:5: error: key path `families[0].bound`: unknown key (known: "
            "name, file, chip, description, max_mape, target_mape)");
  EXPECT_EQ(error("families:\n  - name: mm\n    file: a.csv\n    chip: tpu-v4\n    max_mape: lots\n"
                  "    target_mape: 5%\n"),
            "s.validation.yaml:5:15: error: key path `families[0].max_mape`: expected a positive "
            "percentage such as '8%', got 'lots'");
  // A bare number is refused: "8" could be 8% or 800%.
  EXPECT_EQ(error("families:\n  - name: mm\n    file: a.csv\n    chip: tpu-v4\n    max_mape: 8\n"
                  "    target_mape: 5%\n"),
            "s.validation.yaml:5:15: error: key path `families[0].max_mape`: expected a positive "
            "percentage such as '8%', got '8'");
  EXPECT_EQ(
      error("families:\n  - name: mm\n    file: a.csv\n    max_mape: 1%\n    target_mape: 1%\n"),
      "s.validation.yaml:2:5: error: key path `families[0]`: missing key 'chip'");
  EXPECT_EQ(error("families: []\n"),
            "s.validation.yaml:1:11: error: key path `families`: expected a non-empty list of "
            "families");
}

TEST(Workload, EveryPublishedKindBecomesAValidModule) {
  ExpectValidModule(Row("dot", "f16[112,128]xf16[128,96] -> f16[112,96]"));
  ExpectValidModule(
      Row("dot", "bf16[256,256]xbf16[256,256] -> bf16[256,256]", "", "bf16 in, f32 acc, bf16 out"));
  for (const char* op : {"add", "subtract", "multiply", "divide"}) {
    ExpectValidModule(Row(op, "f16[8,24,40],f16[8,24,40] -> f16[8,24,40]"));
  }
  ExpectValidModule(Row("copy", "bf16[1048576] -> bf16[1048576]"));
  ExpectValidModule(Row("tanh", "f16[896,896] -> f16[896,896]"));
  for (const char* activation :
       {"relu", "sigmoid", "leaky_relu", "parametric_relu", "elu", "selu"}) {
    ExpectValidModule(
        Row("fusion[f]", "f16[64,448] -> f16[64,448]", std::string("jnp ") + activation + ": ..."));
  }
  ExpectValidModule(Row("fusion[compare_select_fusion]", "f16[256,256] -> f32[256,256]",
                        "jnp binary_step: where(x>0.0, 1.0, 0.0)"));
  ExpectValidModule(Row("fusion[convert_multiply_fusion]", "f16[2,8,16,16] -> f32[2,8,16,16]",
                        "batch_norm_simple_inference axis=1"));
  ExpectValidModule(Row("module[layer_norm]", "f16[2,128,512] -> f32[2,128,512]"));
  ExpectValidModule(Row("module[rms_norm]", "f16[1,128,1024] -> f32[1,128,1024]"));
  ExpectValidModule(Row("reduce-window",
                        "f16[1,64,128,128] -> f16[1,64,64,64] window=size=1x1x2x2 "
                        "stride=1x1x2x2 (VALID), to_apply=add"));
}

TEST(Workload, MatmulIsAnOutputFusionAroundAConvolution) {
  StatusOr<Workload> w = WorkloadFor(
      Row("dot", "bf16[128,128]xbf16[128,128] -> bf16[128,128]", "", "bf16 in, f32 acc, bf16 out"));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->timed_instruction, "fusion");
  EXPECT_NE(w->hlo_text.find("convolution = f32[128,128]{1,0:T(8,128)} convolution(param_0, "
                             "param_1), dim_labels=bf_io->bf"),
            std::string::npos)
      << w->hlo_text;
  EXPECT_NE(
      w->hlo_text.find("ROOT convert = bf16[128,128]{1,0:T(8,128)(2,1)} convert(convolution)"),
      std::string::npos);
  EXPECT_NE(w->hlo_text.find("kind=kOutput"), std::string::npos);
  // Batched: a dot with the leading dimensions as batch dimensions.
  const Measurement batched =
      Row("dot", "bf16[4,2,256,128]xbf16[4,2,128,64] -> f32[4,2,256,64]", "", "bf16");
  ExpectValidModule(batched);
  w = WorkloadFor(batched);
  ASSERT_TRUE(w.ok());
  EXPECT_NE(
      w->hlo_text.find("dot(param_0, param_1), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, "
                       "rhs_batch_dims={0,1}, rhs_contracting_dims={2}"),
      std::string::npos)
      << w->hlo_text;
  EXPECT_FALSE(WorkloadFor(Row("dot", "f16[2,8,4]xf16[3,4,8] -> f16[2,8,8]")).ok());
  // The precision `dtype` states, as jax.lax.Precision names it.
  const std::string f32 = "f32[256,256]xf32[256,256] -> f32[256,256]";
  w = WorkloadFor(Row("dot", f32, "", "f32 HIGHEST"));
  ASSERT_TRUE(w.ok());
  EXPECT_NE(w->hlo_text.find("dim_labels=bf_io->bf, operand_precision={highest,highest}"),
            std::string::npos)
      << w->hlo_text;
  w = WorkloadFor(Row("dot", f32, "", "f32, HIGH"));
  ASSERT_TRUE(w.ok());
  EXPECT_NE(w->hlo_text.find("operand_precision={high,high}"), std::string::npos) << w->hlo_text;
  w = WorkloadFor(Row("dot", f32, "", "f32"));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->hlo_text.find("operand_precision"), std::string::npos) << w->hlo_text;
  ExpectValidModule(Row("dot", f32, "", "f32 HIGHEST"));
}

TEST(Workload, PoolingReadsItsOperandInTheResultsLayout) {
  // [1,128,384,384] pools to [1,128,192,192], whose least-padding layout puts
  // the channels on the lanes; XLA copies the operand into that layout before
  // the timed reduce-window (the published rows name that copy), so the
  // generated operand is already there, not in the parameter's row-major one.
  StatusOr<Workload> w = WorkloadFor(Row("reduce-window",
                                         "f16[1,128,384,384] -> f16[1,128,192,192] "
                                         "window=size=1x1x2x2 stride=1x1x2x2 (VALID), "
                                         "to_apply=add"));
  ASSERT_TRUE(w.ok());
  EXPECT_NE(w->hlo_text.find("x = f16[1,128,384,384]{1,3,2,0:T(8,128)(2,1)} parameter(0)"),
            std::string::npos)
      << w->hlo_text;
  EXPECT_NE(w->hlo_text.find("ROOT reduce-window = f16[1,128,192,192]{1,3,2,0:T(8,128)(2,1)}"),
            std::string::npos);
}

TEST(Workload, LayoutsPutTheDimensionThatPadsLeastOnTheLanes) {
  // Row-major would pad the minor 8 to 128 lanes (16x); the 128 goes there instead.
  StatusOr<Workload> w = WorkloadFor(Row("add", "f16[128,8,8],f16[128,8,8] -> f16[128,8,8]"));
  ASSERT_TRUE(w.ok());
  EXPECT_NE(w->hlo_text.find("f16[128,8,8]{0,2,1:T(8,128)(2,1)}"), std::string::npos)
      << w->hlo_text;
  // Already unpadded: row-major stays.
  w = WorkloadFor(Row("add", "f16[256,128],f16[256,128] -> f16[256,128]"));
  ASSERT_TRUE(w.ok());
  EXPECT_NE(w->hlo_text.find("f16[256,128]{1,0:T(8,128)(2,1)}"), std::string::npos);
  // Rank 1: linear tiles.
  w = WorkloadFor(Row("copy", "bf16[4096] -> bf16[4096]"));
  ASSERT_TRUE(w.ok());
  EXPECT_NE(w->hlo_text.find("bf16[4096]{0:T(1024)(128)(2,1)}"), std::string::npos);
}

/// A collective row across `devices` devices.
Measurement CollectiveRow(const std::string& op, const std::string& shapes,
                          const std::string& groups = "", int64_t devices = 8) {
  Measurement m = Row(op, shapes, "", "bf16");
  m.chip = "tpu-v7x";
  m.devices = devices;
  m.devices_per_chip = 2;
  m.topology = "2x2x1";
  m.groups = groups;
  return m;
}

TEST(Workload, CollectivesSpanTheRowsDevicesInItsGroups) {
  ExpectValidModule(CollectiveRow("all-gather", "bf16[1024,256] -> bf16[1024,2048]"));
  ExpectValidModule(CollectiveRow("all-reduce", "f32[4096] -> f32[4096]"));
  ExpectValidModule(CollectiveRow("reduce-scatter", "bf16[8192,128] -> bf16[1024,128]"));
  ExpectValidModule(CollectiveRow("all-to-all", "bf16[64,1024] -> bf16[64,1024]"));
  ExpectValidModule(
      CollectiveRow("collective-permute", "f32[1024] -> f32[1024]", "{{0,1},{1,0}}", 2));

  // No groups: one group of every device; the gathered dimension is the one
  // the op resizes.
  StatusOr<Workload> w = WorkloadFor(CollectiveRow("all-gather", "bf16[16,256] -> bf16[16,2048]"));
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_TRUE(w->collective);
  EXPECT_EQ(w->timed_instruction, "all-gather");
  EXPECT_NE(w->hlo_text.find("HloModule row_1, num_partitions=8"), std::string::npos)
      << w->hlo_text;
  EXPECT_NE(w->hlo_text.find("all-gather(x), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, "
                             "use_global_device_ids=true, dimensions={1}"),
            std::string::npos)
      << w->hlo_text;
  // Stated groups and dimension; sums reduce with add over the element type.
  w = WorkloadFor(CollectiveRow("reduce-scatter", "f32[64,512] -> f32[64,128] dimensions={1}",
                                "{{0,1,2,3},{4,5,6,7}}"));
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_NE(w->hlo_text.find("replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true, "
                             "to_apply=add_f32, dimensions={1}"),
            std::string::npos)
      << w->hlo_text;
  EXPECT_NE(w->hlo_text.find("ROOT add = f32[] add(a, b)"), std::string::npos);
  ExpectValidModule(CollectiveRow("all-to-all", "bf16[64,1024] -> bf16[64,1024] dimensions={1}"));

  // What a collective row must say.
  w = WorkloadFor(CollectiveRow("all-reduce", "f32[64] -> f32[64]", "", 1));
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "test.csv:2: error: row 'row-1': 'all-reduce' needs devices >= 2");
  w = WorkloadFor(CollectiveRow("collective-permute", "f32[64] -> f32[64]"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("needs its source_target_pairs in `groups`"),
            std::string::npos);
  w = WorkloadFor(CollectiveRow("all-to-all", "f32[64] -> f32[64] dimensions={1}"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("dimensions={1} is out of the operand's rank 1"),
            std::string::npos);
  // Not a collective: timed on one device, without a network.
  w = WorkloadFor(Row("copy", "bf16[4096] -> bf16[4096]"));
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE(w->collective);
}

TEST(Workload, UnknownKindsAndBadShapesAreNamed) {
  StatusOr<Workload> w = WorkloadFor(Row("sort", "f32[8] -> f32[8]"));
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(w.status().message(), "test.csv:2: error: row 'row-1': no HLO generator for op 'sort'");
  w = WorkloadFor(Row("fusion[x]", "f16[8] -> f16[8]", "jnp softplus: log(1+exp(x))"));
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "test.csv:2: error: row 'row-1': no HLO generator for 'fusion[x]' (softplus)");
  w = WorkloadFor(Row("dot", "f16[8,4]xf16[5,8] -> f16[8,8]"));
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
}

TEST(ValidationStats, MapeBiasMedianMaxAndLogCorrelation) {
  std::vector<ValidationRow> rows(4);
  const double measured[] = {1, 2, 4, 8};
  const double predicted[] = {1.1, 1.8, 4, 10};  // errors +10%, -10%, 0%, +25%
  std::vector<const ValidationRow*> pointers;
  for (int i = 0; i < 4; ++i) {
    rows[i].measurement.measured_us = measured[i];
    rows[i].predicted_us = predicted[i];
    pointers.push_back(&rows[i]);
  }
  ValidationRow skipped;
  skipped.skipped = "no generator";
  pointers.push_back(&skipped);
  const FamilyStats s = ComputeStats(pointers);
  EXPECT_EQ(s.rows, 4);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_NEAR(s.mape, 11.25, 1e-9);
  EXPECT_NEAR(s.bias, 6.25, 1e-9);
  EXPECT_NEAR(s.median, 10, 1e-9);
  EXPECT_NEAR(s.max, 25, 1e-9);
  EXPECT_GT(s.r2, 0.98);
  EXPECT_LT(s.r2, 1);
  // Exact predictions correlate perfectly; a bound of 0 is never exceeded.
  for (int i = 0; i < 4; ++i) rows[i].predicted_us = measured[i];
  const FamilyStats exact = ComputeStats({&rows[0], &rows[1], &rows[2], &rows[3]});
  EXPECT_NEAR(exact.r2, 1, 1e-12);
  EXPECT_EQ(exact.mape, 0);
  EXPECT_FALSE(exact.over_bound());
}

}  // namespace
}  // namespace tpusim::harness
