// Point 4 of issue 5 on the real corpus: every collective a device executes
// appears in the collective timeline, once per execution, with the
// participants XLA's group rules give (hlo::ResolveCollective, and by hand
// for a few modules). Every corpus module with collectives is timed on every
// device (or once, when symmetry holds) against a test interconnect, in one
// SystemC run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/base/file.h"
#include "sim/hlo/collective_groups.h"
#include "sim/hlo/computation.h"
#include "sim/timing/timing.h"
#include "tests/timing/test_timer.h"
#include "tests/timing/timing_test_util.h"

namespace tpusim::timing {
namespace {

namespace fs = std::filesystem;
using Groups = std::vector<std::vector<int64_t>>;

struct CorpusModule {
  std::string file;
  std::unique_ptr<hlo::HloModule> module;
  hlo::SpmdConfig config;
};

std::vector<CorpusModule> ModulesWithCollectives() {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(TPUSIM_CORPUS_DIR)) {
    if (entry.path().extension() == ".hlo") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<CorpusModule> modules;
  for (const fs::path& p : paths) {
    auto text = ReadFile(p.string());
    if (!text.ok()) continue;
    auto m = hlo::ParseHloModule(*text, p.string());
    if (!m.ok()) continue;
    CorpusModule c{p.filename().string(), std::move(*m), {}};
    bool collective = false;
    for (const auto& comp : c.module->computations()) {
      for (const auto& inst : comp->instructions()) {
        collective = collective || hlo::FindCollective(*inst).has_value();
      }
    }
    if (!collective) continue;
    c.config = hlo::SpmdConfig::CoveringModule(*c.module);
    modules.push_back(std::move(c));
  }
  return modules;
}

/// The (instruction, execution) instances device `device` takes part in,
/// from its executed instructions. A channel's sends and recvs meet as one
/// instance named by the send and counted per channel (without channel_id:
/// channel 0), so recvs are not counted again.
std::set<std::pair<std::string, int64_t>> ExecutedInstances(const CorpusModule& c,
                                                            const std::vector<OpRecord>& ops,
                                                            int64_t device) {
  std::set<std::pair<std::string, int64_t>> instances;
  std::map<std::string, int64_t> executions;
  for (const OpRecord& op : ops) {
    const hlo::HloInstruction* inst = op.instruction;
    const auto collective = hlo::FindCollective(*inst);
    if (!collective || inst->opcode() == hlo::HloOpcode::kRecv) continue;
    auto participants =
        hlo::ResolveCollective(*c.module, *collective->inst, collective->opcode, c.config);
    EXPECT_TRUE(participants.ok()) << c.file << ": " << participants.status().message();
    if (!participants.ok()) continue;
    bool member = false;
    for (const auto& group : participants->groups) {
      member = member || std::find(group.begin(), group.end(), device) != group.end();
    }
    const std::string counter =
        inst->opcode() == hlo::HloOpcode::kSend
            ? "channel " + std::to_string(inst->int_attr(hlo::AttrId::kChannelId).value_or(0))
            : inst->name();
    if (member) instances.emplace(inst->name(), executions[counter]++);
  }
  return instances;
}

TEST(SpmdCorpus, EveryExecutedCollectiveAppearsWithItsParticipants) {
  const arch::ChipConfig chip = Preset("tpu-v5e");
  const std::vector<CorpusModule> modules = ModulesWithCollectives();
  ASSERT_GE(modules.size(), 20u) << "corpus at " << TPUSIM_CORPUS_DIR;
  std::vector<std::unique_ptr<TestTimer>> timers;
  std::vector<SimulationJob> jobs;
  for (const CorpusModule& c : modules) {
    timers.push_back(std::make_unique<TestTimer>(1'000'000));
    SimulationJob job{c.module.get(), &chip, {}};
    job.options.interconnect = timers.back().get();
    job.options.exploit_symmetry = c.config.device_count() > kTracedDevices;
    jobs.push_back(std::move(job));
  }
  auto results = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(results.ok()) << results.status().message();
  int64_t checked = 0;
  for (size_t i = 0; i < modules.size(); ++i) {
    const CorpusModule& c = modules[i];
    const TimingResult& r = (*results)[i];
    SCOPED_TRACE(c.file);
    // Every record's participants are the group rules' answer.
    for (const CollectiveRecord& record : r.collectives) {
      const auto collective = hlo::FindCollective(*record.instruction);
      ASSERT_TRUE(collective.has_value()) << record.instruction->name();
      auto participants =
          hlo::ResolveCollective(*c.module, *collective->inst, collective->opcode, c.config);
      ASSERT_TRUE(participants.ok()) << participants.status().message();
      EXPECT_EQ(record.groups, participants->groups) << record.instruction->name();
    }
    // Each traced device's executed collectives are exactly the instances
    // naming it.
    for (const DeviceTiming& d : r.devices) {
      const std::vector<OpRecord>& ops = d.device == 0 ? r.ops : d.ops;
      if (d.device != 0 && d.device >= kTracedDevices) continue;
      std::set<std::pair<std::string, int64_t>> recorded;
      for (const CollectiveRecord& record : r.collectives) {
        for (const auto& group : record.groups) {
          if (std::find(group.begin(), group.end(), d.device) != group.end()) {
            recorded.emplace(record.instruction->name(), record.execution);
          }
        }
      }
      EXPECT_EQ(ExecutedInstances(c, ops, d.device), recorded) << "device " << d.device;
      checked += static_cast<int64_t>(recorded.size());
    }
  }
  EXPECT_GT(checked, 100);
}

/// Participants written out by hand from the modules' text.
TEST(SpmdCorpus, HandCheckedParticipants) {
  const arch::ChipConfig chip = Preset("tpu-v5e");
  std::vector<CorpusModule> modules = ModulesWithCollectives();
  std::map<std::string, const CorpusModule*> by_file;
  for (const CorpusModule& c : modules) by_file[c.file] = &c;
  const std::vector<std::string> files = {"e2e_replicated_collectives_rc2.hlo",
                                          "while_all_gather_sched_groups_rc4_np2.hlo"};
  std::vector<std::unique_ptr<TestTimer>> timers;
  std::vector<SimulationJob> jobs;
  for (const std::string& f : files) {
    ASSERT_TRUE(by_file.contains(f)) << f;
    timers.push_back(std::make_unique<TestTimer>(1'000'000));
    SimulationJob job{by_file[f]->module.get(), &chip, {}};
    job.options.interconnect = timers.back().get();
    jobs.push_back(std::move(job));
  }
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  // replica_count=2: ar and ag over {0,1}; cp swaps 0 and 1.
  const TimingResult& rc2 = (*r)[0];
  EXPECT_EQ(rc2.device_count, 2);
  EXPECT_EQ(rc2.symmetry, "used");
  std::map<std::string, Groups> groups;
  for (const CollectiveRecord& c : rc2.collectives) groups[c.instruction->name()] = c.groups;
  EXPECT_EQ(groups, (std::map<std::string, Groups>{
                        {"ar", {{0, 1}}}, {"ag", {{0, 1}}}, {"cp", {{0, 1}}}}));
  ASSERT_EQ(timers[0]->calls.size(), 3u);
  // replica_count=4, num_partitions=2, all-gathers with empty groups and no
  // channel: all replicas of each partition.
  const TimingResult& rc4 = (*r)[1];
  EXPECT_EQ(rc4.device_count, 8);
  ASSERT_FALSE(rc4.collectives.empty());
  for (const CollectiveRecord& c : rc4.collectives) {
    EXPECT_EQ(c.groups, (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}})) << c.instruction->name();
  }
}

}  // namespace
}  // namespace tpusim::timing
