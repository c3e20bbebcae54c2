// A module that nests computations as deep as a test asks, for the checks
// that no walk over calls, fusions or loops recurses as deep as its input.
#ifndef TPUSIM_TESTS_HLO_NESTED_MODULE_H_
#define TPUSIM_TESTS_HLO_NESTED_MODULE_H_

#include <string>

namespace tpusim::test {

/// A module whose entry reaches `depth` computations nested in one another,
/// each level through `how`: "call" (call to_apply=), "fusion" or "while"
/// (a loop whose body holds the next level and runs once).
inline std::string NestedModule(int depth, const std::string& how) {
  std::string text = "HloModule nested\n\n";
  text += "c0 {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n"
          "  ROOT r = s32[] add(p, one)\n}\n";
  text += "cond {\n  p = s32[] parameter(0)\n  ten = s32[] constant(10)\n"
          "  ROOT lt = pred[] compare(p, ten), direction=LT\n}\n";
  auto level = [&](int callee) {
    const std::string c = "c" + std::to_string(callee);
    if (how == "call") return "call(p), to_apply=" + c;
    if (how == "fusion") return "fusion(p), kind=kLoop, calls=" + c;
    return "while(p), condition=cond, body=" + c;
  };
  for (int i = 1; i < depth; ++i) {
    text += "c" + std::to_string(i) + " {\n  p = s32[] parameter(0)\n  ROOT r = s32[] " +
            level(i - 1) + "\n}\n";
  }
  return text + "ENTRY main {\n  p = s32[] parameter(0)\n  ROOT r = s32[] " + level(depth - 1) +
         "\n}\n";
}

}  // namespace tpusim::test

#endif  // TPUSIM_TESTS_HLO_NESTED_MODULE_H_
