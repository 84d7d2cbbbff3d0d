// libFuzzer target: raw bytes as a perf map, then the index built from it is queried through the
// VersionChooser the injector uses.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cg_inject/diagnostics.h"
#include "cg_inject/error.h"
#include "cg_inject/symbols.h"
#include "resolve/version_chooser.h"
#include "sources/perf_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  cg_inject::SymbolIndex index;
  cg_inject::Diagnostics diagnostics;
  uint32_t source = index.AddSource({"perf-1.map", "perf-map", "perf-1.map"});
  try {
    cg_inject::ReadPerfMap(bytes, "perf-1.map", source, &index, &diagnostics);
  } catch (const cg_inject::InputError&) {
    return 0;
  }
  index.Finish();
  cg_inject::VersionChooser chooser(index, cg_inject::CodeArch::kX86_64);
  for (size_t i = 0; i < index.size(); ++i) {
    const cg_inject::CodeVersion& v = index.version(i);
    uint64_t addrs[] = {v.start(), v.start() + v.size() / 2};
    (void)chooser.ChooseForBlock(v.start(), addrs, 1);
    (void)chooser.Choose(v.start() + v.size() / 2, nullptr, 2);
    (void)index.LookupAll(v.end() - 1);
  }
  return 0;
}
