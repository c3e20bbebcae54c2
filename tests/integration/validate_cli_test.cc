// `tpusim validate` as a user runs it: the shipped suite within its bounds (the
// CI gate on the timing model's error against silicon), reports, filters,
// a bound that fails, and bad input.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

const std::string kSuite =
    std::string(TPUSIM_SOURCE_DIR) + "/scenarios/validation/tpu.validation.yaml";

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ValidateCli, TheShippedSuiteIsWithinItsBoundsOnEveryRow) {
  ScratchDir dir;
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"validate", kSuite, "-j", "2", "--json", dir / "v.json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json doc = nlohmann::json::parse(ReadText(dir / "v.json"));
  EXPECT_EQ(doc["rows"].size(), 6676u);
  for (const auto& family : doc["families"]) {
    EXPECT_EQ(family["skipped"], 0) << family.dump();
    if (family["name"] != "all") {
      EXPECT_FALSE(family["over_bound"].get<bool>()) << family.dump();
    }
  }
  // The table names every family run, and the worst rows say what bounded them.
  for (const auto& family : doc["families"]) {
    EXPECT_NE(r.out.find(family["name"].get<std::string>()), std::string::npos) << family.dump();
  }
  EXPECT_EQ(doc["families"].size(), 11u);  // and "all"
  EXPECT_NE(r.out.find("Worst 10 rows by |error|:"), std::string::npos);
}

TEST(ValidateCli, ReportHasOneScatterPointPerRow) {
  ScratchDir dir;
  const RunResult r = RunBinary(
      TPUSIM_BINARY, {"validate", kSuite, "--chip", "tpu-v7x", "--report", dir / "report"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string html = ReadText(dir / "report/index.html");
  EXPECT_NE(html.find("Predicted against measured time (us), log-log"), std::string::npos);
  EXPECT_EQ(Count(html, "<circle"), 18u);  // 13 copies + 5 GEMMs
  EXPECT_NE(html.find("hbm-copy-v7x (13)"), std::string::npos);
  EXPECT_NE(html.find("matmul-v7x (5)"), std::string::npos);
}

TEST(ValidateCli, AFamilyOverItsBoundExitsOne) {
  ScratchDir dir;
  const std::string suite = dir / "tight.validation.yaml";
  WriteText(suite, "families:\n  - name: copy\n    file: " + std::string(TPUSIM_SOURCE_DIR) +
                       "/scenarios/validation/hbm_copy_tpu7x.csv\n    chip: tpu-v7x\n"
                       "    max_mape: 0.001%\n    target_mape: 0.001%\n");
  const RunResult r = RunBinary(TPUSIM_BINARY, {"validate", suite});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("FAIL (over bound)"), std::string::npos) << r.out;
}

// A row the model cannot time fails its family, whatever the error of the
// others: a row that stops running must not make the family look better.
TEST(ValidateCli, AFamilyWithAnUntimedRowExitsOne) {
  ScratchDir dir;
  const std::string header =
      "id,chip,devices,devices_per_chip,topology,op,dtype,shapes,groups,measured_us,statistic,"
      "source,note\n";
  WriteText(dir / "rows.csv",
            header +
                "ok-1,tpu-v7x,1,2,one core,copy,bf16,bf16[1048576] -> bf16[1048576],,3.04,one run,"
                "test,a copy\n"
                "odd-1,tpu-v7x,1,2,one core,sort,bf16,bf16[1024] -> bf16[1024],,9,one run,test,"
                "no generator\n");
  const std::string suite = dir / "s.validation.yaml";
  WriteText(suite, "families:\n  - name: mixed\n    file: rows.csv\n    chip: tpu-v7x\n"
                   "    max_mape: 50%\n    target_mape: 50%\n");
  const RunResult r = RunBinary(TPUSIM_BINARY, {"validate", suite});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.out.find("FAIL (rows skipped)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("odd-1: " + dir / "rows.csv"), std::string::npos) << r.out;
}

// Collective rows of every kind, on slices written as the published files
// write them: timed on the row's network with its devices per chip, and a row
// whose devices do not fit its slice goes untimed without taking the rest of
// its process's one SystemC run with it (-j 1: every row in one process).
TEST(ValidateCli, CollectiveRowsAreTimedOnTheirSlice) {
  ScratchDir dir;
  const std::string header =
      "id,chip,devices,devices_per_chip,topology,op,dtype,shapes,groups,measured_us,statistic,"
      "source,note\n";
  const std::string gather = "\"bf16[1024,1024] -> bf16[8192,1024]\"";
  WriteText(dir / "rows.csv",
            header + "ag-2pc,tpu-v7x,8,2,tpu7x-8 (2x2x1 slice),all-gather,bf16," + gather +
                ",,100,p50,test,\n"
                "ag-1pc,tpu-v7x,8,1,2x2x2,all-gather,bf16," +
                gather +
                ",,100,p50,test,\n"
                "ag-4,tpu-v7x,4,1,2x2x1,all-gather,bf16,\"bf16[2048,1024] -> bf16[8192,1024]\",,"
                "100,p50,test,\n"
                "misfit,tpu-v7x,8,1,mesh:2x2x1,all-gather,bf16," +
                gather +
                ",,100,p50,test,\n"
                "rs,tpu-v7x,8,2,2x2x1,reduce-scatter,bf16,\"bf16[8192,1024] -> bf16[1024,1024]\","
                ",100,p50,test,\n"
                "ar,tpu-v7x,8,2,2x2x1,all-reduce,f32,\"f32[1024,1024] -> f32[1024,1024]\","
                "\"{{0,1},{2,3},{4,5},{6,7}}\",100,p50,test,\n"
                "a2a,tpu-v7x,8,2,torus:2x2x1,all-to-all,bf16,\"bf16[8192,1024] -> "
                "bf16[8192,1024]\",,100,p50,test,\n");
  const std::string suite = dir / "s.validation.yaml";
  WriteText(suite,
            "families:\n  - name: collectives\n    file: rows.csv\n    chip: tpu-v7x\n"
            "    max_mape: 1000%\n    target_mape: 1000%\n");
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"validate", suite, "-j", "1", "--json", dir / "v.json"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);  // the misfit row fails its family
  const nlohmann::json doc = nlohmann::json::parse(ReadText(dir / "v.json"));
  std::map<std::string, nlohmann::json> rows;
  for (const auto& row : doc["rows"]) rows[row["id"].get<std::string>()] = row;
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_NE(rows["misfit"]["skipped"].get<std::string>().find(
                "the module's 8 devices need 8 chips; the topology has 4"),
            std::string::npos)
      << rows["misfit"].dump();
  for (const char* id : {"ag-2pc", "ag-1pc", "ag-4", "rs", "ar", "a2a"}) {
    ASSERT_TRUE(rows[id].contains("predicted_us")) << rows[id].dump();
    EXPECT_EQ(rows[id]["bound_by"], "ICI") << rows[id].dump();
  }
  const auto us = [&](const char* id) { return rows[id]["predicted_us"].get<double>(); };
  // Two devices of a chip share its links: 8 devices on 4 chips send the
  // links what 4 devices on them send for the same result, and exchange it
  // on each chip; 8 chips (2x2x2) have a third axis of links.
  EXPECT_GT(us("ag-2pc"), us("ag-4"));
  EXPECT_LT(us("ag-2pc"), 1.1 * us("ag-4"));
  EXPECT_LT(us("ag-1pc"), us("ag-2pc"));
  // A reduce-scatter moves what the all-gather of its result moves.
  EXPECT_NEAR(us("rs"), us("ag-2pc"), 0.01 * us("ag-2pc"));
  // Pairs on one chip each: the all-reduce never leaves its chip, so it
  // beats a gather of the same bytes across the slice.
  EXPECT_LT(us("ar"), us("ag-2pc"));
}

TEST(ValidateCli, ThePrintedModuleOfARowIsValidHlo) {
  ScratchDir dir;
  const RunResult printed = RunBinary(TPUSIM_BINARY, {"validate", kSuite, "--hlo", "v4-mm-0001"});
  ASSERT_EQ(printed.exit_code, 0) << Describe(printed);
  EXPECT_NE(printed.out.find("convolution("), std::string::npos);
  WriteText(dir / "row.hlo", printed.out);
  const RunResult checked = RunBinary(TPUSIM_BINARY, {"check", dir / "row.hlo"});
  EXPECT_EQ(checked.exit_code, 0) << Describe(checked);
  const RunResult missing = RunBinary(TPUSIM_BINARY, {"validate", kSuite, "--hlo", "no-such-row"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no row with id 'no-such-row'"), std::string::npos) << missing.err;
  // It runs nothing, so an option about the run beside it is refused, not dropped.
  const RunResult beside =
      RunBinary(TPUSIM_BINARY, {"validate", kSuite, "--hlo", "v4-mm-0001", "--family", "nosuch"});
  EXPECT_EQ(beside.exit_code, 2);
  EXPECT_NE(beside.err.find("--family excludes --hlo"), std::string::npos) << beside.err;
}

TEST(ValidateCli, BadInputExitsTwoWithItsLocation) {
  ScratchDir dir;
  WriteText(
      dir / "bad.csv",
      "id,chip,devices,devices_per_chip,topology,op,dtype,shapes,groups,measured_us,"
      "statistic,source,note\nx,tpu-v4,1,1,t,add,f16,\"f16[8],f16[8] -> f16[8]\",,soon,m,s,n\n");
  WriteText(dir / "s.validation.yaml",
            "families:\n  - name: f\n    file: bad.csv\n    chip: tpu-v4\n"
            "    max_mape: 5%\n    target_mape: 5%\n");
  RunResult r = RunBinary(TPUSIM_BINARY, {"validate", dir / "s.validation.yaml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir / "bad.csv" + ":2:51: error: column 'measured_us'"), std::string::npos)
      << r.err;
  r = RunBinary(TPUSIM_BINARY, {"validate", kSuite, "--family", "no-such"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no family 'no-such' in the suite (it has: matmul-v4,"), std::string::npos)
      << r.err;
  // Chips are listed once each, though families share them.
  r = RunBinary(TPUSIM_BINARY, {"validate", kSuite, "--chip", "tpu-v9"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no chip 'tpu-v9' in the suite (it has: tpu-v4, tpu-v7x, tpu-v5p, tpu-v6e)"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace tpusim::test
