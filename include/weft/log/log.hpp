// SPDX-License-Identifier: MIT
/// @file WEFT_LOGS: per-component logging (like TORCH_LOGS), zero cost when off.
#pragma once

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>

#include "weft/core/config.hpp"
#include "weft/core/error.hpp"

namespace weft {

/// The components WEFT_LOGS / set_logs can switch on.
enum class LogComponent : unsigned { fusion, foreach, sdpa, optim, cuda, output_code, cpu, vision, count };

/// How much a component prints: errors only (-name), info (name), debug (+name).
enum class LogLevel : unsigned char { off, error, info, debug };

namespace detail {

inline constexpr std::string_view kLogNames[] = {"fusion", "foreach", "sdpa", "optim", "cuda", "output_code", "cpu", "vision"};

inline constexpr std::string_view kLogLevelNames[] = {"off", "error", "info", "debug"};

/// The levels WEFT_LOGS starts from: `cpu` at the error level, so that a build whose packets are
/// narrower than the CPU's says so once on stderr (backend/cpu/simd/isa_hint.hpp) unless
/// WEFT_LOGS turns it off (`cpu=off`); every other component off.
inline constexpr unsigned kDefaultLogLevels = unsigned(LogLevel::error) << (2 * unsigned(LogComponent::cpu));

/// The levels after `spec` ("fusion,+sdpa,-cuda,cpu=off") changes `levels`: two bits per component.
/// An unknown component or level is a weft::Error when `strict`, else a warning on stderr.
WEFT_SHARED unsigned parse_logs(std::string_view spec, bool strict, unsigned levels = 0)
#if WEFT_SHARED_BODIES
{
  auto reject = [strict](std::string_view what, std::string_view item, const std::string& known) {
    if (strict) fail("set_logs", "unknown ", what, " '", item, "'; known: ", known);
    std::fprintf(stderr, "[weft] WEFT_LOGS: ignoring unknown %.*s '%.*s'; known: %s\n", int(what.size()), what.data(),
                 int(item.size()), item.data(), known.c_str());
  };
  while (!spec.empty()) {
    std::size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) continue;
    LogLevel level = LogLevel::info;
    if (const std::size_t equals = item.find('='); equals != std::string_view::npos) {
      // name=level: any level by name, `off` included (the only way to silence a default).
      const std::string_view level_name = item.substr(equals + 1);
      item = item.substr(0, equals);
      unsigned l = 0;
      while (l < 4 && level_name != kLogLevelNames[l]) ++l;
      if (l == 4) {
        reject("level", level_name, "off, error, info, debug");
        continue;
      }
      level = LogLevel(l);
    } else if (item.front() == '+') {
      level = LogLevel::debug, item.remove_prefix(1);
    } else if (item.front() == '-') {
      level = LogLevel::error, item.remove_prefix(1);
    }
    bool known = false;
    for (unsigned c = 0; c < unsigned(LogComponent::count); ++c) {
      if (item == kLogNames[c] || item == "all") {
        levels = (levels & ~(3u << (2 * c))) | (unsigned(level) << (2 * c));
        known = true;
      }
    }
    if (!known) {
      std::string names;
      for (auto n : kLogNames) names += std::string(n) + ", ";
      reject("component", item, names + "all (prefix + for debug, - for errors only; name=off|error|info|debug)");
    }
  }
  return levels;
}
#else
;
#endif

/// Two bits per component, initialized from WEFT_LOGS on first use. Not inlined: each
/// log_enabled() check would otherwise carry the one-time initialization (a guarded static).
[[gnu::noinline]] inline std::atomic<unsigned>& log_levels() {
  static std::atomic<unsigned> levels{[] {
    const char* env = std::getenv("WEFT_LOGS");
    return env ? parse_logs(env, false, kDefaultLogLevels) : kDefaultLogLevels;
  }()};
  return levels;
}

inline FILE* log_stream() {
  static FILE* stream = [] {
    const char* path = std::getenv("WEFT_LOGS_FILE");
    FILE* f = path ? std::fopen(path, "a") : nullptr;
    return f ? f : stderr;
  }();
  return stream;
}

}  // namespace detail

/// Same syntax as WEFT_LOGS: "fusion,+sdpa,-cuda,cpu=off", "all". It replaces every level, the
/// defaults included: "" turns everything off.
inline void set_logs(std::string_view spec) {
  detail::log_levels().store(detail::parse_logs(spec, true), std::memory_order_relaxed);
}

/// True when `component` prints at `level` or more detail.
inline bool log_enabled(LogComponent component, LogLevel level = LogLevel::info) {
  unsigned levels = detail::log_levels().load(std::memory_order_relaxed);
  return ((levels >> (2 * unsigned(component))) & 3u) >= unsigned(level);
}

/// Writes one "[weft:component] message" line (or block); thread-safe.
inline void log_write(LogComponent component, const std::string& message) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(detail::log_stream(), "[weft:%s] %s\n", detail::kLogNames[unsigned(component)].data(), message.c_str());
  std::fflush(detail::log_stream());
}

/// Logs `parts...` when the component is on; the arguments are only formatted then.
template <class... Parts>
void log_message(LogComponent component, LogLevel level, const Parts&... parts) {
  if (log_enabled(component, level)) log_write(component, detail::cat(parts...));
}

}  // namespace weft
