#include "harness/validate/validation.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <tuple>

#include "harness/validate/workload_hlo.h"
#include "sim/arch/preset_loader.h"
#include "sim/arch/topology_config.h"
#include "sim/hlo/parser.h"
#include "sim/hlo/verifier.h"
#include "sim/ici/interconnect.h"
#include "sim/timing/timing.h"

namespace tpusim::harness {
namespace {

/// What one row's timing gave: a time, or why there is none.
struct Prediction {
  double us = 0;
  std::string bound_by;
  std::string skipped;
};

/// One line of text: tabs and line breaks would break the shard protocol.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  }
  return text;
}

/// The first word of `text` that is a slice's shape, digits joined by 'x'
/// ("2x2x1" in "v5p-8 (2x2x1)"); empty when it has none.
std::string SliceShapeIn(const std::string& text) {
  for (size_t begin = 0; begin < text.size();) {
    size_t end = begin;
    while (end < text.size() && std::isalnum(static_cast<unsigned char>(text[end]))) ++end;
    const std::string word = text.substr(begin, end - begin);
    bool shape = word.find('x') != std::string::npos && word.front() != 'x' && word.back() != 'x';
    for (size_t i = 0; shape && i < word.size(); ++i) {
      shape = std::isdigit(static_cast<unsigned char>(word[i])) ||
              (word[i] == 'x' && word[i - 1] != 'x');
    }
    if (shape) return word;
    begin = end + 1;
  }
  return "";
}

/// The network a collective row ran on: its `topology`, a short form
/// (`mesh:2x2x1`, docs/interconnect.md) or text naming the slice's shape as
/// the published files write it ("2x2x1", "4x4x4 slice (...)"), which is the
/// chip's torus with its generation's wraparound rule; `devices_per_chip` from
/// the row.
StatusOr<arch::TopologyConfig> RowTopology(const Measurement& m, const arch::ChipConfig& chip) {
  const std::string& text = m.topology;
  const std::string shape = text.find(':') == std::string::npos ? SliceShapeIn(text) : "";
  StatusOr<arch::TopologyConfig> config =
      arch::ParseTopologyShortForm(shape.empty() ? text : "torus:" + shape + ",wraparound=tpu");
  if (!config.ok()) {
    return InvalidArgument(config.status().message() + " (or a slice's shape, e.g. 2x2x1)");
  }
  if (config->devices_per_chip.value_or(m.devices_per_chip) != m.devices_per_chip) {
    return InvalidArgument("it has " + std::to_string(*config->devices_per_chip) +
                           " devices per chip, the row's devices_per_chip " +
                           std::to_string(m.devices_per_chip));
  }
  config->devices_per_chip = m.devices_per_chip;
  TPUSIM_RETURN_IF_ERROR(arch::ResolveChipDefaults(*config, chip));
  return config;
}

/// Times `rows` (indices into `all`) in this process: one SystemC run.
std::vector<Prediction> PredictShard(const std::vector<ValidationRow>& all,
                                     const std::vector<size_t>& rows,
                                     const std::map<std::string, arch::ChipConfig>& chips,
                                     const std::map<std::string, std::string>& family_chip) {
  std::vector<Prediction> out(rows.size());
  std::vector<std::unique_ptr<hlo::HloModule>> modules;
  std::vector<std::unique_ptr<ici::Interconnect>> networks;  // the collective rows'
  std::vector<timing::SimulationJob> jobs;
  std::vector<size_t> job_row;     // jobs[j] times rows[job_row[j]]
  std::vector<std::string> timed;  // its timed instruction
  for (size_t i = 0; i < rows.size(); ++i) {
    const ValidationRow& row = all[rows[i]];
    StatusOr<Workload> workload = WorkloadFor(row.measurement);
    if (!workload.ok()) {
      out[i].skipped = workload.status().message();
      continue;
    }
    StatusOr<std::unique_ptr<hlo::HloModule>> module =
        hlo::ParseHloModule(workload->hlo_text, row.measurement.id + ".hlo");
    Status verified = module.ok() ? hlo::VerifyModule(**module) : module.status();
    const arch::ChipConfig& chip = chips.at(family_chip.at(row.family));
    if (!verified.ok()) {
      out[i].skipped = "generated module: " + verified.message();
      continue;
    }
    timing::TimingOptions options;
    if (workload->collective) {
      const StatusOr<arch::TopologyConfig> topology = RowTopology(row.measurement, chip);
      StatusOr<std::unique_ptr<ici::Interconnect>> network =
          topology.ok() ? ici::Interconnect::Create(*topology, chip)
                        : StatusOr<std::unique_ptr<ici::Interconnect>>(topology.status());
      if (!network.ok()) {
        out[i].skipped =
            "topology " + Quote(row.measurement.topology) + ": " + network.status().message();
        continue;
      }
      networks.push_back(std::move(*network));
      options.interconnect = networks.back().get();
    }
    modules.push_back(std::move(*module));
    jobs.push_back({modules.back().get(), &chip, std::move(options)});
    job_row.push_back(i);
    timed.push_back(workload->timed_instruction);
  }
  const std::vector<StatusOr<timing::TimingResult>> results = timing::SimulateBatch(jobs);
  for (size_t j = 0; j < jobs.size(); ++j) {
    Prediction& p = out[job_row[j]];
    if (!results[j].ok()) {
      p.skipped = "timing: " + results[j].status().message();
      continue;
    }
    const timing::TimingResult& r = *results[j];
    if (timed[j].empty()) {
      p.us = r.time_us;
      p.bound_by = "module";
      continue;
    }
    int64_t cycles = -1;
    for (const timing::OpRecord& op : r.ops) {
      if (op.instruction->name() != timed[j]) continue;
      cycles = std::max<int64_t>(cycles, 0) + op.TotalCycles();
      p.bound_by = std::string(timing::BoundByName(op.bound_by));
    }
    if (cycles < 0) {
      p.skipped = "the timed instruction '" + timed[j] + "' did no work";
      continue;
    }
    p.us = static_cast<double>(cycles) * 1e6 / static_cast<double>(r.clock_hz);
  }
  return out;
}

/// Runs PredictShard for `shards` interleaved slices of `all` in child
/// processes and gathers their predictions in row order.
StatusOr<std::vector<Prediction>> PredictAll(
    const std::vector<ValidationRow>& all, const std::map<std::string, arch::ChipConfig>& chips,
    const std::map<std::string, std::string>& family_chip, int shards,
    const std::function<void(int64_t, int64_t)>& progress) {
  shards = std::max(1, std::min<int>(shards, static_cast<int>(std::max<size_t>(all.size(), 1))));
  std::vector<std::vector<size_t>> slices(shards);
  for (size_t i = 0; i < all.size(); ++i) slices[i % shards].push_back(i);
  struct Child {
    pid_t pid = -1;
    int fd = -1;
  };
  std::vector<Child> children;
  std::fflush(nullptr);
  for (int s = 0; s < shards; ++s) {
    int fds[2];
    if (pipe(fds) != 0) return Internal("validate: cannot create a pipe");
    const pid_t pid = fork();
    if (pid < 0) return Internal("validate: cannot fork a child process");
    if (pid == 0) {
      close(fds[0]);
      for (const Child& c : children) close(c.fd);
      const std::vector<Prediction> predictions = PredictShard(all, slices[s], chips, family_chip);
      std::string text;
      char number[64];
      for (size_t i = 0; i < predictions.size(); ++i) {
        std::snprintf(number, sizeof number, "%a", predictions[i].us);
        text += std::to_string(slices[s][i]) + "\t" + number + "\t" +
                OneLine(predictions[i].bound_by) + "\t" + OneLine(predictions[i].skipped) + "\n";
      }
      size_t written = 0;
      while (written < text.size()) {
        const ssize_t n = write(fds[1], text.data() + written, text.size() - written);
        if (n <= 0) _exit(3);
        written += static_cast<size_t>(n);
      }
      _exit(0);
    }
    close(fds[1]);
    children.push_back({pid, fds[0]});
  }
  std::vector<Prediction> predictions(all.size());
  std::vector<bool> seen(all.size(), false);
  int64_t done = 0;
  Status failure = Status::Ok();
  for (int s = 0; s < shards; ++s) {
    std::string text;
    char buffer[1 << 16];
    ssize_t n;
    while ((n = read(children[s].fd, buffer, sizeof buffer)) > 0) text.append(buffer, n);
    close(children[s].fd);
    int status = 0;
    waitpid(children[s].pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      failure = Internal("validate: a timing process failed (" +
                         (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                              : "exit " + std::to_string(WEXITSTATUS(status))) +
                         ")");
      continue;
    }
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
      std::vector<std::string> f;
      size_t start = 0;
      for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
        f.push_back(line.substr(start, tab - start));
      f.push_back(line.substr(start));
      const size_t index = f.size() == 4 ? std::stoul(f[0]) : all.size();
      if (index >= all.size()) return Internal("validate: a timing process wrote a bad line");
      predictions[index] = {std::strtod(f[1].c_str(), nullptr), f[2], f[3]};
      seen[index] = true;
    }
    done += static_cast<int64_t>(slices[s].size());
    if (progress) progress(done, static_cast<int64_t>(all.size()));
  }
  TPUSIM_RETURN_IF_ERROR(failure);
  for (size_t i = 0; i < all.size(); ++i) {
    if (!seen[i]) predictions[i].skipped = "no prediction came back";
  }
  return predictions;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

}  // namespace

FamilyStats ComputeStats(const std::vector<const ValidationRow*>& rows) {
  FamilyStats s;
  std::vector<double> abs_errors;
  double sum_x = 0, sum_y = 0, sum_xx = 0, sum_yy = 0, sum_xy = 0, bias = 0;
  for (const ValidationRow* row : rows) {
    if (!row->skipped.empty()) {
      ++s.skipped;
      continue;
    }
    const double e = row->Error() * 100;
    abs_errors.push_back(std::fabs(e));
    bias += e;
    const double x = std::log(row->measurement.measured_us);
    const double y = std::log(std::max(row->predicted_us, 1e-9));
    sum_x += x, sum_y += y, sum_xx += x * x, sum_yy += y * y, sum_xy += x * y;
  }
  s.rows = static_cast<int64_t>(abs_errors.size());
  if (s.rows == 0) return s;
  const double n = static_cast<double>(s.rows);
  for (double e : abs_errors) s.mape += e;
  s.mape /= n;
  s.bias = bias / n;
  s.median = Median(abs_errors);
  s.max = *std::max_element(abs_errors.begin(), abs_errors.end());
  const double cov = sum_xy - sum_x * sum_y / n;
  const double var_x = sum_xx - sum_x * sum_x / n;
  const double var_y = sum_yy - sum_y * sum_y / n;
  s.r2 = var_x > 0 && var_y > 0 ? cov * cov / (var_x * var_y) : 0;
  return s;
}

StatusOr<ValidationResult> RunValidation(const ValidationSuite& suite,
                                         const ValidationOptions& options) {
  const auto selected = [](const std::vector<std::string>& filter, const std::string& name) {
    return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
  };
  // Every name a filter gives must be a family's (or a family's chip).
  using Key = std::string ValidationFamily::*;
  for (const auto& [filter, key, what] :
       {std::tuple{&options.families, Key{&ValidationFamily::name}, "family"},
        std::tuple{&options.chips, Key{&ValidationFamily::chip}, "chip"}}) {
    std::set<std::string> known;
    for (const ValidationFamily& f : suite.families) known.insert(f.*key);
    for (const std::string& name : *filter) {
      if (known.contains(name)) continue;
      // In the suite's order, each once (families share chips).
      std::string list;
      std::set<std::string> listed;
      for (const ValidationFamily& f : suite.families) {
        if (listed.insert(f.*key).second) list += (list.empty() ? "" : ", ") + f.*key;
      }
      return InvalidArgument(suite.path + ": error: no " + what + " " + Quote(name) +
                             " in the suite (it has: " + list + ")");
    }
  }
  ValidationResult result;
  std::map<std::string, arch::ChipConfig> chips;
  std::map<std::string, std::string> family_chip;
  std::vector<const ValidationFamily*> families;
  for (const ValidationFamily& f : suite.families) {
    if (!selected(options.families, f.name) || !selected(options.chips, f.chip)) continue;
    families.push_back(&f);
    family_chip[f.name] = f.chip;
    if (!chips.contains(f.chip)) {
      TPUSIM_ASSIGN_OR_RETURN(arch::ChipConfig chip,
                              arch::LoadChipPreset(f.chip, options.models_dir, options.overrides));
      chips.emplace(f.chip, std::move(chip));
    }
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Measurement> measurements, LoadMeasurements(f.file));
    for (Measurement& m : measurements) {
      if (m.chip != f.chip) {
        return InvalidArgument(m.where + ": error: row " + Quote(m.id) + " is on chip " +
                               Quote(m.chip) + " but family " + Quote(f.name) + " compares on " +
                               Quote(f.chip));
      }
      result.rows.push_back({std::move(m), f.name, 0, "", ""});
    }
  }
  if (families.empty()) return InvalidArgument(suite.path + ": error: no family selected");
  TPUSIM_ASSIGN_OR_RETURN(
      std::vector<Prediction> predictions,
      PredictAll(result.rows, chips, family_chip, options.jobs, options.progress));
  for (size_t i = 0; i < result.rows.size(); ++i) {
    result.rows[i].predicted_us = predictions[i].us;
    result.rows[i].bound_by = predictions[i].bound_by;
    result.rows[i].skipped = predictions[i].skipped;
  }
  std::vector<const ValidationRow*> every;
  for (const ValidationFamily* f : families) {
    std::vector<const ValidationRow*> rows;
    for (const ValidationRow& row : result.rows) {
      if (row.family == f->name) rows.push_back(&row), every.push_back(&row);
    }
    FamilyStats s = ComputeStats(rows);
    s.name = f->name;
    s.chip = f->chip;
    s.description = f->description;
    s.max_mape = f->max_mape;
    s.target_mape = f->target_mape;
    result.families.push_back(std::move(s));
  }
  FamilyStats all = ComputeStats(every);
  all.name = "all";
  result.families.push_back(std::move(all));
  return result;
}

}  // namespace tpusim::harness
