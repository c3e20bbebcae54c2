#include "harness/run/program_io.h"

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <system_error>
#include <utility>

#include "sim/base/fingerprint.h"
#include "sim/base/units.h"
#include "sim/hlo/computation.h"
#include "sim/hlo/instruction.h"
#include "sim/value/element_type.h"
#include "sim/value/npy.h"

namespace tpusim::harness {
namespace {

using value::Literal;

/// Reads one array leaf of parameter `parameter` from `stem`.npy (in the
/// device directory when it has the file, else in `dir`), checking its type
/// and dimensions against `shape`. Adds its bytes to `*total`.
StatusOr<Literal> ReadLeaf(const hlo::HloModule& module, const hlo::HloInstruction& parameter,
                           const hlo::Shape& shape, const std::string& dir,
                           std::optional<int64_t> device, const std::string& stem,
                           int64_t max_bytes, int64_t* total) {
  namespace fs = std::filesystem;
  std::string path = (fs::path(dir) / (stem + ".npy")).string();
  if (device.has_value()) {
    const fs::path own = fs::path(dir) / ("device_" + std::to_string(*device)) / (stem + ".npy");
    std::error_code ec;
    if (fs::exists(own, ec)) path = own.string();
  }
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return InvalidArgument(path + ": error: input file missing: parameter " +
                           std::to_string(parameter.parameter_number()) + " (" + parameter.name() +
                           ") of " + module.filename() + " needs " + shape.ToString(false));
  }
  value::NpyReadOptions options;
  options.element_type = shape.element_type();
  options.max_bytes = max_bytes - *total;
  StatusOr<Literal> leaf = value::ReadNpy(path, options);
  if (!leaf.ok()) {
    if (leaf.status().code() == StatusCode::kResourceExhausted) {
      return ResourceExhausted(path + ": error: the inputs need more than the memory limit of " +
                               std::to_string(max_bytes) + " bytes");
    }
    return leaf.status();
  }
  if (leaf->shape().dimensions() != shape.dimensions()) {
    return InvalidArgument(path + ": error: holds " + leaf->shape().ToString(false) +
                           ", but parameter " + std::to_string(parameter.parameter_number()) +
                           " (" + parameter.name() + ") expects " + shape.ToString(false));
  }
  *total += static_cast<int64_t>(leaf->bytes().size());
  return leaf;
}

/// Builds the value of `shape` from files `stem_<i>` for its array leaves,
/// numbered depth-first from `*next_leaf`.
StatusOr<Literal> ReadTupleLeaves(const hlo::HloModule& module,
                                  const hlo::HloInstruction& parameter, const hlo::Shape& shape,
                                  const std::string& dir, std::optional<int64_t> device,
                                  const std::string& stem, int64_t max_bytes, int64_t* total,
                                  int64_t* next_leaf) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const hlo::Shape& element : shape.tuple_shapes()) {
      TPUSIM_ASSIGN_OR_RETURN(Literal e, ReadTupleLeaves(module, parameter, element, dir, device,
                                                         stem, max_bytes, total, next_leaf));
      elements.push_back(std::move(e));
    }
    return Literal::CreateTuple(std::move(elements));
  }
  if (shape.IsToken()) return Literal::CreateToken();
  const std::string leaf_stem = stem + "_" + std::to_string((*next_leaf)++);
  return ReadLeaf(module, parameter, shape, dir, device, leaf_stem, max_bytes, total);
}

void CollectLeaves(const Literal& value, std::vector<OutputLeaf>& leaves, int64_t* next) {
  if (value.shape().IsTuple()) {
    for (int64_t i = 0; i < value.tuple_size(); ++i) {
      CollectLeaves(value.tuple_element(i), leaves, next);
    }
    return;
  }
  const int64_t number = (*next)++;
  if (value.shape().IsArray()) leaves.push_back({"output_" + std::to_string(number), &value});
}

/// A double in the table, or "-" for none.
std::string FormatNumber(std::optional<double> v) {
  return v.has_value() ? FormatSignificant(*v) : "-";
}

}  // namespace

StatusOr<std::vector<Literal>> ReadInputs(const hlo::HloModule& module, const std::string& dir,
                                          std::optional<int64_t> device, int64_t max_bytes) {
  const hlo::HloComputation* entry = module.entry();
  if (entry == nullptr) return InvalidArgument(module.filename() + ": module has no entry");
  std::vector<Literal> inputs;
  int64_t total = 0;
  for (const hlo::HloInstruction* parameter : entry->parameters()) {
    const std::string stem = "param_" + std::to_string(parameter->parameter_number());
    const hlo::Shape& shape = parameter->shape();
    if (shape.IsTuple()) {
      int64_t next_leaf = 0;
      TPUSIM_ASSIGN_OR_RETURN(Literal input,
                              ReadTupleLeaves(module, *parameter, shape, dir, device, stem,
                                              max_bytes, &total, &next_leaf));
      inputs.push_back(std::move(input));
    } else if (shape.IsToken()) {
      inputs.push_back(Literal::CreateToken());
    } else {
      TPUSIM_ASSIGN_OR_RETURN(
          Literal input, ReadLeaf(module, *parameter, shape, dir, device, stem, max_bytes, &total));
      inputs.push_back(std::move(input));
    }
  }
  return inputs;
}

std::string DeviceOutputPrefix(int64_t device_count, int64_t device) {
  return device_count > 1 ? "device_" + std::to_string(device) + "/" : "";
}

std::vector<OutputLeaf> OutputLeaves(const Literal& result) {
  std::vector<OutputLeaf> leaves;
  if (result.shape().IsArray()) {
    leaves.push_back({"output", &result});
    return leaves;
  }
  int64_t next = 0;
  CollectLeaves(result, leaves, &next);
  return leaves;
}

Status WriteOutputs(const Literal& result, const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
    return InvalidArgument(dir + ": error: exists and is not a directory, where the outputs go");
  }
  std::filesystem::create_directories(dir, ec);
  if (ec) return InvalidArgument(dir + ": error: cannot create directory: " + ec.message());
  for (const OutputLeaf& leaf : OutputLeaves(result)) {
    TPUSIM_RETURN_IF_ERROR(
        value::WriteNpy((std::filesystem::path(dir) / (leaf.name + ".npy")).string(), *leaf.value));
  }
  return Status();
}

OutputSummary Summarize(const std::string& name, const Literal& leaf) {
  OutputSummary summary;
  summary.name = name;
  summary.shape = leaf.shape().ToString(false);
  summary.checksum = Fnv1a(leaf.bytes());
  double sum = 0.0;
  int64_t counted = 0;
  for (int64_t i = 0; i < leaf.element_count(); ++i) {
    const double v = leaf.GetAsDouble(i);
    if (v != v) {
      ++summary.nan_count;
      continue;
    }
    summary.min = summary.min.has_value() ? std::min(*summary.min, v) : v;
    summary.max = summary.max.has_value() ? std::max(*summary.max, v) : v;
    sum += v;
    ++counted;
  }
  if (counted > 0) summary.mean = sum / static_cast<double>(counted);
  return summary;
}

void PrintSummaryTable(const std::vector<OutputSummary>& rows, std::ostream& out) {
  std::vector<std::vector<std::string>> cells;
  cells.push_back({"output", "shape", "min", "max", "mean", "nan", "checksum"});
  for (const OutputSummary& row : rows) {
    cells.push_back({row.name, row.shape, FormatNumber(row.min), FormatNumber(row.max),
                     FormatNumber(row.mean), std::to_string(row.nan_count), Hex16(row.checksum)});
  }
  std::vector<size_t> widths(cells.front().size(), 0);
  for (const auto& line : cells) {
    for (size_t c = 0; c < line.size(); ++c) widths[c] = std::max(widths[c], line[c].size());
  }
  for (const auto& line : cells) {
    std::string text;
    for (size_t c = 0; c < line.size(); ++c) {
      // Names and shapes read left-aligned, numbers right-aligned.
      const std::string pad(widths[c] - line[c].size(), ' ');
      text += c < 2 ? line[c] + pad : pad + line[c];
      if (c + 1 < line.size()) text += "  ";
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << '\n';
  }
}

}  // namespace tpusim::harness
