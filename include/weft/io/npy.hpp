// SPDX-License-Identifier: MIT
/// @file NumPy .npy files: save_npy writes one tensor, load_npy<T> reads one (format versions 1.0, 2.0 and 3.0).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "weft/core/dtype.hpp"
#include "weft/core/shape.hpp"
#include "weft/core/storage.hpp"
#include "weft/core/tensor.hpp"
#include "weft/ops/fuse.hpp"
#include "weft/io/file.hpp"
#include "weft/io/tensor_bytes.hpp"

namespace weft::io {

namespace detail {

/// numpy's dtype string ("descr") of each weft dtype; numpy has no bfloat16.
constexpr std::string_view npy_descr(DType d) {
  switch (d) {
    case DType::bool_: return "|b1";
    case DType::uint8: return "|u1";
    case DType::int8: return "|i1";
    case DType::int16: return "<i2";
    case DType::int32: return "<i4";
    case DType::int64: return "<i8";
    case DType::float16: return "<f2";
    case DType::float32: return "<f4";
    case DType::float64: return "<f8";
    case DType::bfloat16: return {};
  }
  return {};
}

/// What an .npy header says: the dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
  std::size_t data_start = 0;
};

/// Reads the header of an .npy file held in `file`: the magic "\x93NUMPY", the version (1.0: a
/// 2-byte header length; 2.0 and 3.0: 4 bytes), then a Python dict literal, which this parses
/// strictly (the three keys once each, string / bool / tuple-of-integers values).
inline NpyHeader parse_npy_header(std::string_view file, const std::string& what) {
  auto bad = [&](const auto&... parts) { weft::detail::fail("load_npy", what, ": ", parts...); };
  if (file.size() < 10 || file.substr(0, 6) != "\x93NUMPY") bad("not an .npy file (no \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(file[6]);
  if (major < 1 || major > 3 || file[7] != 0) bad("unknown .npy format version ", major, ".", int(file[7]));
  const std::size_t prefix = major == 1 ? 10 : 12;
  if (file.size() < prefix) bad("truncated header");
  std::uint32_t length = 0;
  std::memcpy(&length, file.data() + 8, major == 1 ? 2 : 4);
  if (length > file.size() - prefix) bad("header length ", length, " runs past the end of the file");
  std::string_view h = file.substr(prefix, length);
  NpyHeader out;
  out.data_start = prefix + length;

  std::size_t i = 0;
  auto space = [&] { while (i < h.size() && (h[i] == ' ' || h[i] == '\n')) ++i; };
  auto accept = [&](char c) {
    space();
    if (i < h.size() && h[i] == c) return ++i, true;
    return false;
  };
  auto expect = [&](char c) {
    if (!accept(c)) bad("bad header dict at byte ", i, ": expected '", c, "'");
  };
  auto quoted = [&] {
    space();
    if (i >= h.size() || (h[i] != '\'' && h[i] != '"')) bad("bad header dict at byte ", i, ": expected a string");
    char q = h[i++];
    std::size_t end = h.find(q, i);
    if (end == std::string_view::npos) bad("bad header dict: unterminated string");
    std::string s(h.substr(i, end - i));
    i = end + 1;
    return s;
  };
  auto integer = [&] {
    space();
    std::int64_t v = 0;
    std::size_t start = i;
    for (; i < h.size() && h[i] >= '0' && h[i] <= '9'; ++i) {
      if (v > (INT64_MAX - (h[i] - '0')) / 10) bad("shape extent out of range");
      v = v * 10 + (h[i] - '0');
    }
    if (i == start) bad("bad header dict at byte ", i, ": expected a shape extent");
    return v;
  };
  unsigned seen = 0;
  expect('{');
  while (!accept('}')) {
    std::string key = quoted();
    expect(':');
    unsigned bit = key == "descr" ? 1u : key == "fortran_order" ? 2u : key == "shape" ? 4u : 0u;
    if (bit == 0 || (seen & bit)) bad("unexpected or repeated key '", key, "' in the header dict");
    seen |= bit;
    if (bit == 1) {
      out.descr = quoted();
    } else if (bit == 2) {
      space();
      if (h.substr(i, 4) == "True") out.fortran_order = true, i += 4;
      else if (h.substr(i, 5) == "False") i += 5;
      else bad("fortran_order is neither True nor False");
    } else {
      expect('(');
      while (!accept(')')) {
        if (out.shape.rank() == kMaxRank) bad("shape has more than weft's maximum of ", kMaxRank, " dims");
        out.shape.push_back(integer());
        if (!accept(',')) {
          expect(')');
          break;
        }
      }
    }
    if (!accept(',')) {
      expect('}');
      break;
    }
  }
  if (seen != 7u) bad("the header dict needs the keys descr, fortran_order and shape");
  return out;
}

}  // namespace detail

/// Writes `t` (a tensor or view of any dtype but bfloat16, which numpy has not) to `path` as a
/// version 1.0 .npy file (2.0 when the header needs more than 65535 bytes), C order, padded so
/// that the data starts 64-byte aligned, as numpy writes it.
inline void save_npy(const std::string& path, const TensorBytes& t) {
  const std::string_view descr = detail::npy_descr(t.dtype());
  if (descr.empty()) weft::detail::fail("save_npy", "numpy has no bfloat16; cast<float>(t) first, or save_safetensors");
  std::string dims;
  for (int d = 0; d < t.shape().rank(); ++d) dims += (d ? ", " : "") + std::to_string(t.shape()[d]);
  if (t.shape().rank() == 1) dims += ",";  // a Python 1-tuple
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Version 1.0 stores the header length in 2 bytes; 2.0 in 4.
  const bool v1 = dict.size() + 1 + 63 + 10 <= 65535;
  const std::size_t prefix = v1 ? 10 : 12;
  dict.append((64 - (prefix + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string head = std::string("\x93NUMPY", 6) + char(v1 ? 1 : 2) + '\0';
  const std::uint32_t length = std::uint32_t(dict.size());
  head.append(reinterpret_cast<const char*>(&length), v1 ? 2 : 4);
  detail::write_file(path, {head, dict, t.bytes()}, "save_npy");
}

/// Reads the .npy file at `path` into a new tensor. Its dtype must be T (little-endian, or '|b1'
/// for bool: no conversion happens); a Fortran-order array is read as a C-order copy.
template <Element T>
Tensor<T> load_npy(const std::string& path) {
  const detail::MappedFile file(path, "load_npy");
  const detail::NpyHeader h = detail::parse_npy_header(file.bytes(), path);
  if (h.descr != detail::npy_descr(dtype_of<T>))
    weft::detail::fail("load_npy", path, ": the array has dtype '", h.descr, "', not ", dtype_name<T>(), " ('",
                       detail::npy_descr(dtype_of<T>), "'); load_npy<T> needs the file's dtype");
  const std::size_t available = file.bytes().size() - h.data_start;
  std::uint64_t bytes = sizeof(T);
  bool overflow = false;  // extents whose product does not fit 64 bits
  for (std::int64_t e : h.shape) overflow |= __builtin_mul_overflow(bytes, std::uint64_t(e), &bytes);
  if (std::find(h.shape.begin(), h.shape.end(), 0) != h.shape.end()) bytes = 0, overflow = false;
  if (overflow || available != bytes)
    weft::detail::fail("load_npy", path, ": shape ", h.shape, " of '", h.descr, "' needs ",
                       overflow ? std::string("more than 2^64") : std::to_string(bytes), " bytes of data, the file has ",
                       available);
  const char* data = file.bytes().data() + h.data_start;
  if constexpr (std::is_same_v<T, bool>) {
    for (std::size_t k = 0; k < bytes; ++k)
      if (static_cast<unsigned char>(data[k]) > 1)
        weft::detail::fail("load_npy", path, ": bool array holds byte ", int(static_cast<unsigned char>(data[k])),
                           " at element ", k, " (only 0 and 1 are bools)");
  }
  // Fortran order is C order of the reversed shape: read that, then copy its transpose.
  Shape stored = h.shape;
  for (int d = 0; h.fortran_order && d < stored.rank(); ++d) stored[d] = h.shape[stored.rank() - 1 - d];
  Tensor<T> out(weft::detail::AdoptStorage{}, weft::detail::allocate(bytes, Device::cpu()), stored);
  if (bytes) std::memcpy(out.data(), data, bytes);  // an empty tensor has no buffer
  if (!h.fortran_order || out.dim() < 2) return out;
  std::vector<std::int64_t> reversed(out.dim());
  for (int d = 0; d < out.dim(); ++d) reversed[d] = out.dim() - 1 - d;
  return out.permute(reversed).clone();
}

}  // namespace weft::io
