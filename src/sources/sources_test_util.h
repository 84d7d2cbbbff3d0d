// Test-only helpers shared by the sources tests.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cg_inject/diagnostics.h"

namespace cg_inject::testing {

/// ../shared/corpus/<relative>, or empty when the shared corpus is absent.
inline std::string CorpusPath(const std::string& relative) {
  std::string path = std::string(CG_INJECT_SOURCE_ROOT) + "/../shared/corpus/" + relative;
  std::ifstream probe(path, std::ios::binary);
  return probe ? path : std::string();
}

inline std::string ReadTestFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

/// Every kept warning message, in order.
inline std::vector<std::string> Messages(const Diagnostics& diagnostics) {
  std::vector<std::string> all;
  for (const Diagnostics::Kind& kind : diagnostics.kinds()) {
    all.insert(all.end(), kind.first_messages.begin(), kind.first_messages.end());
  }
  return all;
}

/// The count of warnings of `kind`.
inline int64_t WarningCount(const Diagnostics& diagnostics, std::string_view kind) {
  for (const Diagnostics::Kind& k : diagnostics.kinds()) {
    if (k.kind == kind) return k.count;
  }
  return 0;
}

}  // namespace cg_inject::testing

#define CG_SKIP_WITHOUT_CORPUS(path) \
  if ((path).empty()) GTEST_SKIP() << "../shared/corpus is absent; corpus test skipped"
