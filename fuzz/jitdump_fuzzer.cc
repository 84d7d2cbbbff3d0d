// libFuzzer target: raw bytes as a jitdump; the resulting index is queried through the
// VersionChooser the injector uses, so that line tables and Capstone decoding of the (fuzzed) code
// bytes run too.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/symbols.h"
#include "resolve/version_chooser.h"
#include "sources/jitdump.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  cg_inject::SymbolIndex index;
  cg_inject::Diagnostics diagnostics;
  uint32_t source = index.AddSource({"jit-1.dump", "jitdump", "jit-1.dump"});
  try {
    cg_inject::ReadJitdump(bytes, "jit-1.dump", source, &index, &diagnostics);
  } catch (const cg_inject::InputError&) {
    return 0;
  }
  index.Finish();
  // The header's e_machine picks the decoder; the default covers a dump that names no machine.
  cg_inject::VersionChooser chooser(index, cg_inject::CodeArch::kX86_64);
  for (size_t i = 0; i < index.size(); ++i) {
    const cg_inject::CodeVersion& v = index.version(i);
    if (v.size() == 0) continue;
    uint64_t addrs[] = {v.start(), v.start() + 1, v.end() - 1};
    (void)chooser.ChooseForBlock(v.start(), addrs, 1);
    (void)chooser.Choose(v.start() + v.size() / 2, &v, 2);
    (void)v.LookupLine(v.start() + v.size() / 2);
  }
  return 0;
}
