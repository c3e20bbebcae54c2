// custom-call targets whose meaning is public: value-preserving annotations,
// and the SPMD shape conversions between a full value and this partition's
// shard (the full-from-shards one meets every partition at the hub). Any
// other target is kUnimplemented naming it.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "sim/det_math/det_math.h"
#include "sim/eval/collective_hub.h"
#include "sim/eval/kernels.h"
#include "sim/hlo/annotations.h"

namespace tpusim::eval {
namespace {

using hlo::HloInstruction;
using hlo::Shape;
using hlo::Sharding;
using value::Literal;

/// Annotations that return their operand unchanged: XLA's compiler
/// annotations (hlo::IsCompilerAnnotation: sharding hints and barriers, the
/// layout and dynamic-bound constraints, and the SPMD shape conversions when
/// the shard is the whole array), host offload moves and JAX's memory-kind
/// annotate_device_placement (where a value lives is a timing matter), and
/// PyTorch/XLA Neuron's AwsNeuronTransferWithStaticRing. Neuron does not
/// document the last; it is taken as a transfer that moves data without
/// changing it (its name, and operand and result of one shape, in every dump
/// that has it) — docs/evaluator.md lists this assumption.
bool IsIdentityTarget(std::string_view target) {
  return hlo::IsCompilerAnnotation(target) || target == "MoveToHost" || target == "MoveToDevice" ||
         target == "annotate_device_placement" || target == "AwsNeuronTransferWithStaticRing";
}

/// DynamicGte (XLA's while-loop unroller tests): element `index` of a tuple,
/// with the index a runtime scalar; an index outside the tuple is an error.
StatusOr<Literal> DynamicGetTupleElement(EvalContext& ctx, const HloInstruction& inst,
                                         Operands ops) {
  if (ops.size() != 2 || !ops[0]->shape().IsTuple() || !ops[1]->shape().IsArray() ||
      ops[1]->element_count() != 1 || !hlo::IsInteger(ops[1]->element_type())) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "DynamicGte takes a tuple and an integer scalar index");
  }
  const int64_t index = ScalarAsInt64(*ops[1]);
  if (index < 0 || index >= ops[0]->tuple_size()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "DynamicGte index " + std::to_string(index) + " is outside the tuple of " +
                         std::to_string(ops[0]->tuple_size()) + " elements");
  }
  const Literal& element = ops[0]->tuple_element(index);
  if (!element.shape().Compatible(inst.shape())) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "DynamicGte element " + std::to_string(index) + " has shape " +
                         element.shape().ToString(false) + ", not the result's");
  }
  return element;
}

/// PyTorch/XLA Neuron's GELU custom calls (their metadata names PyTorch's
/// GeluForwardImpl and GeluBackwardImpl), as PyTorch defines GELU by default
/// (the exact, erf form): AwsNeuronGelu(x) = x/2 (1 + erf(x/sqrt 2)), and
/// AwsNeuronGeluBackward(x) its derivative, Phi(x) + x phi(x), which the
/// program multiplies by the incoming gradient. Computed in f64 with detmath
/// and rounded once to the element type.
StatusOr<Literal> NeuronGelu(EvalContext& ctx, const HloInstruction& inst, Operands ops,
                             bool derivative) {
  if (ops.size() != 1 || !ops[0]->shape().IsArray() ||
      !hlo::IsFloatingPoint(ops[0]->element_type()) ||
      !ops[0]->shape().Compatible(inst.shape())) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "takes one floating-point array and returns its shape");
  }
  constexpr double kInvSqrt2 = 0.70710678118654752440;
  constexpr double kInvSqrt2Pi = 0.39894228040143267794;
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const double x = ops[0]->GetAsDouble(i);
    const double cdf = 0.5 * (1.0 + detmath::Erf(x * kInvSqrt2));
    out.SetFromDouble(
        i, derivative ? cdf + x * (kInvSqrt2Pi * detmath::Exp(-0.5 * (x * x))) : x * cdf);
  }
  return out;
}

/// Where a tiled sharding puts the tiles of a full array: the device list in
/// row-major order of the tile assignment, whose trailing dims past the data
/// rank (last_tile_dim_replicate, last_tile_dims) hold copies of one tile.
struct TilePlacement {
  /// Tiles along each data dimension.
  std::vector<int64_t> tiles;
  /// The shard's dimensions: ceil(full / tiles), the last tile padded.
  std::vector<int64_t> shard;
  /// Partition ids in row-major order of the tile assignment.
  std::vector<int64_t> devices;
  /// Devices holding each tile (the product of the trailing dims).
  int64_t copies = 1;

  /// The start in the full array of data tile `t` (row-major over `tiles`).
  std::vector<int64_t> TileStart(int64_t t) const {
    std::vector<int64_t> start(tiles.size());
    for (size_t d = tiles.size(); d-- > 0;) {
      start[d] = (t % tiles[d]) * shard[d];
      t /= tiles[d];
    }
    return start;
  }
  /// The part of a tile at `start` inside `full` (the rest is padding).
  std::vector<int64_t> TileExtent(const std::vector<int64_t>& start, const Shape& full) const {
    std::vector<int64_t> extent(shard.size());
    for (size_t d = 0; d < shard.size(); ++d) {
      extent[d] = std::clamp<int64_t>(full.dimensions(static_cast<int64_t>(d)) - start[d], 0,
                                      shard[d]);
    }
    return extent;
  }
};

/// The placement of `sharding` (from `owner`'s sharding= attribute) for a
/// `full` array split into `shard`-shaped pieces over `partitions`.
StatusOr<TilePlacement> PlacementOf(EvalContext& ctx, const HloInstruction& inst,
                                    const HloInstruction& owner, const Shape& full,
                                    const Shape& shard, int64_t partitions) {
  const auto* box = owner.GetAttr<hlo::Box<Sharding>>(hlo::AttrId::kSharding);
  const Sharding* sharding = box ? &**box : nullptr;
  const std::string whose = "the sharding of " + owner.name();
  if (sharding != nullptr && sharding->type == Sharding::Type::kNamed) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     whose +
                         " is a named sharding with unreduced axes, which no tile "
                         "assignment stands for; the shape change needs a tiled sharding");
  }
  if (sharding == nullptr || sharding->type != Sharding::Type::kTiled) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     whose + " must be tiled (devices=[...]) to change the shape");
  }
  if (!full.IsArray() || !shard.IsArray() || full.element_type() != shard.element_type() ||
      full.rank() != shard.rank() ||
      static_cast<int64_t>(sharding->tile_dims.size()) < full.rank()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "full and shard must be arrays of one element type and rank, with " + whose +
                         " tiling every dimension");
  }
  TilePlacement p;
  p.devices = sharding->devices.empty() && sharding->iota ? sharding->iota->Expand()
                                                          : sharding->devices;
  int64_t count = 1;
  for (size_t d = 0; d < sharding->tile_dims.size(); ++d) {
    count *= sharding->tile_dims[d];
    if (static_cast<int64_t>(d) < full.rank()) {
      p.tiles.push_back(sharding->tile_dims[d]);
      const int64_t tiles = sharding->tile_dims[d];
      p.shard.push_back((full.dimensions(static_cast<int64_t>(d)) + tiles - 1) / tiles);
    } else {
      p.copies *= sharding->tile_dims[d];
    }
  }
  if (static_cast<int64_t>(p.devices.size()) != count) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, whose + " has an invalid device list");
  }
  for (int64_t device : p.devices) {
    if (device < 0 || device >= partitions) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       whose + " names partition " + std::to_string(device) + " outside the " +
                           std::to_string(partitions) + " partitions");
    }
  }
  if (p.shard != shard.dimensions()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "the shard's dimensions must be the full dimensions divided by " + whose +
                         "'s tiles (rounded up)");
  }
  return p;
}

/// SPMDFullToShardShape: this partition's tile of the full operand, per the
/// operand's sharding (padding past the full array is zeros).
StatusOr<Literal> FullToShard(EvalContext& ctx, const HloInstruction& inst, const Literal& full) {
  const int64_t partitions = ctx.hub().config().partition_count;
  TPUSIM_ASSIGN_OR_RETURN(TilePlacement p, PlacementOf(ctx, inst, *inst.operand(0), full.shape(),
                                                       inst.shape(), partitions));
  const auto held = std::find(p.devices.begin(), p.devices.end(), ctx.device().partition_id);
  if (held == p.devices.end()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "the operand's sharding gives partition " +
                         std::to_string(ctx.device().partition_id) + " no tile");
  }
  const std::vector<int64_t> start = p.TileStart((held - p.devices.begin()) / p.copies);
  TPUSIM_ASSIGN_OR_RETURN(Literal shard, ctx.NewValue(inst, inst.shape()));
  CopyBox(full, start, shard, std::vector<int64_t>(start.size(), 0),
          p.TileExtent(start, full.shape()));
  return shard;
}

/// SPMDShardToFullShape: the full value assembled from every partition's
/// shard (of this replica), per the result's sharding; a tile held by several
/// partitions (replicated trailing dims) is taken from the first in the
/// device list.
StatusOr<Literal> ShardToFull(EvalContext& ctx, const HloInstruction& inst, const Literal& shard) {
  const SpmdConfig& config = ctx.hub().config();
  TPUSIM_ASSIGN_OR_RETURN(TilePlacement p, PlacementOf(ctx, inst, inst, inst.shape(),
                                                       shard.shape(), config.partition_count));
  std::vector<int64_t> participants;
  for (int64_t partition = 0; partition < config.partition_count; ++partition) {
    participants.push_back(config.DeviceIndex({ctx.device().replica_id, partition}));
  }
  return ctx.hub().Rendezvous(
      inst, config.DeviceIndex(ctx.device()), participants, {&shard},
      [&](const CollectiveHub::Contributions& c) -> StatusOr<std::vector<Literal>> {
        TPUSIM_ASSIGN_OR_RETURN(Literal full, ctx.NewValue(inst, inst.shape()));
        const int64_t tile_count = static_cast<int64_t>(p.devices.size()) / p.copies;
        for (int64_t t = 0; t < tile_count; ++t) {
          const std::vector<int64_t> start = p.TileStart(t);
          CopyBox(*c[p.devices[t * p.copies]][0], std::vector<int64_t>(start.size(), 0), full,
                  start, p.TileExtent(start, inst.shape()));
        }
        std::vector<Literal> results;
        results.push_back(std::move(full));
        return results;
      });
}

}  // namespace

bool TakesItsPartitionsTile(const HloInstruction& inst) {
  return inst.opcode() == hlo::HloOpcode::kCustomCall && inst.operand_count() == 1 &&
         inst.string_attr(hlo::AttrId::kCustomCallTarget) == "SPMDFullToShardShape" &&
         !inst.operand(0)->shape().Compatible(inst.shape());
}

StatusOr<Literal> EvalCustomCall(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const std::string_view target = inst.string_attr(hlo::AttrId::kCustomCallTarget);
  if (IsIdentityTarget(target)) {
    if (ops.size() != 1) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "custom-call target \"" + std::string(target) + "\" takes one operand");
    }
    if (TakesItsPartitionsTile(inst)) return FullToShard(ctx, inst, *ops[0]);
    if (ops[0]->shape().Compatible(inst.shape())) return *ops[0];
    if (target == "SPMDShardToFullShape") return ShardToFull(ctx, inst, *ops[0]);
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "custom-call target \"" + std::string(target) + "\" must keep the shape");
  }
  if (target == "DynamicGte") return DynamicGetTupleElement(ctx, inst, ops);
  if (target == "TopK") return EvalTopKCustomCall(ctx, inst, ops);
  if (target == "PadToStatic") return EvalPadToStatic(ctx, inst, ops);
  if (target == "SliceToDynamic") return EvalSliceToDynamic(ctx, inst, ops);
  if (target == "AwsNeuronGelu") return NeuronGelu(ctx, inst, ops, /*derivative=*/false);
  if (target == "AwsNeuronGeluBackward") return NeuronGelu(ctx, inst, ops, /*derivative=*/true);
  if (target == "AllocateBuffer") {
    // A fresh buffer the program writes before reading: zeros are as good as
    // any contents and keep results deterministic.
    return ctx.NewValue(inst, inst.shape());
  }
  return ctx.Unsupported(
      inst, "custom-call target \"" + std::string(target) + "\" is not supported by the evaluator");
}

}  // namespace tpusim::eval
