#include "harness/validate/workload_hlo.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace tpusim::harness {
namespace {

/// An array type read from a row's `shapes`, e.g. f16[1024,1024].
struct Array {
  std::string type;
  std::vector<int64_t> dims;
};

/// Every TYPE[d0,d1,...] in `text`, in order.
std::vector<Array> ArraysIn(std::string_view text) {
  std::vector<Array> arrays;
  size_t pos = 0;
  while ((pos = text.find('[', pos)) != std::string_view::npos) {
    size_t begin = pos;
    while (begin > 0 && std::isalnum(static_cast<unsigned char>(text[begin - 1]))) --begin;
    // "f16[M,K]xf16[K,N]": the 'x' after a ']' separates operands.
    if (begin > 0 && text[begin - 1] == ']' && text[begin] == 'x') ++begin;
    const size_t close = text.find(']', pos);
    if (close == std::string_view::npos) break;
    Array a{std::string(text.substr(begin, pos - begin)), {}};
    std::string_view list = text.substr(pos + 1, close - pos - 1);
    bool ok = !a.type.empty();
    while (ok && !list.empty()) {
      int64_t d = 0;
      const auto [end, ec] = std::from_chars(list.data(), list.data() + list.size(), d);
      ok = ec == std::errc() && d > 0;
      a.dims.push_back(d);
      list.remove_prefix(static_cast<size_t>(end - list.data()));
      if (ok && !list.empty()) {
        ok = list.front() == ',';
        list.remove_prefix(1);
      }
    }
    if (ok) arrays.push_back(std::move(a));
    pos = close + 1;
  }
  return arrays;
}

int64_t BitWidth(const std::string& type) {
  if (type == "pred" || type == "s8" || type == "u8" || type.starts_with("f8")) return 8;
  if (type == "f16" || type == "bf16" || type == "s16" || type == "u16") return 16;
  if (type == "f64" || type == "s64" || type == "u64") return 64;
  return 32;
}

/// The TPU backend's default minor_to_major order for an array of `dims`
/// (XLA docs/tiled_layout.md; tpu-facts.md §8): the dimensions on the lanes
/// and the sublanes are the pair that pads least to (8,128) tiles, the rest
/// major in row-major order; ties keep row-major. The backend picks entry
/// layouts that avoid padding: the published times of [..,32,32] and [128,8,8]
/// arrays show no lane padding.
std::vector<size_t> DefaultMinorToMajor(const std::vector<int64_t>& dims) {
  std::vector<size_t> order;
  for (size_t i = dims.size(); i-- > 0;) order.push_back(i);
  if (dims.size() < 2) return order;
  const auto padded = [&](size_t lane, size_t sublane) {
    int64_t elements = (dims[lane] + 127) / 128 * 128 * ((dims[sublane] + 7) / 8 * 8);
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i != lane && i != sublane) elements *= dims[i];
    }
    return elements;
  };
  size_t best_lane = dims.size() - 1, best_sublane = dims.size() - 2;
  for (size_t lane = dims.size(); lane-- > 0;) {
    for (size_t sublane = dims.size(); sublane-- > 0;) {
      if (sublane != lane && padded(lane, sublane) < padded(best_lane, best_sublane)) {
        best_lane = lane, best_sublane = sublane;
      }
    }
  }
  order = {best_lane, best_sublane};
  for (size_t i = dims.size(); i-- > 0;) {
    if (i != best_lane && i != best_sublane) order.push_back(i);
  }
  return order;
}

/// An array of `type` and `dims` as an HLO shape with minor_to_major `order`
/// and the backend's tiles: the two minor dimensions in (8,128) tiles, 16-bit
/// values packed in pairs along the second-minor dimension ((2,1) sub-tiles),
/// 8-bit in fours; rank-1 arrays tiled linearly.
std::string ShapeText(const std::string& type, const std::vector<int64_t>& dims,
                      const std::vector<size_t>& order) {
  std::string text = type + "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  text += "]";
  if (dims.empty()) return text;
  const int64_t bits = BitWidth(type);
  const std::string packing = bits == 16 ? "(2,1)" : bits == 8 ? "(4,1)" : "";
  text += "{";
  for (size_t i = 0; i < order.size(); ++i) text += (i ? "," : "") + std::to_string(order[i]);
  if (dims.size() == 1) {
    // Linear tiles of 1024 elements; short vectors are padded to 256 [XLA dumps].
    const std::string sub = bits == 16 ? "(128)(2,1)" : bits == 8 ? "(128)(4,1)" : "";
    text += dims[0] >= 1024 ? ":T(1024)" + sub : ":T(256)" + sub;
  } else {
    text += ":T(8,128)" + packing;
  }
  return text + "}";
}

/// `dims` of `type` in the backend's default tiled layout.
std::string ShapeText(const std::string& type, const std::vector<int64_t>& dims) {
  return ShapeText(type, dims, DefaultMinorToMajor(dims));
}

std::string ShapeText(const Array& a) { return ShapeText(a.type, a.dims); }

/// A scalar constant of `type` broadcast to `shape` as instruction `name`.
std::string Broadcast(const std::string& name, const std::string& type, const std::string& value,
                      const std::string& shape) {
  return "  " + name + "_c = " + type + "[] constant(" + value + ")\n  " + name + " = " + shape +
         " broadcast(" + name + "_c), dimensions={}\n";
}

/// `dims` without its last dimension.
std::vector<int64_t> Leading(const std::vector<int64_t>& dims) {
  return {dims.begin(), dims.end() - 1};
}

std::string Iota(size_t n) {
  std::string text;
  for (size_t i = 0; i < n; ++i) text += (i ? "," : "") + std::to_string(i);
  return text;
}

std::string Header(const Measurement& m) {
  std::string name;
  for (char c : m.id) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return "HloModule " + name +
         (m.devices > 1 ? ", num_partitions=" + std::to_string(m.devices) : "") + "\n\n";
}

/// The scalar computation add_TYPE, the reducer of sums over `type`.
std::string AddComputation(const std::string& type) {
  return "add_" + type + " {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  ROOT add = " + type + "[] add(a, b)\n}\n\n";
}

/// The body of the loop fusion XLA forms for a JAX activation of `param`
/// (shape `in`), ending in ROOT; empty for an activation it does not know.
std::string ActivationBody(const std::string& activation, const Array& in, const Array& out) {
  const std::string s = ShapeText(in);
  const std::string& t = in.type;
  const std::string pred = ShapeText("pred", in.dims);
  const std::string compare = Broadcast("zero", t, "0", s) + "  positive = " + pred +
                              " compare(param_0, zero), direction=GT\n";
  if (activation == "relu")
    return Broadcast("zero", t, "0", s) + "  ROOT maximum = " + s + " maximum(param_0, zero)\n";
  if (activation == "sigmoid") {
    return "  negate = " + s + " negate(param_0)\n  exponential = " + s + " exponential(negate)\n" +
           Broadcast("one", t, "1", s) + "  add = " + s +
           " add(one, exponential)\n  ROOT divide = " + s + " divide(one, add)\n";
  }
  if (activation == "leaky_relu") {
    return Broadcast("slope", t, "0.1", s) + "  multiply = " + s +
           " multiply(slope, param_0)\n  ROOT maximum = " + s + " maximum(multiply, param_0)\n";
  }
  if (activation == "parametric_relu") {
    return compare + Broadcast("slope", t, "0.25", s) + "  multiply = " + s +
           " multiply(param_0, slope)\n  ROOT select = " + s +
           " select(positive, param_0, multiply)\n";
  }
  const std::string expm1 = "  exponential = " + s + " exponential(param_0)\n" +
                            Broadcast("one", t, "1", s) + "  subtract = " + s +
                            " subtract(exponential, one)\n";
  if (activation == "elu") {
    return compare + expm1 + "  ROOT select = " + s + " select(positive, param_0, subtract)\n";
  }
  if (activation == "selu") {
    return compare + expm1 + Broadcast("alpha", t, "1.6733", s) + "  negative = " + s +
           " multiply(subtract, alpha)\n  select = " + s +
           " select(positive, param_0, negative)\n" + Broadcast("scale", t, "1.0507", s) +
           "  ROOT multiply = " + s + " multiply(select, scale)\n";
  }
  if (activation == "binary_step") {
    const std::string o = ShapeText(out);
    return compare + Broadcast("one", out.type, "1", o) + Broadcast("none", out.type, "0", o) +
           "  ROOT select = " + o + " select(positive, one, none)\n";
  }
  return "";
}

/// The word after "jnp " in a row's note: the JAX function that was timed.
std::string JaxFunction(const std::string& note) {
  const size_t at = note.find("jnp ");
  if (at == std::string::npos) return "";
  size_t end = at + 4;
  while (end < note.size() &&
         (std::isalnum(static_cast<unsigned char>(note[end])) || note[end] == '_'))
    ++end;
  return note.substr(at + 4, end - at - 4);
}

Workload Single(const Measurement& m, const std::string& fused, const std::string& entry,
                const std::string& timed) {
  return {Header(m) + fused + "ENTRY main {\n" + entry + "}\n", timed};
}

/// The layer-norm or RMS-norm module over the last axis: reductions in f32,
/// then the normalised f32 output (the fusions the row's note names).
Workload Normalisation(const Measurement& m, const Array& x, bool layer_norm) {
  const std::string xs = ShapeText(x);
  const std::vector<int64_t> rows = Leading(x.dims);
  const std::string r = ShapeText("f32", rows);
  const std::string f = ShapeText("f32", x.dims);
  const std::string keep = Iota(rows.size());
  const std::string last = std::to_string(x.dims.size() - 1);
  char scale[32];
  std::snprintf(scale, sizeof scale, "%.9g", 1.0 / static_cast<double>(x.dims.back()));
  std::string text = AddComputation("f32");
  const std::string reduce = "  zero = f32[] constant(0)\n  ROOT reduce = " + r +
                             " reduce(VALUE, zero), dimensions={" + last + "}, to_apply=add_f32\n";
  const auto reduce_of = [&](const std::string& value) {
    std::string body = reduce;
    body.replace(body.find("VALUE"), 5, value);
    return body;
  };
  const std::string convert = "  convert = " + f + " convert(param_0)\n";
  if (layer_norm) {
    text += "convert_reduce_computation {\n  param_0 = " + xs + " parameter(0)\n" + convert +
            reduce_of("convert") + "}\n\n";
    text += "mean_computation {\n  param_0 = " + r + " parameter(0)\n" +
            Broadcast("scale", "f32", scale, r) + "  ROOT multiply = " + r +
            " multiply(param_0, scale)\n}\n\n";
    text += "variance_computation {\n  param_0 = " + xs + " parameter(0)\n  param_1 = " + r +
            " parameter(1)\n" + convert + "  mean = " + f + " broadcast(param_1), dimensions={" +
            keep + "}\n  centred = " + f + " subtract(convert, mean)\n  square = " + f +
            " multiply(centred, centred)\n" + reduce_of("square") + "}\n\n";
    text += "deviation_computation {\n  param_0 = " + r + " parameter(0)\n" +
            Broadcast("scale", "f32", scale, r) + "  variance = " + r +
            " multiply(param_0, scale)\n" + Broadcast("epsilon", "f32", "1e-05", r) +
            "  add = " + r + " add(variance, epsilon)\n  ROOT sqrt = " + r + " sqrt(add)\n}\n\n";
    text += "divide_convert_computation {\n  param_0 = " + xs + " parameter(0)\n  param_1 = " + r +
            " parameter(1)\n  param_2 = " + r + " parameter(2)\n" + convert + "  mean = " + f +
            " broadcast(param_1), dimensions={" + keep + "}\n  centred = " + f +
            " subtract(convert, mean)\n  deviation = " + f + " broadcast(param_2), dimensions={" +
            keep + "}\n  ROOT divide = " + f + " divide(centred, deviation)\n}\n\n";
    text +=
        "ENTRY main {\n  x = " + xs + " parameter(0)\n  convert_reduce_fusion = " + r +
        " fusion(x), kind=kInput, calls=convert_reduce_computation\n  fusion.4 = " + r +
        " fusion(convert_reduce_fusion), kind=kLoop, calls=mean_computation\n  fusion.1 = " + r +
        " fusion(x, fusion.4), kind=kInput, calls=variance_computation\n  fusion.3 = " + r +
        " fusion(fusion.1), kind=kLoop, calls=deviation_computation\n  ROOT "
        "divide_convert_fusion = " +
        f + " fusion(x, fusion.4, fusion.3), kind=kLoop, calls=divide_convert_computation\n}\n";
  } else {
    text += "convert_reduce_computation {\n  param_0 = " + xs + " parameter(0)\n" + convert +
            "  square = " + f + " multiply(convert, convert)\n" + reduce_of("square") + "}\n\n";
    text += "add_sqrt_computation {\n  param_0 = " + r + " parameter(0)\n" +
            Broadcast("scale", "f32", scale, r) + "  mean = " + r + " multiply(param_0, scale)\n" +
            Broadcast("epsilon", "f32", "1e-05", r) + "  add = " + r +
            " add(mean, epsilon)\n  ROOT sqrt = " + r + " sqrt(add)\n}\n\n";
    text += "divide_convert_computation {\n  param_0 = " + xs + " parameter(0)\n  param_1 = " + r +
            " parameter(1)\n" + convert + "  root = " + f + " broadcast(param_1), dimensions={" +
            keep + "}\n  ROOT divide = " + f + " divide(convert, root)\n}\n\n";
    text += "ENTRY main {\n  x = " + xs + " parameter(0)\n  convert_reduce_fusion = " + r +
            " fusion(x), kind=kInput, calls=convert_reduce_computation\n  add_sqrt_fusion = " + r +
            " fusion(convert_reduce_fusion), kind=kLoop, calls=add_sqrt_computation\n  ROOT "
            "divide_convert_fusion = " +
            f + " fusion(x, add_sqrt_fusion), kind=kLoop, calls=divide_convert_computation\n}\n";
  }
  return {Header(m) + text, ""};
}

/// The D of "dimensions={D}" in `text`; -1 when it has none.
int64_t DimensionIn(std::string_view text) {
  constexpr std::string_view kKey = "dimensions={";
  const size_t at = text.find(kKey);
  if (at == std::string_view::npos) return -1;
  int64_t d = -1;
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(text.data() + at + kKey.size(), last, d);
  return ec == std::errc() && end != last && *end == '}' ? d : -1;
}

/// One collective across the row's devices under shard_map, timed alone (as
/// the slope of a loop of them is): lax.ppermute (`groups` holds its
/// source_target_pairs), all_gather, psum, psum_scatter and all_to_all (`groups`
/// holds their replica groups of global device ids; empty: every device).
StatusOr<Workload> Collective(const Measurement& m, const std::vector<Array>& arrays) {
  const std::string& op = m.op;
  const auto invalid = [&](const std::string& what) {
    return InvalidArgument(m.where + ": error: row " + Quote(m.id) + ": " + what);
  };
  if (arrays.size() < 2) {
    return invalid("expected the operand and result shapes ('T[..] -> T[..]') in " +
                   Quote(m.shapes));
  }
  const Array& in = arrays[0];
  const Array& out = arrays[1];
  if (m.devices < 2) return invalid(Quote(op) + " needs devices >= 2");
  std::string attributes = "channel_id=1, ";
  std::string reducer;
  if (op == "collective-permute") {
    if (m.groups.empty()) {
      return invalid(
          "a collective-permute needs its source_target_pairs in `groups`, e.g. "
          "{{0,1},{1,0}}");
    }
    attributes += "source_target_pairs=" + m.groups;
  } else {
    attributes +=
        "replica_groups=" +
        (m.groups.empty() ? "{{" + Iota(static_cast<size_t>(m.devices)) + "}}" : m.groups) +
        ", use_global_device_ids=true";
  }
  if (op == "all-reduce" || op == "reduce-scatter") {
    reducer = AddComputation(out.type);
    attributes += ", to_apply=add_" + out.type;
  }
  if (op == "all-gather" || op == "reduce-scatter" || op == "all-to-all") {
    // Stated ("dimensions={1}" in the shapes), else the one dimension the
    // op resizes; all_to_all keeps its shape and splits dimension 0.
    int64_t dimension = DimensionIn(m.shapes);
    for (size_t d = 0; dimension < 0 && d < std::min(in.dims.size(), out.dims.size()); ++d) {
      if (in.dims[d] != out.dims[d]) dimension = static_cast<int64_t>(d);
    }
    dimension = std::max<int64_t>(dimension, 0);
    if (dimension >= static_cast<int64_t>(in.dims.size())) {
      return invalid("dimensions={" + std::to_string(dimension) +
                     "} is out of the operand's rank " + std::to_string(in.dims.size()));
    }
    attributes += ", dimensions={" + std::to_string(dimension) + "}";
  }
  Workload workload = Single(m, reducer,
                             "  x = " + ShapeText(in) + " parameter(0)\n  ROOT " + op + " = " +
                                 ShapeText(out) + " " + op + "(x), " + attributes + "\n",
                             op);
  workload.collective = true;
  return workload;
}

Status Unsupported(const Measurement& m, const std::string& what) {
  return Unimplemented(m.where + ": error: row " + Quote(m.id) + ": no HLO generator for " + what);
}

}  // namespace

StatusOr<Workload> WorkloadFor(const Measurement& m) {
  const std::vector<Array> arrays = ArraysIn(m.shapes);
  const auto need = [&](size_t n) -> Status {
    if (arrays.size() >= n) return Status::Ok();
    return InvalidArgument(m.where + ": error: row " + Quote(m.id) + ": expected " +
                           std::to_string(n) + " array shapes in " + Quote(m.shapes));
  };
  const std::string& op = m.op;
  if (op == "dot") {
    // XLA's TPU backend emits a matmul as an output fusion around a
    // convolution with batch/feature labels, and a batched one ([B..,M,K] x
    // [B..,K,N]) around a dot with batch dimensions; an f32-accumulated product
    // converted to a narrower result converts inside the same fusion.
    TPUSIM_RETURN_IF_ERROR(need(3));
    const Array& lhs = arrays[0];
    const Array& rhs = arrays[1];
    const Array& out = arrays[2];
    const size_t rank = lhs.dims.size();
    bool shaped = rank >= 2 && rhs.dims.size() == rank && out.dims.size() == rank &&
                  lhs.dims[rank - 1] == rhs.dims[rank - 2] &&
                  out.dims[rank - 2] == lhs.dims[rank - 2] &&
                  out.dims[rank - 1] == rhs.dims[rank - 1];
    for (size_t d = 0; shaped && d + 2 < rank; ++d) {
      shaped = lhs.dims[d] == rhs.dims[d] && out.dims[d] == lhs.dims[d];
    }
    if (!shaped) {
      return InvalidArgument(m.where + ": error: row " + Quote(m.id) +
                             ": expected [M,K]x[K,N] -> [M,N] shapes (batched: [B,M,K]x[B,K,N] -> "
                             "[B,M,N]), got " +
                             Quote(m.shapes));
    }
    const std::string batch = Iota(rank - 2);
    const std::string product =
        rank == 2
            ? "convolution(param_0, param_1), dim_labels=bf_io->bf"
            : "dot(param_0, param_1), lhs_batch_dims={" + batch + "}, lhs_contracting_dims={" +
                  std::to_string(rank - 1) + "}, rhs_batch_dims={" + batch +
                  "}, rhs_contracting_dims={" + std::to_string(rank - 2) + "}";
    // jax.lax.Precision, as `dtype` may state it: HIGH and HIGHEST take 3
    // and 6 bf16 passes; DEFAULT (unstated) one.
    const auto stated = [&](std::string_view word) {
      const size_t at = m.dtype.find(word);
      const size_t end = at + word.size();
      return at != std::string::npos &&
             (end == m.dtype.size() || !std::isalpha(static_cast<unsigned char>(m.dtype[end])));
    };
    const std::string precision = stated("HIGHEST") ? ", operand_precision={highest,highest}"
                                  : stated("HIGH")  ? ", operand_precision={high,high}"
                                                    : "";
    const std::string name = rank == 2 ? "convolution" : "dot";
    const bool f32_accumulation = m.dtype.find("f32 acc") != std::string::npos && out.type != "f32";
    std::string fused = "fused_computation {\n  param_0 = " + ShapeText(lhs) +
                        " parameter(0)\n  param_1 = " + ShapeText(rhs) + " parameter(1)\n";
    if (f32_accumulation) {
      fused += "  " + name + " = " + ShapeText("f32", out.dims) + " " + product + precision +
               "\n  ROOT convert = " + ShapeText(out) + " convert(" + name + ")\n}\n\n";
    } else {
      fused += "  ROOT " + name + " = " + ShapeText(out) + " " + product + precision + "\n}\n\n";
    }
    return Single(m, fused,
                  "  lhs = " + ShapeText(lhs) + " parameter(0)\n  rhs = " + ShapeText(rhs) +
                      " parameter(1)\n  ROOT fusion = " + ShapeText(out) +
                      " fusion(lhs, rhs), kind=kOutput, calls=fused_computation\n",
                  "fusion");
  }
  if (op == "add" || op == "subtract" || op == "multiply" || op == "divide") {
    TPUSIM_RETURN_IF_ERROR(need(3));
    return Single(m, "",
                  "  x = " + ShapeText(arrays[0]) + " parameter(0)\n  y = " + ShapeText(arrays[1]) +
                      " parameter(1)\n  ROOT " + op + " = " + ShapeText(arrays[2]) + " " + op +
                      "(x, y)\n",
                  op);
  }
  if (op == "copy" || op == "tanh") {
    TPUSIM_RETURN_IF_ERROR(need(2));
    return Single(m, "",
                  "  x = " + ShapeText(arrays[0]) + " parameter(0)\n  ROOT " + op + " = " +
                      ShapeText(arrays[1]) + " " + op + "(x)\n",
                  op);
  }
  if (op == "collective-permute" || op == "all-gather" || op == "all-reduce" ||
      op == "reduce-scatter" || op == "all-to-all") {
    return Collective(m, arrays);
  }
  if (op == "reduce-window") {
    // Average pooling's window sum (the /4 is a separate fusion, not timed).
    TPUSIM_RETURN_IF_ERROR(need(2));
    const size_t size = m.shapes.find("size=");
    const size_t stride = m.shapes.find("stride=");
    if (size == std::string::npos || stride == std::string::npos) {
      return InvalidArgument(m.where + ": error: row " + Quote(m.id) +
                             ": expected 'window=size=AxB.. stride=AxB..' in the shapes");
    }
    const auto word = [&](size_t at) {
      size_t end = at;
      while (end < m.shapes.size() &&
             (std::isdigit(static_cast<unsigned char>(m.shapes[end])) || m.shapes[end] == 'x'))
        ++end;
      return m.shapes.substr(at, end - at);
    };
    const std::string& t = arrays[0].type;
    // Layout assignment gives reduce-window's operand the layout of its
    // result; where that is not the parameter's, XLA inserts a relayout copy
    // before it. The published rows time the reduce-window alone (their notes
    // list that copy exactly where the two layouts differ), so the operand
    // here is already in the result's layout.
    const std::string operand =
        ShapeText(t, arrays[0].dims, DefaultMinorToMajor(arrays[1].dims));
    return Single(m, AddComputation(t),
                  "  x = " + operand + " parameter(0)\n  zero = " + t +
                      "[] constant(0)\n  ROOT reduce-window = " + ShapeText(arrays[1]) +
                      " reduce-window(x, zero), window={size=" + word(size + 5) +
                      " stride=" + word(stride + 7) + "}, to_apply=add_" + t + "\n",
                  "reduce-window");
  }
  if (op == "module[layer_norm]" || op == "module[rms_norm]") {
    TPUSIM_RETURN_IF_ERROR(need(1));
    if (arrays[0].dims.size() < 2) {
      return InvalidArgument(m.where + ": error: row " + Quote(m.id) +
                             ": expected a rank >= 2 input");
    }
    return Normalisation(m, arrays[0], op == "module[layer_norm]");
  }
  if (op.starts_with("fusion[")) {
    TPUSIM_RETURN_IF_ERROR(need(2));
    const Array& in = arrays[0];
    const Array& out = arrays[1];
    std::string body;
    if (m.note.find("batch_norm") != std::string::npos) {
      // Inference with mean 0, variance 1, scale 1, offset 0: XLA folds it to
      // a convert and one multiply by 1/sqrt(1 + epsilon).
      body = "  convert = " + ShapeText("f32", in.dims) + " convert(param_0)\n" +
             Broadcast("scale", "f32", "0.999995", ShapeText("f32", in.dims)) +
             "  ROOT multiply = " + ShapeText(out) + " multiply(convert, scale)\n";
    } else {
      body = ActivationBody(JaxFunction(m.note), in, out);
    }
    if (body.empty()) return Unsupported(m, Quote(op) + " (" + JaxFunction(m.note) + ")");
    return Single(
        m, "fused_computation {\n  param_0 = " + ShapeText(in) + " parameter(0)\n" + body + "}\n\n",
        "  x = " + ShapeText(in) + " parameter(0)\n  ROOT fusion = " + ShapeText(out) +
            " fusion(x), kind=kLoop, calls=fused_computation\n",
        "fusion");
  }
  return Unsupported(m, "op " + Quote(op));
}

}  // namespace tpusim::harness
