// libFuzzer target for the whole pipeline: one input holds a symbol source (perf map or jitdump,
// told apart by content) and a profile (plain or zstd), split at kSeparator; no separator means
// a profile with no symbol source. The profile runs through the reader, the injector over the
// index and the writer, and the output is read back. Crashes, a failed invariant (a bug by
// definition: exit 3 in the CLI), an output that does not read back, and an output whose
// summary:/totals: disagree with its costs all stop the fuzzer.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "callgrind/callgrind_reader.h"
#include "callgrind/callgrind_writer.h"
#include "callgrind/profile_summary.h"
#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/inject.h"
#include "cg_inject/io.h"
#include "cg_inject/symbols.h"
#include "sources/symbol_sources.h"

namespace {
constexpr std::string_view kSeparator = "\n--cg-inject-fuzz-profile--\n";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cg_inject;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string_view source_bytes, profile = bytes;
  if (size_t at = bytes.find(kSeparator); at != std::string_view::npos) {
    source_bytes = bytes.substr(0, at);
    profile = bytes.substr(at + kSeparator.size());
  }
  SymbolIndex index;
  Diagnostics diagnostics;
  try {
    if (!source_bytes.empty()) {
      // The name carries the pid the profile's pid: line usually names; any works.
      LoadSymbolSourceBytes(source_bytes, "/tmp/perf-1.map", SourceKind::kDetect, &index,
                            &diagnostics);
    }
  } catch (const InputError&) {
    return 0;
  }
  index.Finish();

  StringSink written;
  InjectStats stats;
  try {
    CallgrindWriter writer(&written);
    Injector injector(index, nullptr, InjectOptions{}, &writer);
    auto in = OpenMemoryInput(profile, "fuzz");
    ReadCallgrind(*in, injector, {.diagnostics = &diagnostics});
    writer.Flush();
    stats = injector.stats();
  } catch (const InvariantError&) {
    __builtin_trap();
  } catch (const InputError&) {
    return 0;
  }
  if (!stats.invariant_violations.empty()) __builtin_trap();

  ProfileSummary reread;
  Diagnostics reread_diagnostics;
  auto in = OpenMemoryInput(written.data(), "output");
  ReadCallgrind(*in, reread, {.diagnostics = &reread_diagnostics});  // must not throw
  for (const Diagnostics::Kind& kind : reread_diagnostics.kinds()) {
    if (kind.kind == "callgrind: costs disagree with summary:/totals:") __builtin_trap();
  }
  return 0;
}
