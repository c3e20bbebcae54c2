#include "sim/value/npy.h"

#include <sys/stat.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "sim/base/file.h"
#include "sim/value/python_literal.h"

namespace tpusim::value {
namespace {

using hlo::PrimitiveType;
using internal::PyValue;

static_assert(std::endian::native == std::endian::little,
              "npy I/O copies little-endian file data straight into literals");

constexpr std::string_view kMagic = "\x93NUMPY";
/// Magic, two version bytes and the shortest (v1.0) header-length field.
constexpr size_t kMinPreamble = 10;

/// The ml_dtypes name of each element type numpy lacks; it names the single
/// field of the structured dtype these types are written as.
std::string_view MlDtypesName(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kBF16:
      return "bfloat16";
    case PrimitiveType::kF8E5M2:
      return "float8_e5m2";
    case PrimitiveType::kF8E4M3:
      return "float8_e4m3";
    case PrimitiveType::kF8E4M3FN:
      return "float8_e4m3fn";
    case PrimitiveType::kF8E4M3B11FNUZ:
      return "float8_e4m3b11fnuz";
    case PrimitiveType::kF8E5M2FNUZ:
      return "float8_e5m2fnuz";
    case PrimitiveType::kF8E4M3FNUZ:
      return "float8_e4m3fnuz";
    case PrimitiveType::kF8E3M4:
      return "float8_e3m4";
    case PrimitiveType::kF8E8M0FNU:
      return "float8_e8m0fnu";
    case PrimitiveType::kF4E2M1FN:
      return "float4_e2m1fn";
    case PrimitiveType::kPred: case PrimitiveType::kS1: case PrimitiveType::kS2:
    case PrimitiveType::kS4: case PrimitiveType::kS8: case PrimitiveType::kS16:
    case PrimitiveType::kS32: case PrimitiveType::kS64: case PrimitiveType::kU1:
    case PrimitiveType::kU2: case PrimitiveType::kU4: case PrimitiveType::kU8:
    case PrimitiveType::kU16: case PrimitiveType::kU32: case PrimitiveType::kU64:
    case PrimitiveType::kF16: case PrimitiveType::kF32: case PrimitiveType::kF64:
    case PrimitiveType::kC64: case PrimitiveType::kC128: case PrimitiveType::kToken:
    case PrimitiveType::kOpaque:
      return {};
  }
  return {};  // unreachable: every PrimitiveType returns above
}

/// The numpy type string of a type numpy has, e.g. "<f4"; empty otherwise.
std::string NumpyTypeString(PrimitiveType type) {
  const int64_t size = ElementByteSize(type);
  const char order = size == 1 ? '|' : '<';
  switch (hlo::KindOf(type)) {
    case hlo::PrimitiveKind::kPred:
      return "|b1";
    case hlo::PrimitiveKind::kSigned:
      return order + std::string("i") + std::to_string(size);
    case hlo::PrimitiveKind::kUnsigned:
      return order + std::string("u") + std::to_string(size);
    case hlo::PrimitiveKind::kComplex:
      return "<c" + std::to_string(size);
    case hlo::PrimitiveKind::kFloat:
      if (!MlDtypesName(type).empty()) return {};
      return "<f" + std::to_string(size);
    case hlo::PrimitiveKind::kNonArray:
      return {};
  }
  return {};
}

/// What the header says one element is.
struct FileElement {
  std::string descr;                  ///< as written, for messages
  std::optional<PrimitiveType> type;  ///< unset for raw bytes ('V')
  int64_t size = 0;
};

/// What the header asks the reader to build.
struct Plan {
  PrimitiveType type = PrimitiveType::kF32;
  std::vector<int64_t> dims;
  int64_t data_bytes = 0;
};

class NpyError {
 public:
  explicit NpyError(std::string_view name) : prefix_(std::string(name) + ": error: ") {}
  Status Invalid(const std::string& what) const { return InvalidArgument(prefix_ + what); }
  Status Unsupported(const std::string& what) const { return Unimplemented(prefix_ + what); }
  Status TooBig(const std::string& what) const { return ResourceExhausted(prefix_ + what); }

 private:
  std::string prefix_;
};

/// Parses a numpy type string such as '<f4', '|u1' or '|V2'.
StatusOr<FileElement> ParseTypeString(const std::string& descr, const NpyError& err) {
  FileElement element;
  element.descr = descr;
  std::string_view rest = descr;
  char order = '=';
  if (!rest.empty() && (rest[0] == '<' || rest[0] == '>' || rest[0] == '|' || rest[0] == '=')) {
    order = rest[0];
    rest.remove_prefix(1);
  }
  if (rest.size() < 2 || rest.size() > 3) return err.Invalid("unsupported dtype '" + descr + "'");
  const char kind = rest[0];
  int64_t size = 0;
  for (char c : rest.substr(1)) {
    if (c < '0' || c > '9') return err.Invalid("unsupported dtype '" + descr + "'");
    size = size * 10 + (c - '0');
  }
  element.size = size;
  if (order == '>' && size > 1 && kind != 'V') {
    return err.Unsupported(
        "big-endian dtype '" + descr +
        "' is not supported; save it little-endian, e.g. arr.astype(arr.dtype.newbyteorder('<'))");
  }
  auto set = [&](PrimitiveType t) -> StatusOr<FileElement> {
    element.type = t;
    return element;
  };
  switch (kind) {
    case 'b':
      if (size == 1) return set(PrimitiveType::kPred);
      break;
    case 'i':
      if (size == 1) return set(PrimitiveType::kS8);
      if (size == 2) return set(PrimitiveType::kS16);
      if (size == 4) return set(PrimitiveType::kS32);
      if (size == 8) return set(PrimitiveType::kS64);
      break;
    case 'u':
      if (size == 1) return set(PrimitiveType::kU8);
      if (size == 2) return set(PrimitiveType::kU16);
      if (size == 4) return set(PrimitiveType::kU32);
      if (size == 8) return set(PrimitiveType::kU64);
      break;
    case 'f':
      if (size == 2) return set(PrimitiveType::kF16);
      if (size == 4) return set(PrimitiveType::kF32);
      if (size == 8) return set(PrimitiveType::kF64);
      break;
    case 'c':
      if (size == 8) return set(PrimitiveType::kC64);
      if (size == 16) return set(PrimitiveType::kC128);
      break;
    case 'V':
      if (size == 1 || size == 2) return element;  // raw bits of a narrow float
      break;
    default:
      break;
  }
  return err.Invalid("unsupported dtype '" + descr + "'");
}

/// Parses the 'descr' value: a type string, or our one-field structured dtype
/// `[('bfloat16', '<u2')]` holding the raw bits of a narrow float.
StatusOr<FileElement> ParseDescr(const PyValue& descr, const NpyError& err) {
  if (descr.kind == PyValue::Kind::kString) return ParseTypeString(descr.string, err);
  if (descr.kind != PyValue::Kind::kList) {
    return err.Invalid(std::string("'descr' is ") + internal::PyKindName(descr.kind) +
                       ", expected a dtype string or a list of fields");
  }
  const bool one_named_field =
      descr.items.size() == 1 && descr.items[0].kind == PyValue::Kind::kTuple &&
      descr.items[0].items.size() == 2 && descr.items[0].items[0].kind == PyValue::Kind::kString &&
      descr.items[0].items[1].kind == PyValue::Kind::kString;
  if (!one_named_field) {
    return err.Unsupported(
        "structured dtypes are not supported, except one field named after "
        "an ml_dtypes type, e.g. [('bfloat16', '<u2')]");
  }
  const std::string& name = descr.items[0].items[0].string;
  const std::string& field = descr.items[0].items[1].string;
  for (int t = 0; t < hlo::kPrimitiveTypeCount; ++t) {
    const auto type = static_cast<PrimitiveType>(t);
    // Types numpy has have no ml_dtypes name; a field named '' must not match them.
    if (MlDtypesName(type).empty() || MlDtypesName(type) != name) continue;
    TPUSIM_ASSIGN_OR_RETURN(FileElement bits, ParseTypeString(field, err));
    const int64_t size = ElementByteSize(type);
    if (!bits.type || !hlo::IsUnsignedInt(*bits.type) || bits.size != size) {
      return err.Invalid("field '" + name + "' has dtype '" + field + "', expected the " +
                         std::to_string(size) + "-byte unsigned integer holding its bits");
    }
    FileElement element;
    element.descr = "[('" + name + "', '" + field + "')]";
    element.type = type;
    element.size = size;
    return element;
  }
  return err.Unsupported("structured dtype field '" + name + "' is not an ml_dtypes type name");
}

/// Decides the literal's element type from the file's and the caller's.
StatusOr<PrimitiveType> Resolve(const FileElement& file, const NpyReadOptions& options,
                                const NpyError& err) {
  if (!options.element_type) {
    if (!file.type) {
      return err.Invalid(
          "dtype '" + file.descr +
          "' is raw bytes of unknown type; the reader must be told the element type");
    }
    return *file.type;
  }
  const PrimitiveType want = *options.element_type;
  if (file.type == want) return want;
  // Raw bits of a narrow float: 'V' bytes or an unsigned integer of its size.
  if (IsNarrowFloat(want) && want != PrimitiveType::kF16 && file.size == ElementByteSize(want) &&
      (!file.type || hlo::IsUnsignedInt(*file.type))) {
    return want;
  }
  // Sub-byte integers travel one per byte; ApplyFixup checks their range.
  const bool sub_byte = hlo::IsInteger(want) && hlo::PrimitiveTypeBitWidth(want) < 8;
  if (sub_byte && file.type == (hlo::IsSignedInt(want) ? PrimitiveType::kS8 : PrimitiveType::kU8)) {
    return want;
  }
  return err.Invalid("dtype '" + file.descr + "' does not hold " +
                     std::string(hlo::PrimitiveTypeName(want)) + " values");
}

/// Reads the dims from the 'shape' tuple and sizes the data.
Status ParseShape(const PyValue& shape, Plan& plan, const NpyError& err) {
  if (shape.kind != PyValue::Kind::kTuple) {
    return err.Invalid(std::string("'shape' is ") + internal::PyKindName(shape.kind) +
                       ", expected a tuple of sizes");
  }
  bool empty = false;
  for (const PyValue& d : shape.items) {
    if (d.kind != PyValue::Kind::kInt || d.integer < 0) {
      return err.Invalid("'shape' must hold non-negative integers");
    }
    plan.dims.push_back(d.integer);
    empty = empty || d.integer == 0;
  }
  int64_t bytes = ElementByteSize(plan.type);
  for (int64_t d : plan.dims) {
    if (!empty && __builtin_mul_overflow(bytes, d, &bytes)) {
      return err.TooBig("'shape' has more bytes than a 64-bit size can count");
    }
  }
  plan.data_bytes = empty ? 0 : bytes;
  return Status::Ok();
}

StatusOr<Plan> ParseHeader(std::string_view header, const NpyReadOptions& options,
                           const NpyError& err) {
  StatusOr<PyValue> parsed = internal::ParsePythonLiteral(header);
  if (!parsed.ok()) {
    return err.Invalid("header is not a Python literal: " + parsed.status().message());
  }
  const PyValue& dict = *parsed;
  if (dict.kind != PyValue::Kind::kDict) {
    return err.Invalid(std::string("header is ") + internal::PyKindName(dict.kind) +
                       ", expected a dict with keys 'descr', 'fortran_order' and 'shape'");
  }
  const PyValue* descr = nullptr;
  const PyValue* fortran_order = nullptr;
  const PyValue* shape = nullptr;
  for (size_t i = 0; i < dict.items.size(); i += 2) {
    const PyValue& key = dict.items[i];
    const PyValue** slot = nullptr;
    if (key.kind == PyValue::Kind::kString) {
      if (key.string == "descr") slot = &descr;
      if (key.string == "fortran_order") slot = &fortran_order;
      if (key.string == "shape") slot = &shape;
    }
    if (slot == nullptr || *slot != nullptr) {
      return err.Invalid(
          "header has an unexpected or repeated key; expected exactly 'descr', "
          "'fortran_order' and 'shape'");
    }
    *slot = &dict.items[i + 1];
  }
  if (!descr || !fortran_order || !shape) {
    return err.Invalid("header lacks a key; expected 'descr', 'fortran_order' and 'shape'");
  }
  if (fortran_order->kind != PyValue::Kind::kBool) {
    return err.Invalid("'fortran_order' is not True or False");
  }
  if (fortran_order->boolean) {
    return err.Unsupported(
        "Fortran-order arrays are not supported; save a C-order array "
        "(np.ascontiguousarray)");
  }
  TPUSIM_ASSIGN_OR_RETURN(FileElement element, ParseDescr(*descr, err));
  Plan plan;
  TPUSIM_ASSIGN_OR_RETURN(plan.type, Resolve(element, options, err));
  TPUSIM_RETURN_IF_ERROR(ParseShape(*shape, plan, err));
  return plan;
}

/// Where the header and the data start.
struct Preamble {
  int64_t header_offset = 0;
  int64_t data_offset = 0;
};

/// Checks the magic and version in the file's first bytes (at least 12 of
/// them when the file has that many) and locates the header.
StatusOr<Preamble> ParsePreamble(std::string_view start, int64_t file_size, const NpyError& err) {
  if (start.size() < kMagic.size() || start.substr(0, kMagic.size()) != kMagic) {
    return err.Invalid("not a .npy file: it does not start with \"\\x93NUMPY\"");
  }
  if (start.size() < kMinPreamble) return err.Invalid("file ends inside the .npy preamble");
  const auto major = static_cast<unsigned char>(start[6]);
  const auto minor = static_cast<unsigned char>(start[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return err.Unsupported(".npy format version " + std::to_string(major) + "." +
                           std::to_string(minor) + " is not supported (1.0, 2.0 and 3.0 are)");
  }
  // Version 1.0 has a 2-byte header length; 2.0 and 3.0 (UTF-8 header) 4 bytes.
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (start.size() < 8 + length_bytes) return err.Invalid("file ends inside the .npy preamble");
  int64_t header_length = 0;
  for (size_t i = 0; i < length_bytes; ++i) {
    header_length |= static_cast<int64_t>(static_cast<unsigned char>(start[8 + i])) << (8 * i);
  }
  Preamble preamble;
  preamble.header_offset = static_cast<int64_t>(8 + length_bytes);
  preamble.data_offset = preamble.header_offset + header_length;
  if (preamble.data_offset > file_size) {
    return err.Invalid("header of " + std::to_string(header_length) +
                       " bytes runs past the end of the file (" + std::to_string(file_size) +
                       " bytes)");
  }
  return preamble;
}

Status CheckDataSize(const Plan& plan, int64_t available, const NpyReadOptions& options,
                     const NpyError& err) {
  if (plan.data_bytes > options.max_bytes) {
    return err.TooBig("data of " + std::to_string(plan.data_bytes) +
                      " bytes exceeds the limit of " + std::to_string(options.max_bytes));
  }
  if (available != plan.data_bytes) {
    return err.Invalid("the header's dtype and shape need " + std::to_string(plan.data_bytes) +
                       " bytes of data but the file has " + std::to_string(available));
  }
  return Status::Ok();
}

/// Turns the copied bytes into valid elements of the literal's type, or
/// reports the first one that cannot be.
Status ApplyFixup(Literal& literal, const NpyError& err) {
  const PrimitiveType type = literal.element_type();
  if (type == PrimitiveType::kPred) {
    // numpy treats any nonzero byte as True; a literal's pred is 0 or 1.
    for (uint8_t& b : literal.data<uint8_t>()) b = b != 0 ? 1 : 0;
    return Status::Ok();
  }
  if (type == PrimitiveType::kF4E2M1FN) {
    const std::span<const uint8_t> codes = std::as_const(literal).data<uint8_t>();
    for (size_t i = 0; i < codes.size(); ++i) {
      if (codes[i] > 0x0F) {
        return err.Invalid("element " + std::to_string(i) + " has bits " +
                           std::to_string(codes[i]) + ", not a 4-bit f4e2m1fn code");
      }
    }
    return Status::Ok();
  }
  const int bits = hlo::PrimitiveTypeBitWidth(type);
  if (!hlo::IsInteger(type) || bits >= 8) return Status::Ok();
  const bool is_signed = hlo::IsSignedInt(type);
  const int lo = is_signed ? -(1 << (bits - 1)) : 0;
  const int hi = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
  const std::span<const std::byte> bytes = literal.bytes();
  for (size_t i = 0; i < bytes.size(); ++i) {
    const int v = is_signed ? static_cast<int>(static_cast<int8_t>(bytes[i]))
                            : static_cast<int>(static_cast<uint8_t>(bytes[i]));
    if (v < lo || v > hi) {
      return err.Invalid("element " + std::to_string(i) + " is " + std::to_string(v) +
                         ", outside the range of " + std::string(hlo::PrimitiveTypeName(type)) +
                         " [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
  }
  return Status::Ok();
}

/// The header's text up to the alignment padding, as numpy 1.24 writes it.
std::string HeaderText(const Literal& literal) {
  const PrimitiveType type = literal.element_type();
  std::string descr = NumpyTypeString(type);
  if (descr.empty()) {
    const std::string bits = ElementByteSize(type) == 1 ? "|u1" : "<u2";
    descr = "[('" + std::string(MlDtypesName(type)) + "', '" + bits + "')]";
  } else {
    descr = "'" + descr + "'";
  }
  std::string shape = "(";
  const auto& dims = literal.shape().dimensions();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) shape += ", ";
    shape += std::to_string(dims[i]);
  }
  shape += dims.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': " + descr + ", 'fortran_order': False, 'shape': " + shape + ", }";
  // numpy leaves room for the first dimension to grow to 21 digits, so that
  // appending rewrites the header in place; copying that makes our files
  // byte-identical to np.save's.
  if (!dims.empty()) header.append(21 - std::to_string(dims[0]).size(), ' ');
  return header;
}

}  // namespace

StatusOr<Literal> ParseNpy(std::string_view contents, std::string_view name,
                           const NpyReadOptions& options) {
  const NpyError err(name);
  const auto size = static_cast<int64_t>(contents.size());
  TPUSIM_ASSIGN_OR_RETURN(Preamble preamble, ParsePreamble(contents.substr(0, 12), size, err));
  const std::string_view header =
      contents.substr(preamble.header_offset, preamble.data_offset - preamble.header_offset);
  TPUSIM_ASSIGN_OR_RETURN(Plan plan, ParseHeader(header, options, err));
  TPUSIM_RETURN_IF_ERROR(CheckDataSize(plan, size - preamble.data_offset, options, err));
  Literal literal(hlo::Shape(plan.type, plan.dims));
  std::span<std::byte> bytes = literal.mutable_bytes();
  if (!bytes.empty()) {
    std::memcpy(bytes.data(), contents.data() + preamble.data_offset, bytes.size());
  }
  TPUSIM_RETURN_IF_ERROR(ApplyFixup(literal, err));
  return literal;
}

StatusOr<Literal> ReadNpy(const std::string& path, const NpyReadOptions& options) {
  const NpyError err(path);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) {
    const int error = errno;
    const std::string message = path + ": error: cannot open file: " + std::strerror(error);
    return error == ENOENT ? NotFound(message) : InvalidArgument(message);
  }
  struct stat info;
  if (fstat(fileno(file.get()), &info) != 0 || !S_ISREG(info.st_mode)) {
    return err.Invalid("cannot read file: not a regular file");
  }
  const int64_t size = info.st_size;
  // The file is read in three steps (preamble, header, data) so that the data
  // goes straight into the literal and no step allocates more than the file.
  auto read_at = [&](int64_t offset, void* out, size_t count) -> Status {
    errno = 0;
    if (fseeko(file.get(), offset, SEEK_SET) == 0 &&
        std::fread(out, 1, count, file.get()) == count) {
      return Status::Ok();
    }
    // A short read without an error means the file shrank while being read.
    return err.Invalid(std::string("cannot read file: ") +
                       (errno != 0 ? std::strerror(errno) : "unexpected end of file"));
  };
  std::string start(static_cast<size_t>(std::min<int64_t>(size, 12)), '\0');
  TPUSIM_RETURN_IF_ERROR(read_at(0, start.data(), start.size()));
  TPUSIM_ASSIGN_OR_RETURN(Preamble preamble, ParsePreamble(start, size, err));
  std::string header(static_cast<size_t>(preamble.data_offset - preamble.header_offset), '\0');
  TPUSIM_RETURN_IF_ERROR(read_at(preamble.header_offset, header.data(), header.size()));
  TPUSIM_ASSIGN_OR_RETURN(Plan plan, ParseHeader(header, options, err));
  TPUSIM_RETURN_IF_ERROR(CheckDataSize(plan, size - preamble.data_offset, options, err));
  Literal literal(hlo::Shape(plan.type, plan.dims));
  std::span<std::byte> bytes = literal.mutable_bytes();
  if (!bytes.empty()) {
    TPUSIM_RETURN_IF_ERROR(read_at(preamble.data_offset, bytes.data(), bytes.size()));
  }
  TPUSIM_RETURN_IF_ERROR(ApplyFixup(literal, err));
  return literal;
}

StatusOr<std::string> SerializeNpy(const Literal& literal) {
  if (!literal.shape().IsArray()) {
    return InvalidArgument("only arrays can be written as .npy, not " +
                           literal.shape().ToString(false));
  }
  std::string header = HeaderText(literal);
  // numpy pads with spaces and a newline so that the data starts on a 64-byte
  // boundary, always adding at least one space; it uses version 2.0 only when
  // the header length needs 4 bytes.
  size_t preamble = kMinPreamble;
  auto padding = [&] { return 64 - (preamble + header.size() + 1) % 64; };
  if (header.size() + padding() + 1 > 0xFFFF) preamble = kMinPreamble + 2;
  header.append(padding(), ' ');
  header += '\n';
  std::string out(kMagic);
  out += preamble == kMinPreamble ? '\x01' : '\x02';
  out += '\x00';
  const size_t length_bytes = preamble - 8;
  for (size_t i = 0; i < length_bytes; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  out += header;
  const std::span<const std::byte> bytes = literal.bytes();
  out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return out;
}

Status WriteNpy(const std::string& path, const Literal& literal) {
  TPUSIM_ASSIGN_OR_RETURN(std::string contents, SerializeNpy(literal));
  return WriteFileAtomically(path, contents);
}

}  // namespace tpusim::value
