// libFuzzer target for the Callgrind reader: raw bytes in through OpenMemoryInput (so zstd
// detection is fuzzed too), into a ProfileSummary. Inputs that read must also survive a
// write/read round trip with an identical summary, so writer bugs crash here as well.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "callgrind/callgrind_reader.h"
#include "callgrind/callgrind_writer.h"
#include "callgrind/profile_summary.h"
#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cg_inject;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ProfileSummary original;
  StringSink written;
  try {
    Diagnostics diagnostics;
    auto in = OpenMemoryInput(bytes, "fuzz");
    ReadCallgrind(*in, original, {.diagnostics = &diagnostics});
    auto again = OpenMemoryInput(bytes, "fuzz");
    CallgrindWriter writer(&written);
    ReadCallgrind(*again, writer, {.diagnostics = &diagnostics});
  } catch (const InputError&) {
    return 0;
  }
  ProfileSummary reread;
  Diagnostics diagnostics;
  auto in = OpenMemoryInput(written.data(), "rewritten");
  ReadCallgrind(*in, reread, {.diagnostics = &diagnostics});  // must not throw
  if (!CompareSummaries(original, reread).empty()) __builtin_trap();
  return 0;
}
