// The collectives of a lowered program, resolved once for the SPMD timing
// runtime: for each collective instruction, who meets whom (its groups are
// the same at every execution), the bytes the
// interconnect is asked to move (a ragged-all-to-all's, execution by
// execution), and the rendezvous key that matches the executions of one
// instance across devices.
#ifndef TPUSIM_SIM_TIMING_COLLECTIVE_PLAN_H_
#define TPUSIM_SIM_TIMING_COLLECTIVE_PLAN_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/base/execution_series.h"
#include "sim/base/status.h"
#include "sim/hlo/collective_groups.h"
#include "sim/hlo/module.h"
#include "sim/ici/interconnect.h"
#include "sim/timing/program.h"

namespace tpusim::timing {

/// What one execution of a ragged-all-to-all moves.
struct RaggedTraffic {
  int64_t bytes = 0;  ///< V: what the busiest member sends
  /// Per-pair bytes, as ici::Collective::sent_bytes.
  std::vector<std::vector<int64_t>> sent_bytes;
  bool operator==(const RaggedTraffic&) const = default;
};

/// One collective instruction of the program, as every device executes it.
struct CollectivePlan {
  const hlo::HloInstruction* inst = nullptr;  ///< the step (sync op, *-start, send or recv)
  /// The instruction an instance's record names: the step; for a recv, its
  /// channel's first send (an instance takes the send that ran in it).
  const hlo::HloInstruction* named = nullptr;
  ici::CollectiveKind kind = ici::CollectiveKind::kAllReduce;
  /// Groups and pairs over all devices; send and recv carry their channel's
  /// send's pairs.
  hlo::CollectiveParticipants participants;
  std::vector<int32_t> group_of_device;  ///< index into groups, -1: does not take part
  int64_t bytes = 0;  ///< V as ici::Collective defines it, dense (no layout padding)
  /// A ragged-all-to-all's traffic at each execution, from the send sizes
  /// the options give; empty when they are not known (every execution moves
  /// `bytes`, spread evenly).
  ExecutionSeries<RaggedTraffic> ragged_traffic;
  /// Executions with equal (key, execution count) are one instance: the
  /// instruction's unique id, or for send/recv one key per channel (whichever
  /// send or recv instruction runs), counted separately for sends and recvs,
  /// so that the k-th send and the k-th recv of a channel meet.
  int64_t key = 0;
  /// send/recv: a transfer is a rendezvous of its source's send and its
  /// target's recv (of the channel's, when the module has both), not of a group.
  bool point_to_point = false;
  bool has_send = false;
  bool has_recv = false;
};

/// Plans by instruction unique id (nullptr for instructions that are not
/// collectives or have no participants).
using CollectivePlans = std::vector<std::unique_ptr<CollectivePlan>>;

/// The rendezvous `device` joins when it executes `plan`'s step (`recv`: the
/// step is a recv): its group; for send/recv, the pairs it sends on (a send)
/// or receives on (a recv). Indices into groups, or into pairs.
std::vector<int32_t> RendezvousOf(const CollectivePlan& plan, bool recv, int64_t device);

/// The arrivals each device owes rendezvous `index` of `plan`, counting only
/// the devices marked in `simulated`.
std::map<int64_t, int64_t> ArrivalsOwed(const CollectivePlan& plan, int32_t index,
                                        const std::vector<bool>& simulated);

/// Plans every collective step of `program` for the devices of `config`, the
/// ragged-all-to-alls sending the rows `options` says (ragged_send_sizes and
/// device_ragged_send_sizes). Errors (ids out of range, a device in no group)
/// carry FILE:LINE:COL.
StatusOr<CollectivePlans> PlanCollectives(const hlo::HloModule& module, const Program& program,
                                          const hlo::SpmdConfig& config,
                                          const TimingOptions& options);

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_COLLECTIVE_PLAN_H_
