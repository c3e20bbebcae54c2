// How `tpusim validate` shows its result: a per-family table and the worst
// rows for a person, JSON for tools, and an HTML page with a predicted
// against measured scatter plot (the style of `tpusim run --report`).
#ifndef TPUSIM_HARNESS_VALIDATE_VALIDATION_REPORT_H_
#define TPUSIM_HARNESS_VALIDATE_VALIDATION_REPORT_H_

#include <iosfwd>
#include <string>

#include "harness/validate/validation.h"

namespace tpusim::harness {

/// The family table (n, MAPE, median and max |error|, bias, r², bound, target)
/// and the `worst` rows by |error| with what bounded each.
void PrintValidationTables(const ValidationResult& result, int worst, std::ostream& out);

/// Every row and every family's statistics as one JSON document.
std::string ValidationJson(const ValidationResult& result);

/// A self-contained HTML page: the family table, the log-log scatter of
/// predicted against measured (one colour per family) and the worst rows.
std::string ValidationHtml(const ValidationResult& result, int worst);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_VALIDATE_VALIDATION_REPORT_H_
