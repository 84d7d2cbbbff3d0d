// printf-style appending for the few places that build reports line by line (--stats, the ELF
// image summary); locale-free number output on hot paths uses std::to_chars instead.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>

namespace cg_inject {

/// Appends `format` with `args` to `out`; output past 511 bytes is cut.
inline void AppendF(std::string* out, const char* format, auto... args) {
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, format, args...);
  if (n > 0) out->append(buf, std::min(size_t(n), sizeof buf - 1));
}

}  // namespace cg_inject
