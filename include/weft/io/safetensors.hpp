// SPDX-License-Identifier: MIT
/// @file safetensors files: save_safetensors writes tensors of any dtype, SafeTensors maps a file and gives zero-copy views of its tensors.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weft/core/dtype.hpp"
#include "weft/core/shape.hpp"
#include "weft/core/storage.hpp"
#include "weft/core/tensor.hpp"
#include "weft/io/file.hpp"
#include "weft/io/json.hpp"
#include "weft/io/tensor_bytes.hpp"

namespace weft::io {

/// One tensor to save: its name and its elements (a Tensor or a view of any dtype).
struct NamedTensor {
  std::string name;
  TensorBytes tensor;
};

namespace detail {

/// The dtype codes of the safetensors format. Those without a weft dtype parse (so that a file
/// holding them still opens and its other tensors load) but cannot be read as tensors.
struct SafetensorsDtype {
  std::string_view code;
  std::size_t size;
  std::optional<DType> dtype;
};
inline constexpr SafetensorsDtype kSafetensorsDtypes[] = {
    {"BOOL", 1, DType::bool_},    {"F16", 2, DType::float16}, {"BF16", 2, DType::bfloat16},
    {"F32", 4, DType::float32},   {"F64", 8, DType::float64}, {"I32", 4, DType::int32},
    {"I64", 8, DType::int64},     {"I8", 1, DType::int8},     {"U8", 1, DType::uint8},
    {"I16", 2, DType::int16},     {"U16", 2, std::nullopt},   {"U32", 4, std::nullopt},
    {"U64", 8, std::nullopt},     {"F8_E4M3", 1, std::nullopt}, {"F8_E5M2", 1, std::nullopt},
};

inline const SafetensorsDtype* find_safetensors_dtype(std::string_view code) {
  for (const SafetensorsDtype& d : kSafetensorsDtypes)
    if (d.code == code) return &d;
  return nullptr;
}
inline std::string_view safetensors_code(DType d) {
  for (const SafetensorsDtype& s : kSafetensorsDtypes)
    if (s.dtype == d) return s.code;
  return {};
}

/// How the element type of dtype d is spelled in C++, for a message that says which get<T>() to call.
constexpr std::string_view element_type_spelling(DType d) {
  switch (d) {
    case DType::bool_: return "bool";
    case DType::uint8: return "std::uint8_t";
    case DType::int8: return "std::int8_t";
    case DType::int16: return "std::int16_t";
    case DType::int32: return "std::int32_t";
    case DType::int64: return "std::int64_t";
    case DType::float16: return "weft::half";
    case DType::bfloat16: return "weft::bfloat16";
    case DType::float32: return "float";
    case DType::float64: return "double";
  }
  return "?";
}

/// The format's dtype codes that weft reads, for messages: "BOOL, F16, ...".
inline std::string readable_safetensors_codes() {
  std::string out;
  for (const SafetensorsDtype& d : kSafetensorsDtypes)
    if (d.dtype) out += (out.empty() ? "" : ", ") + std::string(d.code);
  return out;
}

/// What the header says about one tensor: its data lies at [begin, end) of the byte buffer
/// that follows the header.
struct SafetensorsEntry {
  std::string name;
  const SafetensorsDtype* dtype;
  Shape shape;
  std::uint64_t begin, end;
};

/// A parsed and checked file: data_start is the byte where the buffer begins.
struct SafetensorsIndex {
  std::vector<SafetensorsEntry> entries;  // in header order
  std::map<std::string, std::string> metadata;
  std::uint64_t data_start = 0;
};

// Headers above this size are refused, as the Python library does: a corrupt length must not
// make the reader scan (or a writer produce) gigabytes of "JSON".
inline constexpr std::uint64_t kMaxSafetensorsHeader = 100'000'000;

/// Parses and checks the layout of a whole safetensors file held in `file` (errors name `what`):
/// an 8-byte little-endian header length N, N bytes of JSON, then the byte buffer, which the
/// tensors' data_offsets must cover exactly, without gaps or overlaps (the format's rule).
inline SafetensorsIndex parse_safetensors(std::string_view file, const std::string& what) {
  auto bad = [&](const auto&... parts) { weft::detail::fail("SafeTensors", what, ": ", parts...); };
  if (file.size() < 8) bad("truncated: ", file.size(), " bytes, fewer than the 8 of the header length");
  std::uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  // A safetensors file is its header length, then the JSON header's '{'. Any other file (text, an
  // .npy, a pickle) read as one gives a length past the limit or the end: say what the file is not
  // rather than quote that length. A real file cut short keeps its '{' and the precise messages.
  if ((n > kMaxSafetensorsHeader || n > file.size() - 8) && file.size() > 8 && file[8] != '{')
    bad("not a safetensors file: it does not begin with an 8-byte header length followed by a JSON header "
        "('{' at byte 8)");
  if (n > kMaxSafetensorsHeader) bad("header length ", n, " is above the limit of ", kMaxSafetensorsHeader, " bytes");
  if (n > file.size() - 8) bad("header length ", n, " runs past the end of the file (", file.size(), " bytes)");
  const std::string_view header = file.substr(8, n);
  if (header.empty() || header[0] != '{') bad("the header is not a JSON object");
  const Json root = json_parse(header, what);
  if (root.kind != Json::Kind::object) bad("the header is not a JSON object");

  SafetensorsIndex index;
  index.data_start = 8 + n;
  const std::uint64_t buffer = file.size() - index.data_start;
  for (const auto& [name, info] : root.object) {
    if (name == "__metadata__") {
      if (info.kind != Json::Kind::object) bad("__metadata__ is not an object of strings");
      for (const auto& [key, value] : info.object) {
        if (value.kind != Json::Kind::string) bad("__metadata__[\"", key, "\"] is not a string");
        index.metadata.emplace(key, value.string);
      }
      continue;
    }
    if (info.kind != Json::Kind::object) bad("tensor '", name, "' is not described by an object");
    const Json* dtype = info.find("dtype");
    const Json* shape = info.find("shape");
    const Json* offsets = info.find("data_offsets");
    if (!dtype || !shape || !offsets || info.object.size() != 3)
      bad("tensor '", name, "' needs exactly the keys dtype, shape and data_offsets");
    if (dtype->kind != Json::Kind::string) bad("tensor '", name, "': dtype is not a string");
    SafetensorsEntry e{name, find_safetensors_dtype(dtype->string), {}, 0, 0};
    if (!e.dtype) bad("tensor '", name, "' has an unknown dtype \"", dtype->string, "\"");
    if (shape->kind != Json::Kind::array) bad("tensor '", name, "': shape is not an array");
    if (shape->array.size() > std::size_t(kMaxRank))
      bad("tensor '", name, "' has rank ", shape->array.size(), ", above weft's maximum of ", kMaxRank);
    // numel * element size, checked against overflow (which a hostile header can ask for).
    std::uint64_t bytes = e.dtype->size;
    bool overflow = false;
    for (const Json& extent : shape->array) {
      if (extent.kind != Json::Kind::integer || extent.integer < 0)
        bad("tensor '", name, "': shape holds something other than a non-negative integer");
      e.shape.push_back(extent.integer);
      overflow |= __builtin_mul_overflow(bytes, std::uint64_t(extent.integer), &bytes);
    }
    if (std::find(e.shape.begin(), e.shape.end(), 0) != e.shape.end()) bytes = 0, overflow = false;
    if (offsets->kind != Json::Kind::array || offsets->array.size() != 2 ||
        offsets->array[0].kind != Json::Kind::integer || offsets->array[1].kind != Json::Kind::integer ||
        offsets->array[0].integer < 0 || offsets->array[1].integer < offsets->array[0].integer)
      bad("tensor '", name, "': data_offsets must be [begin, end] with 0 <= begin <= end");
    e.begin = std::uint64_t(offsets->array[0].integer);
    e.end = std::uint64_t(offsets->array[1].integer);
    if (e.end > buffer)
      bad("tensor '", name, "': data_offsets [", e.begin, ", ", e.end, "] run past the end of the data (", buffer,
          " bytes)");
    if (overflow || bytes != e.end - e.begin)
      bad("tensor '", name, "': shape ", e.shape, " of ", e.dtype->code, " needs ",
          overflow ? std::string("more than 2^64") : std::to_string(bytes),
          " bytes but data_offsets [", e.begin, ", ", e.end, "] hold ", e.end - e.begin);
    index.entries.push_back(std::move(e));
  }
  // Sorted by position, the tensors must tile the buffer: each begins where the previous ends.
  std::vector<const SafetensorsEntry*> order;
  for (const SafetensorsEntry& e : index.entries) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->begin != b->begin ? a->begin < b->begin : a->end < b->end; });
  std::uint64_t covered = 0;
  for (const SafetensorsEntry* e : order) {
    if (e->begin < covered) bad("tensor '", e->name, "' overlaps another tensor's data (offsets ", e->begin, ", ", e->end, ")");
    if (e->begin > covered) bad("bytes [", covered, ", ", e->begin, ") of the data belong to no tensor");
    covered = e->end;
  }
  if (covered != buffer) bad("bytes [", covered, ", ", buffer, ") of the data belong to no tensor");
  return index;
}

/// The mapping and the Storage of one tensor's bytes in it: views share this, so the mapping
/// lives as long as the last of them.
struct MappedStorage {
  MappedStorage(std::shared_ptr<const MappedFile> f, const char* data, std::size_t bytes)
      : file(std::move(f)), storage(const_cast<char*>(data), bytes, Device::cpu(), nullptr) {}
  std::shared_ptr<const MappedFile> file;
  Storage storage;  // no release: munmap happens when `file` goes
};

}  // namespace detail

/// Writes `tensors` (any dtypes; views are written contiguous) and the string map `metadata` to
/// `path` in the safetensors format. The data is laid out by element size, largest first, then
/// by name (as the Python library does), so that every tensor starts at a multiple of its element
/// size and loads as a zero-copy view. Bad input (repeated or reserved names) throws before
/// anything is written.
inline void save_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                             const std::map<std::string, std::string>& metadata = {}) {
  std::vector<const NamedTensor*> order;
  for (const NamedTensor& t : tensors) {
    if (t.name == "__metadata__") weft::detail::fail("save_safetensors", "\"__metadata__\" is reserved; rename the tensor");
    order.push_back(&t);
  }
  std::sort(order.begin(), order.end(), [](const NamedTensor* a, const NamedTensor* b) {
    std::size_t sa = element_size(a->tensor.dtype()), sb = element_size(b->tensor.dtype());
    return sa != sb ? sa > sb : a->name < b->name;
  });
  for (std::size_t i = 1; i < order.size(); ++i)
    if (order[i]->name == order[i - 1]->name)
      weft::detail::fail("save_safetensors", "tensor name '", order[i]->name, "' is given twice");

  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    for (const auto& [key, value] : metadata) header += detail::json_quote(key) + ":" + detail::json_quote(value) + ",";
    header.back() = '}';
    header += ",";
  }
  std::uint64_t offset = 0;
  std::vector<std::string_view> pieces(2);
  for (const NamedTensor* t : order) {
    header += detail::json_quote(t->name) + ":{\"dtype\":\"" + std::string(detail::safetensors_code(t->tensor.dtype())) +
              "\",\"shape\":[";
    // Appended piece by piece: GCC 12 reports `"," + std::string&&` as an overlapping memcpy
    // (-Wrestrict, a false positive of its inlined basic_string::insert) in every program built at -O2.
    for (int d = 0; d < t->tensor.shape().rank(); ++d) {
      if (d) header += ',';
      header += std::to_string(t->tensor.shape()[d]);
    }
    std::uint64_t end = offset + t->tensor.bytes().size();
    header += "],\"data_offsets\":[";
    header += std::to_string(offset) + "," + std::to_string(end) + "]},";
    offset = end;
    pieces.push_back(t->tensor.bytes());
  }
  if (header.size() > 1) header.pop_back();
  header += "}";
  // Spaces pad the header so that the data starts 8-byte aligned (the Python library's layout).
  header.append((8 - header.size() % 8) % 8, ' ');
  const std::uint64_t n = header.size();
  char length[8];
  std::memcpy(length, &n, 8);
  pieces[0] = std::string_view(length, 8);
  pieces[1] = header;
  detail::write_file(path, pieces, "save_safetensors");
}

/// A safetensors file, mapped read-only. `get<T>(name)` is a zero-copy view of one tensor that
/// keeps the mapping alive: the file is unmapped when this object and the last view are gone.
/// The whole header is checked on opening; a bad file throws weft::Error naming it.
class SafeTensors {
 public:
  explicit SafeTensors(const std::string& path)
      : file_(std::make_shared<const detail::MappedFile>(path, "SafeTensors")),
        index_(detail::parse_safetensors(file_->bytes(), path)) {}

  /// The tensor names, in the header's order.
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const detail::SafetensorsEntry& e : index_.entries) out.push_back(e.name);
    return out;
  }
  bool contains(const std::string& name) const { return find(name) != nullptr; }
  /// The tensor's dtype; throws for the format's dtypes that weft has not (U16, F8_E4M3, ...).
  DType dtype(const std::string& name) const {
    const detail::SafetensorsEntry& e = entry(name);
    if (!e.dtype->dtype) unsupported_dtype(name, e);
    return *e.dtype->dtype;
  }
  /// The format's own dtype code ("F32", "BF16", "U8", ...).
  std::string_view dtype_code(const std::string& name) const { return entry(name).dtype->code; }
  const Shape& shape(const std::string& name) const { return entry(name).shape; }
  const std::map<std::string, std::string>& metadata() const { return index_.metadata; }

  /// A read-only view of the tensor `name`, whose dtype must be T. Zero-copy: the file format
  /// lets a tensor start at any byte, and one that does not start at a multiple of its element
  /// size (no writer that sorts by element size makes one) is copied to an aligned buffer.
  /// WEFT_ABI_INLINE: that copy allocates through the backend (core/config.hpp, ODR safety).
  template <Element T>
  WEFT_ABI_INLINE TensorView<const T> get(const std::string& name) const {
    const detail::SafetensorsEntry& e = entry(name);
    if (!e.dtype->dtype) unsupported_dtype(name, e);
    if (e.dtype->dtype != dtype_of<T>)
      weft::detail::fail("SafeTensors", file_->path(), ": tensor '", name, "' has dtype ", e.dtype->code,
                         ", not ", dtype_name<T>(), "; read it with get<", detail::element_type_spelling(*e.dtype->dtype),
                         ">()");
    const char* data = file_->bytes().data() + index_.data_start + e.begin;
    const std::size_t bytes = e.end - e.begin;
    if constexpr (std::is_same_v<T, bool>) {
      // Any byte but 0 or 1 read as a bool is undefined behaviour.
      for (std::size_t i = 0; i < bytes; ++i)
        if (static_cast<unsigned char>(data[i]) > 1)
          weft::detail::fail("SafeTensors", file_->path(), ": BOOL tensor '", name, "' holds byte ",
                             int(static_cast<unsigned char>(data[i])), " at element ", i, " (only 0 and 1 are bools)");
    }
    std::shared_ptr<Storage> storage;
    if (reinterpret_cast<std::uintptr_t>(data) % alignof(T) == 0) {
      auto held = std::make_shared<detail::MappedStorage>(file_, data, bytes);
      storage = std::shared_ptr<Storage>(held, &held->storage);
    } else {
      storage = weft::detail::allocate(bytes, Device::cpu());
      weft::detail::count_copy(std::int64_t(bytes / sizeof(T)));
      if (bytes) std::memcpy(storage->data(), data, bytes);
    }
    return TensorView<const T>(std::move(storage), e.shape, contiguous_strides(e.shape), 0);
  }

 private:
  const detail::SafetensorsEntry* find(const std::string& name) const {
    for (const detail::SafetensorsEntry& e : index_.entries)
      if (e.name == name) return &e;
    return nullptr;
  }
  [[noreturn]] void unsupported_dtype(const std::string& name, const detail::SafetensorsEntry& e) const {
    weft::detail::fail("SafeTensors", file_->path(), ": tensor '", name, "' has dtype ", e.dtype->code,
                       ", which weft has no element type for (it reads ", detail::readable_safetensors_codes(), ")");
  }
  const detail::SafetensorsEntry& entry(const std::string& name) const {
    const detail::SafetensorsEntry* e = find(name);
    if (!e) weft::detail::fail("SafeTensors", file_->path(), ": no tensor named '", name, "'; keys() lists them");
    return *e;
  }

  std::shared_ptr<const detail::MappedFile> file_;
  detail::SafetensorsIndex index_;
};

}  // namespace weft::io
