// SPDX-License-Identifier: MIT
/// @file cpu: weft::io. Files made by Python's safetensors and numpy load with the values their
/// script states; weft's files round-trip (and, in scripts/test, load in Python); bad files throw
/// weft::Error; fuzzes of 12,000 mutated safetensors files and 3,000 npy headers never crash the parsers.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <weft/io.hpp>

#include "error_check.hpp"
#include "reference.hpp"

#ifndef WEFT_GOLDEN_DIR
#error "tests/meson.build defines WEFT_GOLDEN_DIR (the tests/golden directory)"
#endif

using namespace weft_test;
using weft::DType;
using weft::TensorView;
namespace io = weft::io;
namespace fs = std::filesystem;

namespace {

const std::string kGolden = std::string(WEFT_GOLDEN_DIR) + "/io/";

/// Element k of a golden tensor of each dtype: the formulas of tests/golden/make_io_golden.py.
double io_golden_value(DType d, std::int64_t k) {
  switch (d) {
    case DType::float64: return double(k) * 0.25 - 0.5;
    case DType::int32: return double((k - 3) * 1000003);
    case DType::int64: return double((k - 2) * (std::int64_t(1) << 40) + k);
    case DType::bool_: return k % 3 == 0 ? 1.0 : 0.0;
    case DType::int8: return double(k * 41 - 128);
    case DType::uint8: return double(k * 50 + 5);
    case DType::int16: return double((k - 3) * 10007);
    default: return double(k) * 0.5 - 1.0;  // float32, float16, bfloat16
  }
}

/// Checks every element of a contiguous host tensor against io_golden_value, decoded from its
/// bytes by the test's own decoder.
template <class T>
void check_io_golden(const weft::TensorBase<T>& t, const Shape& shape) {
  REQUIRE(t.shape() == shape);
  REQUIRE(t.is_contiguous());
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(t.data());
  for (std::int64_t k = 0; k < t.numel(); ++k) {
    INFO(type_name<T>(), " element ", k);
    CHECK(decode<T>(bytes + k * sizeof(T)) == io_golden_value(weft::dtype_of<T>, k));
  }
}

std::string read_file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void write_file_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// A fresh directory for one test's files, removed afterwards.
struct IoTempDir {
  fs::path path;
  IoTempDir() : path(fs::temp_directory_path() / ("weft_io_test_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~IoTempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

/// A random tensor of shape `shape` (values exact in every dtype, bools 0/1).
template <class T>
weft::Tensor<T> random_io_tensor(const Shape& shape, std::mt19937_64& rng) {
  std::vector<T> v(std::size_t(shape.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    int r = int(rng() % 2001) - 1000;
    if constexpr (std::is_same_v<T, bool>) v[i] = (r & 1) != 0;
    else if constexpr (is_float_type_v<T>) v[i] = T(float(r) / 8.0f);
    else if constexpr (weft::is_narrow_int_v<T>) v[i] = T(r * 97);  // wrapped: any value of T
    else v[i] = T(r) * T(1000);
  }
  return weft::from_vector<T>(v, shape);
}

/// Every element of `got` equals the element of `want` at the same index (read through strides).
template <class T, class U>
void check_same_elements(const weft::TensorBase<T>& got, const weft::TensorBase<U>& want) {
  REQUIRE(got.shape() == want.shape());
  for_each_index(want.shape(), [&](const std::vector<std::int64_t>& idx) {
    CHECK(value_at(got, idx) == value_at(want, idx));
  });
}

/// The tensors a round trip writes: one of each dtype, each a strided view (written contiguous).
struct IoSample {
  std::mt19937_64 rng{seed()};
  weft::Tensor<float> f32 = random_io_tensor<float>({4, 3}, rng);
  weft::Tensor<double> f64 = random_io_tensor<double>({5}, rng);
  weft::Tensor<weft::half> f16 = random_io_tensor<weft::half>({2, 3, 2}, rng);
  weft::Tensor<weft::bfloat16> bf16 = random_io_tensor<weft::bfloat16>({3, 2}, rng);
  weft::Tensor<std::int32_t> i32 = random_io_tensor<std::int32_t>({6}, rng);
  weft::Tensor<std::int64_t> i64 = random_io_tensor<std::int64_t>({2, 2}, rng);
  weft::Tensor<bool> b = random_io_tensor<bool>({3, 3}, rng);
  weft::Tensor<std::int8_t> i8 = random_io_tensor<std::int8_t>({4, 5}, rng);
  weft::Tensor<std::uint8_t> u8 = random_io_tensor<std::uint8_t>({7}, rng);
  weft::Tensor<std::int16_t> i16 = random_io_tensor<std::int16_t>({3, 4}, rng);
  weft::Tensor<float> scalar = random_io_tensor<float>({}, rng);
  weft::Tensor<float> empty = random_io_tensor<float>({0, 4}, rng);
};

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("io: safetensors written by Python load zero-copy with the stated values") {
  auto& counters = weft::detail::tensor_counters();
  const std::int64_t copies = counters.copies.load();
  io::SafeTensors f(kGolden + "all.safetensors");
  CHECK(f.keys().size() == 13);
  CHECK(f.metadata() == std::map<std::string, std::string>{{"format", "pt"}, {"source", "make_io_golden.py"}});
  CHECK(f.dtype("bf16") == DType::bfloat16);
  CHECK(f.shape("i32") == Shape{2, 3});
  check_io_golden(f.get<float>("f32"), {2, 3});
  check_io_golden(f.get<double>("f64"), {4});
  check_io_golden(f.get<weft::half>("f16"), {2, 2});
  check_io_golden(f.get<weft::bfloat16>("bf16"), {3, 2});
  check_io_golden(f.get<std::int32_t>("i32"), {2, 3});
  check_io_golden(f.get<std::int64_t>("i64"), {5});
  check_io_golden(f.get<bool>("bool"), {7});
  check_io_golden(f.get<std::int8_t>("i8"), {2, 3});
  check_io_golden(f.get<std::uint8_t>("u8"), {6});
  check_io_golden(f.get<std::int16_t>("i16"), {3, 2});
  CHECK(f.dtype("u8") == DType::uint8);
  check_io_golden(f.get<float>("scalar"), {});
  check_io_golden(f.get<float>("empty"), {0, 3});
  CHECK(counters.copies.load() == copies);
  CHECK(f.get<float>("f32").data() == f.get<float>("f32").data());  // both views show the mapping

  // U16 is a safetensors dtype weft has no element type for: listed, but not loadable, and the
  // message lists what weft reads instead of suggesting a get<T>() that cannot exist.
  CHECK(f.dtype_code("u16") == "U16");
  CHECK(error_of([&] { (void)f.dtype("u16"); }) ==
        "weft::SafeTensors: " + kGolden + "all.safetensors: tensor 'u16' has dtype U16, which weft has no element type for "
        "(it reads BOOL, F16, BF16, F32, F64, I32, I64, I8, U8, I16)");
  CHECK(has(error_of([&] { (void)f.get<float>("u16"); }), "has dtype U16, which weft has no element type for"));
  // A dtype weft has: the message names the element type to read it as.
  CHECK(has(error_of([&] { (void)f.get<double>("f32"); }), "has dtype F32, not float64; read it with get<float>()"));
  CHECK(has(error_of([&] { (void)f.get<std::int8_t>("u8"); }), "has dtype U8, not int8; read it with get<std::uint8_t>()"));
  CHECK(has(error_of([&] { (void)f.get<std::int16_t>("i8"); }), "has dtype I8, not int16; read it with get<std::int8_t>()"));
  CHECK(has(error_of([&] { (void)f.get<float>("nope"); }), "no tensor named 'nope'"));
}

TEST_CASE("io: a view keeps the mapping alive after its SafeTensors is gone") {
  // (Assigning a view writes its elements, so the view is constructed inside the scope.)
  std::optional<TensorView<const float>> v;
  {
    io::SafeTensors f(kGolden + "all.safetensors");
    v.emplace(f.get<float>("f32"));
  }
  check_io_golden(*v, {2, 3});  // under ASan, a read of an unmapped page would be reported
}

TEST_CASE("io: npy files written by numpy load with the stated values") {
  check_io_golden(io::load_npy<float>(kGolden + "f32.npy"), {2, 3});
  check_io_golden(io::load_npy<double>(kGolden + "f64.npy"), {4});
  check_io_golden(io::load_npy<weft::half>(kGolden + "f16.npy"), {2, 2});
  check_io_golden(io::load_npy<std::int32_t>(kGolden + "i32.npy"), {2, 3});
  check_io_golden(io::load_npy<std::int64_t>(kGolden + "i64.npy"), {5});
  check_io_golden(io::load_npy<std::int64_t>(kGolden + "i64_v2.npy"), {5});
  check_io_golden(io::load_npy<std::int64_t>(kGolden + "i64_v3.npy"), {5});
  check_io_golden(io::load_npy<bool>(kGolden + "bool.npy"), {7});
  check_io_golden(io::load_npy<std::int8_t>(kGolden + "i8.npy"), {2, 3});  // '|i1'
  check_io_golden(io::load_npy<std::uint8_t>(kGolden + "u8.npy"), {6});    // '|u1'
  check_io_golden(io::load_npy<std::int16_t>(kGolden + "i16.npy"), {3, 2});  // '<i2'
  CHECK(has(error_of([] { (void)io::load_npy<std::int8_t>(kGolden + "u8.npy"); }), "has dtype '|u1', not int8 ('|i1')"));
  check_io_golden(io::load_npy<float>(kGolden + "scalar.npy"), {});
  check_io_golden(io::load_npy<float>(kGolden + "empty.npy"), {0, 3});
  // Fortran order holds the same (2, 3) array column by column: read as a C-order copy.
  check_io_golden(io::load_npy<float>(kGolden + "f32_fortran.npy"), {2, 3});
  CHECK(has(error_of([] { (void)io::load_npy<double>(kGolden + "f32.npy"); }), "has dtype '<f4', not float64"));
  CHECK(has(error_of([] { (void)io::load_npy<float>(kGolden + "missing.npy"); }), "cannot open"));
}

TEST_CASE("io: weft's safetensors files round-trip every dtype, views written contiguous") {
  IoTempDir dir;
  IoSample s;
  const std::string path = dir / "weft.safetensors";
  const std::map<std::string, std::string> metadata{{"note", "a \"quoted\"\\ line\nand \x01 more"}, {"k", ""}};
  io::save_safetensors(path,
                       {{"f32_t", s.f32.transpose(0, 1)}, {"f64", s.f64.slice(0, 0, 5, 2)}, {"f16", s.f16.permute({2, 0, 1})},
                        {"bf16", s.bf16}, {"i32", s.i32}, {"i64", s.i64.transpose(0, 1)}, {"b", s.b.select(1, 2)},
                        {"i8", s.i8.transpose(0, 1)}, {"u8", s.u8.slice(0, 1, 7, 3)}, {"i16", s.i16},
                        {"scalar", s.scalar}, {"empty", s.empty}, {"name \"with\" quotes", s.f32}},
                       metadata);
  const std::string bytes = read_file_bytes(path);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  CHECK(n % 8 == 0);  // padded so that the data starts 8-byte aligned
  io::SafeTensors f(path);
  CHECK(f.metadata() == metadata);
  CHECK(f.keys().size() == 13);
  check_same_elements(f.get<float>("f32_t"), s.f32.transpose(0, 1));
  check_same_elements(f.get<double>("f64"), s.f64.slice(0, 0, 5, 2));
  check_same_elements(f.get<weft::half>("f16"), s.f16.permute({2, 0, 1}));
  check_same_elements(f.get<weft::bfloat16>("bf16"), s.bf16);
  check_same_elements(f.get<std::int32_t>("i32"), s.i32);
  check_same_elements(f.get<std::int64_t>("i64"), s.i64.transpose(0, 1));
  check_same_elements(f.get<bool>("b"), s.b.select(1, 2));
  check_same_elements(f.get<std::int8_t>("i8"), s.i8.transpose(0, 1));
  check_same_elements(f.get<std::uint8_t>("u8"), s.u8.slice(0, 1, 7, 3));
  check_same_elements(f.get<std::int16_t>("i16"), s.i16);
  check_same_elements(f.get<float>("scalar"), s.scalar);
  check_same_elements(f.get<float>("empty"), s.empty);
  check_same_elements(f.get<float>("name \"with\" quotes"), s.f32);
  // Sorted by element size, every tensor starts aligned: each loads without a copy.
  auto& counters = weft::detail::tensor_counters();
  const std::int64_t copies = counters.copies.load();
  for (const std::string& key : f.keys())
    if (f.dtype(key) == DType::float32) CHECK(reinterpret_cast<std::uintptr_t>(f.get<float>(key).data()) % 4 == 0);
  CHECK(counters.copies.load() == copies);

  // Bad input throws and writes nothing.
  const std::string other = dir / "other.safetensors";
  CHECK(has(error_of([&] { io::save_safetensors(other, {{"a", s.f32}, {"a", s.f64}}); }), "'a' is given twice"));
  CHECK(has(error_of([&] { io::save_safetensors(other, {{"__metadata__", s.f32}}); }), "reserved"));
  CHECK(!fs::exists(other));
}

TEST_CASE("io: weft's npy files round-trip every numpy dtype") {
  IoTempDir dir;
  IoSample s;
  auto round_trip = [&](const auto& t) {
    using T = typename std::remove_cvref_t<decltype(t)>::value_type;
    io::save_npy(dir / "t.npy", t);
    const std::string bytes = read_file_bytes(dir / "t.npy");
    CHECK(bytes.find('\n') % 64 == 63);  // numpy's alignment: the data starts at a multiple of 64
    check_same_elements(io::load_npy<T>(dir / "t.npy"), t);
  };
  round_trip(s.f32.transpose(0, 1));
  round_trip(s.f64);
  round_trip(s.f16.permute({2, 0, 1}));
  round_trip(s.i32.slice(0, 1, 6, 2));
  round_trip(s.i64);
  round_trip(s.b);
  round_trip(s.i8.transpose(0, 1));
  round_trip(s.u8);
  round_trip(s.i16.slice(1, 1, 4));
  round_trip(s.scalar);
  round_trip(s.empty);
  CHECK(has(error_of([&] { io::save_npy(dir / "bf.npy", s.bf16); }), "numpy has no bfloat16"));
  CHECK(!fs::exists(dir / "bf.npy"));
}

TEST_CASE("io: weft's files for the Python check (WEFT_IO_ROUNDTRIP_DIR)") {
  // scripts/test sets the directory and then runs tests/golden/check_io_roundtrip.py on it: the
  // golden tensors (the same formulas), written by weft, must load in Python's safetensors/numpy.
  const char* out = std::getenv("WEFT_IO_ROUNDTRIP_DIR");
  if (!out) return;
  fs::create_directories(out);
  io::SafeTensors golden(kGolden + "all.safetensors");
  std::vector<io::NamedTensor> tensors;
  for (const std::string& key : golden.keys()) {
    if (golden.dtype_code(key) == "U16") continue;
    switch (golden.dtype(key)) {
      case DType::float32: tensors.push_back({key, golden.get<float>(key)}); break;
      case DType::float64: tensors.push_back({key, golden.get<double>(key)}); break;
      case DType::float16: tensors.push_back({key, golden.get<weft::half>(key)}); break;
      case DType::bfloat16: tensors.push_back({key, golden.get<weft::bfloat16>(key)}); break;
      case DType::int32: tensors.push_back({key, golden.get<std::int32_t>(key)}); break;
      case DType::int64: tensors.push_back({key, golden.get<std::int64_t>(key)}); break;
      case DType::bool_: tensors.push_back({key, golden.get<bool>(key)}); break;
      case DType::int8: tensors.push_back({key, golden.get<std::int8_t>(key)}); break;
      case DType::uint8: tensors.push_back({key, golden.get<std::uint8_t>(key)}); break;
      case DType::int16: tensors.push_back({key, golden.get<std::int16_t>(key)}); break;
    }
    if (key != "bf16") io::save_npy(std::string(out) + "/" + key + ".npy", tensors.back().tensor);
  }
  // A transposed view, written contiguous: Python sees f32's transpose.
  tensors.push_back({"f32_t", golden.get<float>("f32").transpose(0, 1)});
  io::save_npy(std::string(out) + "/f32_t.npy", tensors.back().tensor);
  io::save_safetensors(std::string(out) + "/weft.safetensors", tensors, golden.metadata());
}

TEST_CASE("io: bad safetensors files throw weft::Error naming the file and the fault") {
  IoTempDir dir;
  const std::string good = read_file_bytes(kGolden + "all.safetensors");
  std::uint64_t n = 0;
  std::memcpy(&n, good.data(), 8);
  const std::string header = good.substr(8, n), data = good.substr(8 + n);
  // A file with this header text (length prefix recomputed) and the golden's data.
  auto with_header = [&](const std::string& h) {
    std::string out(8, '\0');
    const std::uint64_t len = h.size();
    std::memcpy(out.data(), &len, 8);
    return out + h + data;
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string h = header;
    REQUIRE(h.find(from) != std::string::npos);
    return with_header(h.replace(h.find(from), from.size(), to));
  };
  auto message = [&](const std::string& bytes) {
    const std::string path = dir / "bad.safetensors";
    write_file_bytes(path, bytes);
    std::string m = error_of([&] { io::SafeTensors f(path); });
    CHECK(has(m, path));
    return m;
  };
  std::string long_length = good;
  long_length[3] = 1;
  CHECK(has(message(good.substr(0, 5)), "truncated"));
  CHECK(has(message(long_length), "runs past the end of the file"));
  CHECK(has(message(good.substr(0, 8 + n / 2)), "runs past the end of the file"));  // a real file, cut short
  // A file of another kind: its first 8 bytes are no header length, and it is named as what it is not.
  const std::string not_safetensors = "weft::SafeTensors: " + (dir / "bad.safetensors") +
                                      ": not a safetensors file: it does not begin with an 8-byte header length "
                                      "followed by a JSON header ('{' at byte 8)";
  CHECK(message("hello, this is a text file\nwith two lines\n") == not_safetensors);
  CHECK(message(read_file_bytes(kGolden + "f32.npy")) == not_safetensors);
  CHECK(has(message(good.substr(0, good.size() - 1)), "run past the end of the data"));
  CHECK(has(message(good + "x"), "belong to no tensor"));
  CHECK(has(message(replaced("[5],\"data_offsets\":[0,40]", "[6],\"data_offsets\":[0,48]")), "overlaps"));
  CHECK(has(message(replaced("\"I64\",\"shape\":[5]", "\"I64\",\"shape\":[6]")), "needs 48 bytes"));
  CHECK(has(message(replaced("\"F64\"", "\"F65\"")), "unknown dtype \"F65\""));
  CHECK(has(message(replaced("\"empty\"", "\"f32\"")), "duplicate key \"f32\""));
  CHECK(has(message(replaced("\"shape\":[5]", "\"shape\":[5,]")), "bad JSON header"));
  CHECK(has(message(replaced("\"shape\":[5]", "\"shape\":[5.0]")), "not an integer"));
  CHECK(has(message(replaced("\"shape\":[5]", "\"shape\":[-5]")), "non-negative"));
  CHECK(has(message(replaced("[0,40]", "[40,0]")), "0 <= begin <= end"));
  CHECK(has(message(replaced("\"shape\":[5]", "\"shape\":[5],\"x\":1")), "exactly the keys"));
  CHECK(has(message(with_header(std::string(40, '[') + "]")), "not a JSON object"));
  CHECK(has(message(with_header("{" + std::string(100, '[') + "}")), "bad JSON header"));
  // A BOOL tensor whose bytes are not 0 or 1 opens, but does not load as bool.
  std::string bad_bool = good;
  bad_bool.back() = 7;
  write_file_bytes(dir / "bool.safetensors", bad_bool);
  io::SafeTensors f(dir / "bool.safetensors");
  CHECK(has(error_of([&] { (void)f.get<bool>("bool"); }), "holds byte 7"));
}

TEST_CASE("io: bad npy files throw weft::Error") {
  IoTempDir dir;
  const std::string good = read_file_bytes(kGolden + "f32.npy");
  auto message = [&](const std::string& bytes) {
    write_file_bytes(dir / "bad.npy", bytes);
    return error_of([&] { (void)io::load_npy<float>(dir / "bad.npy"); });
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string b = good;
    REQUIRE(b.find(from) != std::string::npos);
    return b.replace(b.find(from), from.size(), to);
  };
  CHECK(has(message(good.substr(0, 20)), "runs past the end"));
  CHECK(has(message(good.substr(0, good.size() - 4)), "needs 24 bytes of data, the file has 20"));
  CHECK(has(message("not numpy at all"), "no \\x93NUMPY magic"));
  CHECK(has(message(replaced("'<f4'", "'>f4'")), "has dtype '>f4'"));
  CHECK(has(message(replaced("(2, 3)", "(2, 4)")), "needs 32 bytes"));
  CHECK(has(message(replaced("'shape'", "'shapf'")), "unexpected or repeated key 'shapf'"));
  CHECK(has(message(replaced("False", "Fals ")), "neither True nor False"));
}

TEST_CASE("io: 12,000 random mutations of valid files load consistently or throw weft::Error") {
  const std::string base = read_file_bytes(kGolden + "all.safetensors");
  std::uint64_t n = 0;
  std::memcpy(&n, base.data(), 8);
  std::mt19937_64 rng(seed());
  static constexpr char kJsonBytes[] = "{}[],:\"0123456789-\\ eE.";
  int loaded = 0, rejected = 0;
  for (int iteration = 0; iteration < 12000; ++iteration) {
    std::string bytes = base;
    auto position = [&](std::size_t limit) { return limit ? std::size_t(rng() % limit) : 0; };
    for (int m = 0, count = 1 + int(rng() % 3); m < count; ++m) {
      // Most mutations hit the header, where the parser's decisions are.
      const std::size_t in_header = 8 + position(std::min<std::size_t>(n, bytes.size() > 8 ? bytes.size() - 8 : 0));
      switch (rng() % 7) {
        case 0: bytes[position(bytes.size())] ^= char(1u << (rng() % 8)); break;  // one bit
        case 1: if (in_header < bytes.size()) bytes[in_header] = kJsonBytes[rng() % (sizeof kJsonBytes - 1)]; break;
        case 2: bytes.resize(position(bytes.size() + 1)); break;  // truncation
        case 3: {  // header length off by a little, or anything
          std::uint64_t len = rng() % 2 ? n + (rng() % 17) - 8 : rng();
          if (bytes.size() >= 8) std::memcpy(bytes.data(), &len, 8);
          break;
        }
        case 4: bytes.insert(std::min(in_header, bytes.size()), std::string(1 + rng() % 8, char(rng()))); break;
        case 5: if (in_header < bytes.size()) bytes.erase(in_header, 1 + rng() % 8); break;
        default: if (in_header < bytes.size()) bytes[in_header] = char('0' + rng() % 10); break;  // a digit
      }
    }
    try {
      const auto index = io::detail::parse_safetensors(bytes, "fuzz");
      // A file that loads is consistent: its tensors tile the data exactly, each the size its
      // shape and dtype need.
      std::uint64_t total = 0;
      for (const auto& e : index.entries) {
        REQUIRE(e.end <= bytes.size() - index.data_start);
        REQUIRE(e.end - e.begin == std::uint64_t(e.shape.numel()) * e.dtype->size);
        total += e.end - e.begin;
      }
      REQUIRE(total == bytes.size() - index.data_start);
      ++loaded;
    } catch (const weft::Error&) {
      ++rejected;
    }
  }
  MESSAGE("mutated headers: ", loaded, " loaded, ", rejected, " rejected");
  CHECK(rejected > 6000);
  CHECK(loaded > 100);
}

TEST_CASE("io: 3,000 random mutations of an npy header parse consistently or throw weft::Error") {
  const std::string base = read_file_bytes(kGolden + "f32_fortran.npy");
  std::mt19937_64 rng(seed());
  static constexpr char kDictBytes[] = "{}()',:0123456789 TrueFals<|f4";
  int parsed = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string bytes = base;
    for (int m = 0, count = 1 + int(rng() % 3); m < count && !bytes.empty(); ++m) {
      const std::size_t at = std::size_t(rng() % bytes.size());
      switch (rng() % 4) {
        case 0: bytes[at] ^= char(1u << (rng() % 8)); break;
        case 1: bytes[at] = kDictBytes[rng() % (sizeof kDictBytes - 1)]; break;
        case 2: bytes.resize(at); break;
        default: bytes.erase(at, 1 + rng() % 4); break;
      }
    }
    try {
      const io::detail::NpyHeader h = io::detail::parse_npy_header(bytes, "fuzz");
      REQUIRE(h.data_start <= bytes.size());  // a header that parses lies inside the file
      REQUIRE(h.shape.rank() <= weft::kMaxRank);
      ++parsed;
    } catch (const weft::Error&) {
    }
  }
  CHECK(parsed > 0);
}

}  // TEST_SUITE
