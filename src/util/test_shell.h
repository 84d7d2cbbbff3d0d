// Tests that check cg-inject's files with the system's tools (readelf, objdump, sha1sum, cc) run
// them through the shell with this.
#pragma once

#include <cstdio>
#include <string>

namespace cg_inject {

/// Runs `command` with /bin/sh and returns what it wrote on stdout (add `2>&1` for stderr too);
/// `*status` gets pclose's status when asked. Empty when the shell cannot be started.
inline std::string ShellOutput(const std::string& command, int* status = nullptr) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int rc = pclose(pipe);
  if (status != nullptr) *status = rc;
  return out;
}

}  // namespace cg_inject
