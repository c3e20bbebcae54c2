// Helpers for evaluator tests: parse an inline HLO module and evaluate it.
#ifndef TPUSIM_TESTS_EVAL_EVAL_TEST_UTIL_H_
#define TPUSIM_TESTS_EVAL_EVAL_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "sim/eval/evaluator.h"
#include "sim/hlo/parser.h"
#include "sim/value/literal.h"

namespace tpusim::eval::testing {

/// Parses `text` and evaluates it; the status of whichever step failed.
inline StatusOr<value::Literal> TryEval(std::string_view text,
                                        std::vector<value::Literal> args = {},
                                        EvaluatorOptions options = {}) {
  auto module = hlo::ParseHloModule(text);
  if (!module.ok()) return module.status();
  return Evaluator(options).Evaluate(**module, args);
}

/// Parses and evaluates `text`, failing the test on any error (the result is
/// then the empty tuple, which no test expects).
inline value::Literal Eval(std::string_view text, std::vector<value::Literal> args = {},
                           EvaluatorOptions options = {}) {
  StatusOr<value::Literal> result = TryEval(text, std::move(args), options);
  if (!result.ok()) {
    ADD_FAILURE() << result.status().message();
    return value::Literal();
  }
  return std::move(result).value();
}

template <typename T>
value::Literal R1(std::initializer_list<T> values) {
  return value::Literal::CreateR1<T>(values);
}

}  // namespace tpusim::eval::testing

#endif  // TPUSIM_TESTS_EVAL_EVAL_TEST_UTIL_H_
