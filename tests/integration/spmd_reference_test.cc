// Functional agreement of SPMD programs with their unpartitioned references
// (issue 5, point 4): for every corpus module with collectives that computes a
// global function of global inputs, `tpusim exec` over all its devices must
// give, block by block, what a hand-written unpartitioned reference gives on
// the whole inputs. The references live in spmd_references/<module>.ref.hlo:
//
//   - a comment line `// spmd-reference module=<corpus file> [outputs=i,j,...]
//     [device-id-parameters=n,...] [sweep-parameter=n:v,...]`: the module it
//     describes, which of the module's output leaves it gives (default all, in
//     order), which module parameters take the device's index d instead of a
//     slice of a global input (its rank in the SPMD program, which the Neuron
//     runtime passes as a parameter named partition-id), and a replicated
//     scalar parameter (a branch selector) to run once with each value;
//   - reference parameter N is the global form of module parameter N (leaf by
//     leaf for a tuple); its `sharding=` says how devices hold it (replicated, or tiled: device ->
//     block by the tile assignment, XLA's ceil-sized blocks, padding past the
//     end, `last_tile_dim_replicate` for blocks several devices share);
//   - the ROOT's `sharding=` (one per leaf for a tuple) says the same of the
//     outputs.
// A device's block is reshaped (row-major) to the module's per-device shape,
// so a scalar or a stacked input can be the block of a global array.
//
// Every comparison is bit-exact: each reference adds in the order the
// evaluator's collectives do (participants in group order) and keeps the
// per-device dot products whole, so no summation order changes; each file's
// comment says why its function is exact.
//
// Corpus modules with collectives but no reference are listed in
// kNoReference with the reason; a new collective module in the corpus fails
// EveryCollectiveModuleIsClassified until it gets one or the other.
#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "sim/eval/evaluator.h"
#include "sim/hlo/collective_groups.h"
#include "sim/hlo/module.h"
#include "sim/hlo/parser.h"
#include "sim/value/literal.h"
#include "sim/value/npy.h"
#include "sim/value/random.h"
#include "tests/corpus/corpus_modules.h"
#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using value::Literal;

/// Corpus modules with collectives that have no unpartitioned reference, and
/// why. Together with the files in spmd_references/ this covers every corpus
/// module with a collective.
const std::map<std::string, std::string> kNoReference = {
    {"custom_call_variants.hlo",
     "import-test collection: the entry returns its parameter; the ragged-all-to-all is in a "
     "computation nothing calls"},
    {"hlo_import_all_ops.hlo",
     "import-test collection: the entry returns its parameter; the collectives are in computations "
     "nothing calls"},
    {"e2e_collective_broadcast.hlo",
     "no parameters: the operand is built from replica-id to test the collective itself (its "
     "values are checked in eval_spmd_corpus_test)"},
    {"e2e_ragged_all_to_all.hlo",
     "no parameters: constants and replica-id offsets test the collective itself (values checked "
     "in eval_spmd_corpus_test)"},
    {"e2e_replicated_collectives_rc2.hlo",
     "no parameters: every collective's operand is the replica id (values checked in "
     "eval_spmd_corpus_test)"},
    {"e2e_reduce_scatter_while.hlo",
     "no parameters: the reduce-scatter's operand is built from replica-id and constants"},
    {"tpu_lhs_all_gather_start_done.hlo",
     "scheduler test snippet: the all-gathers move replica-id colours; the parameters feed only "
     "unrelated convolutions, so no global function relates them"},
    {"tpu_lhs_all_reduce_start_done.hlo",
     "scheduler test snippet: the all-reduces sum replica-id colours; the parameters feed only "
     "unrelated convolutions"},
    {"tpu_lhs_all_to_all_async.hlo",
     "scheduler test snippet: the all-to-alls move replica-id colours; the parameters feed only "
     "unrelated convolutions"},
    {"tpu_lhs_collective_permute_all_gather.hlo",
     "scheduler test snippet: the collectives move replica-id-filled buffers through in-place "
     "permutes; no parameter reaches them"},
    {"torchxla_neuron_llama_tp8.hlo",
     "a reference exists in principle (a tensor-parallel Llama decode layer) but is not written: "
     "the module has no sharding annotations, so the head and feature split of each of its "
     "weights and KV caches would have to be inferred from the program, and with 195 MiB of "
     "inputs per device on 8 devices (about 2.5 minutes in tpusim exec) it is too large for "
     "this test"},
    {"maxtext_llama3_8b_activation_offload.hlo",
     "needs about 11 GiB of inputs per device (8 partitions): beyond a test's memory"},
    {"maxtext_llama31_405b_bf16_spmd.hlo",
     "needs about 36 GiB of inputs per device: beyond a test's memory"},
    {"p2p_pipelined_send_recv_loop.hlo",
     "does not run: it adds a u32[] to a u32[2] (an implicit broadcast XLA's text form does not "
     "have; see eval_spmd_corpus_test's kKnownFailures)"},
    {"tf_rng_tensorarray_while_send_conditional.hlo",
     "its only collectives are host-transfer sends (to the host, not simulated) and the entry "
     "returns an empty tuple: no device output to compare"},
    {"tpu_lhs_send_recv_while_bf16.hlo",
     "scheduler test snippet: send and recv on different channels without source-target pairs, "
     "so the peer is unknown, and the while loop's predicate never changes"},
};

/// The reference files, by file name, sorted.
std::vector<std::string> ReferenceFileNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(TPUSIM_SPMD_REFERENCE_DIR, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".ref.hlo")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// The `// spmd-reference ...` line of a reference file.
struct ReferenceHeader {
  std::string module;                         ///< corpus file name
  std::vector<int64_t> outputs;               ///< module output leaves compared; empty: all
  std::vector<int64_t> device_id_parameters;  ///< module parameters fed the device index
  /// A replicated scalar parameter (a branch selector) and the values it is
  /// given, one run each, so every path is compared; -1 when none.
  int64_t sweep_parameter = -1;
  std::vector<int64_t> sweep_values;
};

std::vector<int64_t> ParseIntList(const std::string& text) {
  std::vector<int64_t> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) values.push_back(std::stoll(item));
  return values;
}

::testing::AssertionResult ParseHeader(const std::string& text, ReferenceHeader& header) {
  constexpr std::string_view kTag = "// spmd-reference ";
  std::stringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with(kTag)) continue;
    std::stringstream words(line.substr(kTag.size()));
    std::string word;
    while (words >> word) {
      const size_t eq = word.find('=');
      const std::string key = word.substr(0, eq);
      const std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
      if (key == "module") {
        header.module = value;
      } else if (key == "outputs") {
        header.outputs = ParseIntList(value);
      } else if (key == "device-id-parameters") {
        header.device_id_parameters = ParseIntList(value);
      } else if (key == "sweep-parameter") {
        const size_t colon = value.find(':');
        if (colon == std::string::npos) {
          return ::testing::AssertionFailure() << "sweep-parameter=N:v,... in '" << line << "'";
        }
        header.sweep_parameter = std::stoll(value.substr(0, colon));
        header.sweep_values = ParseIntList(value.substr(colon + 1));
      } else {
        return ::testing::AssertionFailure() << "unknown key in '" << line << "'";
      }
    }
    if (header.module.empty()) return ::testing::AssertionFailure() << "no module= in " << line;
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no '" << kTag << "' line";
}

/// Where a device's block of a global array lies.
struct Block {
  std::vector<int64_t> start;  ///< first global index per dimension
  std::vector<int64_t> size;   ///< block extent per dimension (may run past the end)
};

/// The block `device` holds of an array of `dims` sharded by `sharding`
/// (XLA's rule: ceil(dim / tiles) per tile, the last tiles padded).
::testing::AssertionResult BlockOf(const hlo::Sharding& sharding, std::span<const int64_t> dims,
                                   int64_t device, Block& block) {
  block.start.assign(dims.size(), 0);
  block.size.assign(dims.begin(), dims.end());
  if (sharding.type == hlo::Sharding::Type::kReplicated) return ::testing::AssertionSuccess();
  if (sharding.type != hlo::Sharding::Type::kTiled || !sharding.last_tile_dims.empty()) {
    return ::testing::AssertionFailure() << "only replicated and tiled shardings are supported";
  }
  const std::vector<int64_t> devices = sharding.iota ? sharding.iota->Expand() : sharding.devices;
  const auto found = std::find(devices.begin(), devices.end(), device);
  if (found == devices.end()) {
    return ::testing::AssertionFailure() << "device " << device << " holds no tile";
  }
  std::vector<int64_t> tile_dims = sharding.tile_dims;
  if (sharding.last_tile_dim_replicate) tile_dims.pop_back();
  if (tile_dims.size() != dims.size()) {
    return ::testing::AssertionFailure()
           << "tile rank " << tile_dims.size() << " vs array rank " << dims.size();
  }
  // Position in the device list -> tile index, row-major over sharding.tile_dims.
  int64_t position = found - devices.begin();
  if (sharding.last_tile_dim_replicate) position /= sharding.tile_dims.back();
  for (size_t i = dims.size(); i-- > 0;) {
    const int64_t tile = position % tile_dims[i];
    position /= tile_dims[i];
    block.size[i] = (dims[i] + tile_dims[i] - 1) / tile_dims[i];
    block.start[i] = tile * block.size[i];
  }
  return ::testing::AssertionSuccess();
}

/// Visits every index of a block as (global linear index or -1 when past the
/// array's end, block linear index).
template <typename Fn>
void ForEachBlockElement(std::span<const int64_t> dims, const Block& block, Fn fn) {
  int64_t count = 1;
  for (int64_t s : block.size) count *= s;
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t global = 0;
    bool inside = true;
    for (size_t i = 0; i < dims.size(); ++i) {
      const int64_t g = block.start[i] + index[i];
      inside &= g < dims[i];
      global = global * dims[i] + g;
    }
    fn(inside ? global : -1, linear);
    for (size_t i = dims.size(); i-- > 0;) {
      if (++index[i] < block.size[i]) break;
      index[i] = 0;
    }
  }
}

int64_t ElementBytes(const Literal& literal) {
  return literal.element_count() == 0
             ? 0
             : static_cast<int64_t>(literal.bytes().size()) / literal.element_count();
}

/// Device block of `global`, reshaped to `device_shape`; padding is NaN for
/// floating-point types (so a module that used it would show) and 0 otherwise.
::testing::AssertionResult SliceForDevice(const Literal& global, const Block& block,
                                          const hlo::Shape& device_shape, Literal& out) {
  int64_t count = 1;
  for (int64_t s : block.size) count *= s;
  out = Literal(device_shape);
  if (out.element_count() != count || device_shape.element_type() != global.element_type()) {
    return ::testing::AssertionFailure()
           << "block of " << count << " elements of " << global.shape().ToString()
           << " vs device shape " << device_shape.ToString();
  }
  const double pad =
      hlo::IsFloatingPoint(global.element_type()) ? std::numeric_limits<double>::quiet_NaN() : 0.0;
  for (int64_t i = 0; i < count; ++i) out.SetFromDouble(i, pad);
  const int64_t width = ElementBytes(global);
  const auto dims = global.shape().dimensions();
  ForEachBlockElement(std::span<const int64_t>(dims.begin(), dims.end()), block,
                      [&](int64_t g, int64_t b) {
                        if (g < 0) return;
                        std::memcpy(out.mutable_bytes().data() + b * width,
                                    global.bytes().data() + g * width, width);
                      });
  return ::testing::AssertionSuccess();
}

/// Compares a device's output with its block of the reference's output,
/// bit for bit, over the elements inside the array.
::testing::AssertionResult MatchesBlock(const Literal& reference, const Block& block,
                                        const Literal& got) {
  int64_t count = 1;
  for (int64_t s : block.size) count *= s;
  if (got.element_count() != count || got.element_type() != reference.element_type()) {
    return ::testing::AssertionFailure()
           << "got " << got.shape().ToString() << ", block of " << reference.shape().ToString()
           << " has " << count << " elements";
  }
  const int64_t width = ElementBytes(reference);
  int64_t mismatches = 0;
  std::string first;
  const auto dims = reference.shape().dimensions();
  ForEachBlockElement(std::span<const int64_t>(dims.begin(), dims.end()), block,
                      [&](int64_t g, int64_t b) {
                        if (g < 0) return;
                        if (std::memcmp(got.bytes().data() + b * width,
                                        reference.bytes().data() + g * width, width) == 0) {
                          return;
                        }
                        if (mismatches++ == 0) {
                          first = "block element " + std::to_string(b) + ": got " +
                                  std::to_string(got.GetAsDouble(b)) + ", reference " +
                                  std::to_string(reference.GetAsDouble(g));
                        }
                      });
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << mismatches << " of " << count << " elements differ; first " << first;
}

/// A seeded global input: floats uniform in [-1, 1) rounded to their type,
/// integers in [0, 3], pred either.
Literal SeededGlobal(const hlo::Shape& shape, uint64_t stream) {
  value::Random rng(/*seed=*/2026, stream);
  Literal value(shape);
  const hlo::PrimitiveType type = shape.element_type();
  for (int64_t i = 0; i < value.element_count(); ++i) {
    if (hlo::IsFloatingPoint(type) || hlo::IsComplex(type)) {
      value.SetFromDouble(i, rng.UniformDouble() * 2 - 1);
    } else if (type == hlo::PrimitiveType::kPred) {
      value.SetFromDouble(i, static_cast<double>(rng.UniformInt(0, 1)));
    } else {
      value.SetFromDouble(i, static_cast<double>(rng.UniformInt(0, 3)));
    }
  }
  return value;
}

/// The array leaves of a (flat) parameter or result shape.
std::vector<hlo::Shape> Leaves(const hlo::Shape& shape) {
  return shape.IsTuple() ? shape.tuple_shapes() : std::vector<hlo::Shape>{shape};
}

/// The sharding of leaf `i` of a value whose sharding is `sharding`.
const hlo::Sharding& LeafSharding(const hlo::Sharding& sharding, size_t i) {
  return sharding.type == hlo::Sharding::Type::kTuple ? sharding.elements.at(i) : sharding;
}

/// The .npy file `exec --out` writes for leaf `i` of a result of `shape`.
std::string OutputFile(const hlo::Shape& shape, size_t i) {
  return shape.IsTuple() ? "output_" + std::to_string(i) + ".npy" : "output.npy";
}

/// The .npy file `exec --inputs` reads for leaf `i` of parameter `n` of `shape`.
std::string InputFile(int64_t n, const hlo::Shape& shape, size_t i) {
  return "param_" + std::to_string(n) + (shape.IsTuple() ? "_" + std::to_string(i) : "") + ".npy";
}

::testing::AssertionResult Exec(const std::string& module, const std::string& inputs,
                                const std::string& out) {
  const RunResult r = RunBinary(TPUSIM_BINARY, {"exec", module, "--inputs", inputs, "--out", out});
  if (r.exit_code == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << Describe(r);
}

::testing::AssertionResult ReadOutput(const std::string& path, hlo::PrimitiveType type,
                                      Literal& out) {
  value::NpyReadOptions options;
  options.element_type = type;
  StatusOr<Literal> literal = value::ReadNpy(path, options);
  if (!literal.ok()) return ::testing::AssertionFailure() << literal.status().message();
  out = *std::move(literal);
  return ::testing::AssertionSuccess();
}

void WriteInput(const std::string& path, const Literal& literal) {
  fs::create_directories(fs::path(path).parent_path());
  const Status written = value::WriteNpy(path, literal);
  ASSERT_TRUE(written.ok()) << path << ": " << written.message();
}

std::unique_ptr<hlo::HloModule> Parse(const fs::path& path) {
  auto module = hlo::ParseHloModule(ReadText(path), path.string());
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(module).value() : nullptr;
}

/// The entry's parameters by parameter number.
std::vector<const hlo::HloInstruction*> Parameters(const hlo::HloModule& module) {
  std::vector<const hlo::HloInstruction*> parameters(module.entry()->parameters().size());
  for (const hlo::HloInstruction* p : module.entry()->parameters()) {
    parameters.at(p->parameter_number()) = p;
  }
  return parameters;
}

TEST(SpmdReference, EveryCollectiveModuleIsClassified) {
  std::map<std::string, std::string> referenced;  // module -> reference file
  for (const std::string& file : ReferenceFileNames()) {
    ReferenceHeader header;
    ASSERT_TRUE(ParseHeader(ReadText(fs::path(TPUSIM_SPMD_REFERENCE_DIR) / file), header)) << file;
    EXPECT_EQ(file, header.module.substr(0, header.module.size() - 4) + ".ref.hlo")
        << "a reference is named after its module";
    referenced[header.module] = file;
  }
  const std::vector<std::string> modules = CollectiveModuleNames(TPUSIM_CORPUS_DIR);
  ASSERT_GE(modules.size(), 20u) << "corpus at " << TPUSIM_CORPUS_DIR;
  for (const std::string& name : modules) {
    const bool has_reference = referenced.contains(name);
    const bool excused = kNoReference.contains(name);
    EXPECT_TRUE(has_reference || excused)
        << name << " has collectives: write spmd_references/" << name.substr(0, name.size() - 4)
        << ".ref.hlo or list it in kNoReference with the reason";
    EXPECT_FALSE(has_reference && excused) << name << " is both referenced and excused";
  }
  // No stale entries: each names a corpus module with collectives.
  for (const auto& [name, file] : referenced) {
    EXPECT_TRUE(std::binary_search(modules.begin(), modules.end(), name)) << file;
  }
  for (const auto& [name, reason] : kNoReference) {
    EXPECT_TRUE(std::binary_search(modules.begin(), modules.end(), name)) << name;
  }
}

/// One agreement run; `sweep_value` (if set) replaces the global value of
/// header.sweep_parameter.
void CheckAgreementOnce(const fs::path& reference_path, const ReferenceHeader& header,
                        std::optional<int64_t> sweep_value) {
  const fs::path module_path = fs::path(TPUSIM_CORPUS_DIR) / header.module;
  const std::unique_ptr<hlo::HloModule> reference = Parse(reference_path);
  const std::unique_ptr<hlo::HloModule> module = Parse(module_path);
  ASSERT_TRUE(reference && module);
  // The devices `tpusim exec` runs, by the same rule.
  const int64_t devices = hlo::SpmdConfig::CoveringModule(*module).device_count();
  const auto reference_parameters = Parameters(*reference);
  const auto module_parameters = Parameters(*module);
  ScratchDir dir;

  // Global inputs (per parameter, its array leaves), the reference's run, and
  // each device's slices.
  std::vector<std::vector<Literal>> globals;
  for (const hlo::HloInstruction* p : reference_parameters) {
    const int64_t n = p->parameter_number();
    globals.emplace_back();
    const std::vector<hlo::Shape> leaves = Leaves(p->shape());
    for (size_t i = 0; i < leaves.size(); ++i) {
      ASSERT_TRUE(leaves[i].IsArray()) << p->name() << " leaf " << i;
      globals.back().push_back(SeededGlobal(leaves[i], static_cast<uint64_t>(n) * 64 + i));
      if (sweep_value && n == header.sweep_parameter) {
        ASSERT_EQ(globals.back().back().element_count(), 1) << "sweep-parameter must be a scalar";
        globals.back().back().SetFromDouble(0, static_cast<double>(*sweep_value));
      }
      WriteInput(dir / ("ref_in/" + InputFile(n, p->shape(), i)), globals.back().back());
    }
  }
  ASSERT_TRUE(Exec(reference_path.string(), dir / "ref_in", dir / "ref_out"));
  const auto device_dir = [&](const std::string& root, int64_t d) {
    return devices == 1 ? root : root + "/device_" + std::to_string(d);
  };
  for (int64_t d = 0; d < devices; ++d) {
    for (const hlo::HloInstruction* p : module_parameters) {
      const int64_t n = p->parameter_number();
      const std::string in_dir = device_dir(dir / "mod_in", d) + "/";
      if (std::count(header.device_id_parameters.begin(), header.device_id_parameters.end(), n) >
          0) {
        Literal id(p->shape());
        id.SetFromDouble(0, static_cast<double>(d));
        WriteInput(in_dir + InputFile(n, p->shape(), 0), id);
        continue;
      }
      ASSERT_LT(n, static_cast<int64_t>(reference_parameters.size()))
          << "module parameter " << n << " has no reference parameter";
      const hlo::HloInstruction* global = reference_parameters[n];
      ASSERT_NE(global->sharding(), nullptr) << global->name() << " needs a sharding";
      const std::vector<hlo::Shape> leaves = Leaves(p->shape());
      ASSERT_EQ(leaves.size(), globals[n].size()) << global->name() << " leaves";
      for (size_t i = 0; i < leaves.size(); ++i) {
        const auto dims = globals[n][i].shape().dimensions();
        Block block;
        ASSERT_TRUE(BlockOf(LeafSharding(*global->sharding(), i),
                            std::span<const int64_t>(dims.begin(), dims.end()), d, block))
            << global->name() << " leaf " << i;
        Literal input;
        ASSERT_TRUE(SliceForDevice(globals[n][i], block, leaves[i], input))
            << global->name() << " leaf " << i;
        WriteInput(in_dir + InputFile(n, p->shape(), i), input);
      }
    }
  }
  ASSERT_TRUE(Exec(module_path.string(), dir / "mod_in", dir / "mod_out"));

  // Every device's output blocks against the reference's outputs.
  const hlo::HloInstruction* root = reference->entry()->root();
  ASSERT_NE(root->sharding(), nullptr) << "the reference's ROOT needs a sharding";
  const std::vector<hlo::Shape> reference_leaves = Leaves(root->shape());
  const hlo::Shape& module_result = module->entry()->root()->shape();
  std::vector<int64_t> compared = header.outputs;
  if (compared.empty()) {
    for (size_t i = 0; i < Leaves(module_result).size(); ++i) compared.push_back(i);
  }
  ASSERT_EQ(compared.size(), reference_leaves.size()) << "reference leaves vs compared outputs";
  for (size_t i = 0; i < reference_leaves.size(); ++i) {
    Literal expected;
    ASSERT_TRUE(ReadOutput(dir / ("ref_out/" + OutputFile(root->shape(), i)),
                           reference_leaves[i].element_type(), expected));
    const auto dims = reference_leaves[i].dimensions();
    for (int64_t d = 0; d < devices; ++d) {
      Block block;
      ASSERT_TRUE(BlockOf(LeafSharding(*root->sharding(), i),
                          std::span<const int64_t>(dims.begin(), dims.end()), d, block));
      Literal got;
      ASSERT_TRUE(
          ReadOutput(device_dir(dir / "mod_out", d) + "/" + OutputFile(module_result, compared[i]),
                     reference_leaves[i].element_type(), got));
      EXPECT_TRUE(MatchesBlock(expected, block, got))
          << header.module << " output " << compared[i] << " on device " << d;
    }
  }
}

/// Runs the reference at `reference_path` and its module over all devices and
/// compares their outputs, once per value of the header's sweep parameter
/// (failures are gtest failures; a disagreement is a non-fatal one per output
/// and device).
void CheckAgreement(const fs::path& reference_path) {
  ReferenceHeader header;
  ASSERT_TRUE(ParseHeader(ReadText(reference_path), header));
  if (header.sweep_parameter < 0) {
    CheckAgreementOnce(reference_path, header, std::nullopt);
    return;
  }
  ASSERT_FALSE(header.sweep_values.empty());
  for (int64_t value : header.sweep_values) {
    SCOPED_TRACE("parameter " + std::to_string(header.sweep_parameter) + " = " +
                 std::to_string(value));
    CheckAgreementOnce(reference_path, header, value);
  }
}

class SpmdReferenceAgreement : public ::testing::TestWithParam<std::string> {};

TEST_P(SpmdReferenceAgreement, PartitionedRunMatchesTheReference) {
  CheckAgreement(fs::path(TPUSIM_SPMD_REFERENCE_DIR) / GetParam());
}

TEST(SpmdReference, AWrongReferenceDisagrees) {
  // The all-reduce groups are {0,1} and {2,3}; a reference pairing blocks 0
  // and 2 instead must be caught on devices 0 and 1 (which hold y0), and
  // only there.
  ScratchDir dir;
  std::string text =
      ReadText(fs::path(TPUSIM_SPMD_REFERENCE_DIR) / "import_async_collectives_allreduce.ref.hlo");
  const std::string right = "y0 = f32[4,2] add(x0, x1)";
  const size_t at = text.find(right);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, right.size(), "y0 = f32[4,2] add(x0, x2)");
  const std::string wrong = dir / "wrong.ref.hlo";
  WriteText(wrong, text);
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    CheckAgreement(wrong);
  }
  ASSERT_EQ(failures.size(), 2);
  EXPECT_THAT(failures.GetTestPartResult(0).message(), HasSubstr("output 0 on device 0"));
  EXPECT_THAT(failures.GetTestPartResult(1).message(), HasSubstr("output 0 on device 1"));
  EXPECT_THAT(failures.GetTestPartResult(0).message(), HasSubstr("8 of 8 elements differ"));
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.size() - 8);  // without ".ref.hlo"
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, SpmdReferenceAgreement, ::testing::ValuesIn(ReferenceFileNames()),
                         TestName);

}  // namespace
}  // namespace tpusim::test
