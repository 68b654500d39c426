// SPDX-License-Identifier: MIT
/// @file A small strict JSON reader and string writer: the subset safetensors headers use (objects, arrays, strings, integers).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weft/core/error.hpp"

namespace weft::io::detail {

struct JsonMember;

/// One parsed JSON value. Numbers must be integers (safetensors has no others); objects keep
/// their members in file order and never repeat a key. (Members are a struct of their own, not a
/// std::pair: pair<string, Json> inside Json needs Json complete under clang's library checks.)
struct Json {
  enum class Kind : unsigned char { null, boolean, integer, string, array, object };
  Kind kind = Kind::null;
  bool boolean = false;
  std::int64_t integer = 0;
  std::string string;
  std::vector<Json> array;
  std::vector<JsonMember> object;

  const Json* find(std::string_view key) const;
};
struct JsonMember {
  std::string key;
  Json value;
};
inline const Json* Json::find(std::string_view key) const {
  for (const auto& member : object)
    if (member.key == key) return &member.value;
  return nullptr;
}

/// A recursive-descent parser over one document; its errors name `what` (the file) and the byte
/// where it stopped.
class JsonParser {
 public:
  JsonParser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  Json parse_document() {
    Json v = value(0);
    skip_space();
    if (i_ != s_.size()) error("unexpected text after the JSON value");
    return v;
  }

 private:
  // Nesting deeper than this is no header: the bound keeps a hostile file from exhausting the stack.
  static constexpr int kMaxDepth = 32;

  [[noreturn]] void error(const char* what) const {
    weft::detail::fail("io", what_, ": bad JSON header at byte ", i_, ": ", what);
  }
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  char peek() {
    skip_space();
    if (i_ >= s_.size()) error("the text ends inside a value");
    return s_[i_];
  }
  void expect(char c) {
    if (peek() != c) error(c == ':' ? "expected ':'" : c == '"' ? "expected a string" : "expected a delimiter");
    ++i_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  Json value(int depth) {
    if (depth > kMaxDepth) error("nested too deeply");
    Json v;
    char c = peek();
    if (c == '{') {
      v.kind = Json::Kind::object;
      ++i_;
      if (peek() == '}') return ++i_, v;
      for (;;) {
        std::string key = string();
        for (const auto& member : v.object)
          if (member.key == key) error(("duplicate key \"" + key + "\"").c_str());
        expect(':');
        v.object.push_back(JsonMember{std::move(key), value(depth + 1)});
        if (peek() == '}') return ++i_, v;
        expect(',');
      }
    }
    if (c == '[') {
      v.kind = Json::Kind::array;
      ++i_;
      if (peek() == ']') return ++i_, v;
      for (;;) {
        v.array.push_back(value(depth + 1));
        if (peek() == ']') return ++i_, v;
        expect(',');
      }
    }
    if (c == '"') {
      v.kind = Json::Kind::string;
      v.string = string();
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Json::Kind::integer;
      v.integer = integer();
      return v;
    }
    if (bool is_true = literal("true"); is_true || literal("false")) {
      v.kind = Json::Kind::boolean;
      v.boolean = is_true;
      return v;
    }
    if (literal("null")) return v;
    error("expected a value");
  }

  std::int64_t integer() {
    bool negative = s_[i_] == '-';
    if (negative) ++i_;
    std::size_t start = i_;
    std::uint64_t magnitude = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      std::uint64_t digit = std::uint64_t(s_[i_] - '0');
      if (magnitude > (std::uint64_t(INT64_MAX) - digit) / 10) error("integer out of range");
      magnitude = magnitude * 10 + digit;
      ++i_;
    }
    if (i_ == start) error("expected digits");
    if (s_[start] == '0' && i_ - start > 1) error("leading zero in a number");
    if (i_ < s_.size() && (s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E')) error("a number that is not an integer");
    return negative ? -std::int64_t(magnitude) : std::int64_t(magnitude);
  }

  unsigned hex4() {
    if (s_.size() - i_ < 4) error("truncated \\u escape");
    unsigned code = 0;
    for (int k = 0; k < 4; ++k) {
      char h = s_[i_++];
      unsigned d = h >= '0' && h <= '9' ? unsigned(h - '0')
                   : h >= 'a' && h <= 'f' ? unsigned(h - 'a' + 10)
                   : h >= 'A' && h <= 'F' ? unsigned(h - 'A' + 10)
                                          : 16u;
      if (d == 16) error("bad hex digit in a \\u escape");
      code = code * 16 + d;
    }
    return code;
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xc0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += char(0xe0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    } else {
      out += char(0xf0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3f));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    }
  }

  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) error("the text ends inside a string");
      char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) error("a control character inside a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) error("the text ends inside a string");
      switch (char e = s_[i_++]) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          std::uint32_t cp = hex4();
          if (cp >= 0xd800 && cp < 0xdc00) {  // a UTF-16 surrogate pair encodes one code point
            if (!literal("\\u")) error("a lone UTF-16 surrogate");
            std::uint32_t low = hex4();
            if (low < 0xdc00 || low >= 0xe000) error("a lone UTF-16 surrogate");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          } else if (cp >= 0xdc00 && cp < 0xe000) {
            error("a lone UTF-16 surrogate");
          }
          append_utf8(out, cp);
          break;
        }
        default: error("an unknown escape in a string");
      }
    }
  }

  std::string_view s_;
  const std::string& what_;
  std::size_t i_ = 0;
};

/// Parses one JSON document; errors name `what` (the file) and the byte where parsing stopped.
inline Json json_parse(std::string_view text, const std::string& what) { return JsonParser(text, what).parse_document(); }

/// `s` as a JSON string literal (quotes and escapes added).
inline std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 0xf];
      out += kHex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out + '"';
}

}  // namespace weft::io::detail
