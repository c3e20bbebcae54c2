#include "sim/hlo/module.h"

#include <bit>
#include <type_traits>
#include <utility>
#include <variant>

namespace tpusim::hlo {

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> computation) {
  computation->set_parent(this);
  HloComputation* added = computation.get();
  computations_.push_back(std::move(computation));
  // The first definition of a name wins; the parser rejects duplicates anyway.
  computations_by_name_.emplace(added->name(), added);
  return added;
}

HloComputation* HloModule::FindComputation(std::string_view name) const {
  auto it = computations_by_name_.find(name);
  return it == computations_by_name_.end() ? nullptr : it->second;
}

void HloModule::RenameComputation(HloComputation& computation, std::string name) {
  const auto it = computations_by_name_.find(computation.name());
  if (it != computations_by_name_.end() && it->second == &computation) {
    computations_by_name_.erase(it);
  }
  computation.name_ = std::move(name);
  computations_by_name_.emplace(computation.name(), &computation);
}

void HloModule::AssignUniqueIds() {
  int64_t next = 0;
  for (const auto& computation : computations_) {
    for (const auto& instruction : computation->instructions()) instruction->set_unique_id(next++);
  }
  instruction_count_ = next;
}

std::string HloModule::ErrorAt(SourceLocation loc, std::string_view message) const {
  return FormatError(filename_, loc, message);
}

std::string CallsNestTooDeeply() {
  return "calls nest too deeply (more than " + std::to_string(kMaxCallDepth) +
         " levels of calls, fusions, loops and reducers)";
}

namespace {

std::string Quoted(std::string_view s) {
  std::string out = "\"";
  out += s;
  out += '"';
  return out;
}

std::string NameOf(const HloComputation* c) { return c ? c->name() : std::string("<null>"); }
std::string NameOf(const HloInstruction* i) { return i ? i->name() : std::string("<null>"); }

/// Compares two modules and records the first difference. Instructions and
/// computations of the two modules are distinct objects, so every reference
/// (operand, control predecessor, called computation) is compared by name.
class ModuleComparer {
 public:
  explicit ModuleComparer(std::string* why) : why_(why) {}

  bool Modules(const HloModule& a, const HloModule& b) {
    if (a.name() != b.name()) {
      return Differ("module name " + Quoted(a.name()) + " vs " + Quoted(b.name()));
    }
    if (!Headers(a.header(), b.header())) return false;
    if (!StackFrames(a.stack_frames(), b.stack_frames())) return false;
    if (a.computations().size() != b.computations().size()) {
      return Differ("computation count " + std::to_string(a.computations().size()) + " vs " +
                    std::to_string(b.computations().size()));
    }
    if (NameOf(a.entry()) != NameOf(b.entry())) {
      return Differ("entry computation " + Quoted(NameOf(a.entry())) + " vs " +
                    Quoted(NameOf(b.entry())));
    }
    for (size_t i = 0; i < a.computations().size(); ++i) {
      if (!Computations(*a.computations()[i], *b.computations()[i], i)) return false;
    }
    return true;
  }

 private:
  bool Differ(std::string message) {
    if (why_) *why_ = std::move(message);
    return false;
  }

  bool Headers(const ModuleHeader& a, const ModuleHeader& b) {
    if (a == b) return true;
    const auto field = [&](const char* name, bool same) {
      return same || Differ(std::string("header attribute ") + Quoted(name) + " differs");
    };
    return field("is_scheduled", a.is_scheduled == b.is_scheduled) &&
           field("entry_computation_layout",
                 a.entry_computation_layout == b.entry_computation_layout) &&
           field("input_output_alias", a.input_output_alias == b.input_output_alias) &&
           field("buffer_donor", a.buffer_donor == b.buffer_donor) &&
           field("alias_passthrough_params",
                 a.alias_passthrough_params == b.alias_passthrough_params) &&
           field("replica_count", a.replica_count == b.replica_count) &&
           field("num_partitions", a.num_partitions == b.num_partitions) &&
           field("allow_spmd_sharding_propagation_to_parameters",
                 a.allow_spmd_sharding_propagation_to_parameters ==
                     b.allow_spmd_sharding_propagation_to_parameters) &&
           field("allow_spmd_sharding_propagation_to_output",
                 a.allow_spmd_sharding_propagation_to_output ==
                     b.allow_spmd_sharding_propagation_to_output) &&
           field("frontend_attributes", a.frontend_attributes == b.frontend_attributes) &&
           (a.unknown == b.unknown || Differ("unknown header attributes differ")) &&
           // Every value matched, so only the order they were written in differs.
           Differ("header attribute order differs");
  }

  bool StackFrames(const StackFrameTables& a, const StackFrameTables& b) {
    using Table = std::vector<StackFrameTables::Entry>;
    const auto table = [&](const char* name, const Table& x, const Table& y) {
      if (x.size() != y.size()) {
        return Differ(std::string(name) + " table size " + std::to_string(x.size()) + " vs " +
                      std::to_string(y.size()));
      }
      for (size_t i = 0; i < x.size(); ++i) {
        if (!(x[i] == y[i])) {
          return Differ(std::string(name) + " entry " + std::to_string(i) + " differs");
        }
      }
      return true;
    };
    return table("FileNames", a.file_names, b.file_names) &&
           table("FunctionNames", a.function_names, b.function_names) &&
           table("FileLocations", a.file_locations, b.file_locations) &&
           table("StackFrames", a.stack_frames, b.stack_frames);
  }

  bool Computations(const HloComputation& a, const HloComputation& b, size_t index) {
    if (a.name() != b.name()) {
      return Differ("computation " + std::to_string(index) + " name " + Quoted(a.name()) + " vs " +
                    Quoted(b.name()));
    }
    const std::string where = "computation " + Quoted(a.name());
    if (a.execution_thread() != b.execution_thread()) {
      return Differ(where + ": execution_thread " + Quoted(a.execution_thread()) + " vs " +
                    Quoted(b.execution_thread()));
    }
    if (a.instruction_count() != b.instruction_count()) {
      return Differ(where + ": instruction count " + std::to_string(a.instruction_count()) +
                    " vs " + std::to_string(b.instruction_count()));
    }
    if (NameOf(a.root()) != NameOf(b.root())) {
      return Differ(where + ": root " + Quoted(NameOf(a.root())) + " vs " +
                    Quoted(NameOf(b.root())));
    }
    for (int64_t i = 0; i < a.instruction_count(); ++i) {
      const HloInstruction& x = *a.instructions()[i];
      const HloInstruction& y = *b.instructions()[i];
      if (!Instructions(
              x, y, where + " instruction " + std::to_string(i) + " (" + Quoted(x.name()) + ")")) {
        return false;
      }
    }
    return true;
  }

  bool References(const std::vector<HloInstruction*>& a, const std::vector<HloInstruction*>& b,
                  const std::string& where, const char* what) {
    if (a.size() != b.size()) {
      return Differ(where + ": " + what + " count " + std::to_string(a.size()) + " vs " +
                    std::to_string(b.size()));
    }
    for (size_t i = 0; i < a.size(); ++i) {
      if (NameOf(a[i]) != NameOf(b[i])) {
        return Differ(where + ": " + what + " " + std::to_string(i) + " " + Quoted(NameOf(a[i])) +
                      " vs " + Quoted(NameOf(b[i])));
      }
    }
    return true;
  }

  bool Instructions(const HloInstruction& a, const HloInstruction& b, const std::string& where) {
    if (a.name() != b.name())
      return Differ(where + ": name " + Quoted(b.name()) + " in the other module");
    if (a.opcode() != b.opcode() || a.async_wrapped_opcode() != b.async_wrapped_opcode()) {
      return Differ(where + ": opcode " + a.OpcodeSpelling() + " vs " + b.OpcodeSpelling());
    }
    if (!(a.shape() == b.shape())) {
      return Differ(where + ": shape " + a.shape().ToString() + " vs " + b.shape().ToString());
    }
    if (a.parameter_number() != b.parameter_number()) {
      return Differ(where + ": parameter number " + std::to_string(a.parameter_number()) + " vs " +
                    std::to_string(b.parameter_number()));
    }
    if (!References(a.operands(), b.operands(), where, "operand")) return false;
    if (!References(a.control_predecessors(), b.control_predecessors(), where,
                    "control predecessor")) {
      return false;
    }
    if (a.has_literal() != b.has_literal() || (a.has_literal() && !(a.literal() == b.literal()))) {
      return Differ(where + ": literal differs");
    }
    if (a.attributes().size() != b.attributes().size()) {
      return Differ(where + ": attribute count " + std::to_string(a.attributes().size()) + " vs " +
                    std::to_string(b.attributes().size()));
    }
    for (size_t i = 0; i < a.attributes().size(); ++i) {
      const Attribute& x = a.attributes()[i];
      const Attribute& y = b.attributes()[i];
      if (x.id != y.id || x.spelling() != y.spelling()) {
        return Differ(where + ": attribute " + std::to_string(i) + " " + Quoted(x.spelling()) +
                      " vs " + Quoted(y.spelling()));
      }
      if (!SameValue(x.value, y.value)) {
        return Differ(where + ": attribute " + Quoted(x.spelling()) + " differs");
      }
    }
    return true;
  }

  static bool SameValue(const AttrValue& a, const AttrValue& b) {
    if (a.index() != b.index()) return false;
    return std::visit(
        [&b](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          const T& y = std::get<T>(b);
          if constexpr (std::is_same_v<T, HloComputation*>) {
            return NameOf(x) == NameOf(y);
          } else if constexpr (std::is_same_v<T, ComputationList>) {
            if (x.braced != y.braced || x.computations.size() != y.computations.size())
              return false;
            for (size_t i = 0; i < x.computations.size(); ++i) {
              if (NameOf(x.computations[i]) != NameOf(y.computations[i])) return false;
            }
            return true;
          } else if constexpr (std::is_same_v<T, double>) {
            // Bitwise, as for literals: NaN equals itself, -0 differs from 0.
            return std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
          } else {
            return x == y;
          }
        },
        a);
  }

  std::string* why_;
};

}  // namespace

bool ModulesEqual(const HloModule& a, const HloModule& b, std::string* why) {
  return ModuleComparer(why).Modules(a, b);
}

}  // namespace tpusim::hlo
