// SPDX-License-Identifier: MIT
/// @file Captures what weft logs during a scope: the WEFT_LOGS_FILE it writes to, or stderr.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <weft/log/log.hpp>

namespace weft_test {

/// weft opens WEFT_LOGS_FILE (else stderr) once, on its first log line. A capture works either
/// way: it points WEFT_LOGS_FILE at a temporary file when the variable is unset (before the first
/// line, that is where weft will write), remembers how long that file was, and redirects file
/// descriptor 2 to another temporary file in case weft already chose stderr. text() returns what
/// arrived in both since the capture began.
class LogCapture {
 public:
  LogCapture() {
    if (const char* env = std::getenv("WEFT_LOGS_FILE"); env && *env) {
      file_ = env;
    } else {
      file_ = temp_path("weft-log");
      ::setenv("WEFT_LOGS_FILE", file_.c_str(), 1);
    }
    start_ = read(file_).size();
    std::fflush(stderr);
    err_file_ = temp_path("weft-stderr");
    int fd = ::open(err_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    saved_ = ::dup(2);
    ::dup2(fd, 2);
    ::close(fd);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  ~LogCapture() {
    restore();
    ::unlink(err_file_.c_str());  // the log file stays: weft keeps writing to it
  }

  /// Everything logged so far in this capture.
  std::string text() {
    std::fflush(stderr);
    std::string f = read(file_);
    return (f.size() > start_ ? f.substr(start_) : std::string()) + read(err_file_);
  }

  /// Stops redirecting stderr (the destructor does it too).
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }

  /// Number of non-overlapping occurrences of `needle` in `hay`.
  static int count(const std::string& hay, const std::string& needle) {
    int n = 0;
    for (std::size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) ++n;
    return n;
  }

 private:
  static std::string temp_path(const char* stem) {
    const char* dir = std::getenv("TMPDIR");
    std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/" + stem + "-XXXXXX";
    int fd = ::mkstemp(pattern.data());
    if (fd >= 0) ::close(fd);
    return pattern;
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string file_, err_file_;
  std::size_t start_ = 0;
  int saved_ = -1;
};

/// What `statement` logs with the logs set to `spec` (WEFT_LOGS's syntax); the logs are off after.
template <class F>
std::string log_of(const char* spec, F&& statement) {
  weft::set_logs(spec);
  LogCapture capture;
  statement();
  std::string text = capture.text();
  weft::set_logs("");
  return text;
}

/// What `statement` logs under `+fusion` (every kernel run, at debug level).
template <class F>
std::string fusion_log_of(F&& statement) {
  return log_of("+fusion", statement);
}

/// The kernels `statement` ran: its `+fusion` log lines that say "fused ...", one per kernel.
template <class F>
std::vector<std::string> fusion_lines(F&& statement) {
  std::vector<std::string> lines;
  std::istringstream text(fusion_log_of(statement));
  for (std::string line; std::getline(text, line);)
    if (line.find("fused ") != std::string::npos) lines.push_back(line);
  return lines;
}

}  // namespace weft_test
