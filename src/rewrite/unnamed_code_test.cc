// Issue 33 item 6: JIT code no source names is one function per address, named after what it is
// where the runtime says (Mono's trampolines) and after the map entry it follows.
#include "rewrite/unnamed_code.h"

#include <gtest/gtest.h>

#include <string>

#include "cg_inject/symbols.h"
#include "rewrite/rewrite_test_util.h"

namespace cg_inject {
namespace {

class UnnamedCodeTest : public ::testing::Test {
 protected:
  // A Mono map: its generic trampolines, two methods with a `(null)` entry after each (as
  // Mono's perf map lists a static RGCTX trampoline), and a method in a chunk 1 MiB further.
  void Mono() {
    uint32_t map = index_.AddSource({"/tmp/perf-6026.map", "perf-map", "perf-6026.map", 0});
    testing::AddVersion(&index_, map, 0x4b89200, 0x243, "generic_trampoline_jit");
    testing::AddVersion(&index_, map, 0x6c9f910, 0xf3, "int:ToString ()");
    testing::AddVersion(&index_, map, 0x6c9fa10, 0xb, "(null)");
    testing::AddVersion(&index_, map, 0x6c9fa30, 0x7f0, "System.Number:.cctor ()");
    testing::AddVersion(&index_, map, 0x6ca0220, 0x8, "(null)");
    testing::AddVersion(&index_, map, 0x6ca0230, 0x8, "(null)");
    testing::AddVersion(&index_, map, 0x6db0000, 0x40, "Driver:Main ()");
    index_.Finish();
  }
  std::string Named(uint64_t start) {
    for (size_t i = 0; i < index_.size(); ++i)
      if (index_.version(i).start() == start) return unnamed_.VersionName(index_.version(i));
    return "no version at that address";
  }

  SymbolIndex index_;
  UnnamedCode unnamed_{index_, [](const CodeVersion& v) { return std::string(v.display_name()); }};
};

TEST_F(UnnamedCodeTest, MonosNullEntriesAreTrampolinesAfterTheEntryBefore) {
  Mono();
  EXPECT_EQ(Named(0x6c9fa10), "(trampoline at 0x6c9fa10 after int:ToString ())");
  EXPECT_EQ(Named(0x6ca0220), "(trampoline at 0x6ca0220 after System.Number:.cctor ())");
  // The entry before is unnamed too: the named one before both.
  EXPECT_EQ(Named(0x6ca0230), "(trampoline at 0x6ca0230 after System.Number:.cctor ())");
}

TEST_F(UnnamedCodeTest, CodeBetweenMonoEntriesIsATrampolineAfterTheEntryBefore) {
  Mono();
  // 3 bytes after int:ToString's end, and 0x3fc after System.Number:.cctor's.
  EXPECT_EQ(unnamed_.GapName(0x6c9fa06), "(trampoline at 0x6c9fa06 after int:ToString ())");
  EXPECT_EQ(unnamed_.GapName(0x6ca061c), "(trampoline at 0x6ca061c after System.Number:.cctor ())");
  // A chunk's trampolines made before its first method: nothing before it in the chunk.
  EXPECT_EQ(unnamed_.GapName(0x6daf000), "(trampoline at 0x6daf000)");
  // Megabytes from any entry: a shared library's stub, say; nothing says what it is.
  EXPECT_EQ(unnamed_.GapName(0x6e80000), "");
  EXPECT_EQ(unnamed_.GapName(0x2000000), "");
}

TEST_F(UnnamedCodeTest, OtherRuntimesNullEntriesAreNamedByAddressAndTheirGapsNotAtAll) {
  uint32_t map = index_.AddSource({"/tmp/perf-7.map", "perf-map", "perf-7.map", 0});
  testing::AddVersion(&index_, map, 0x1000, 0x10, "f");
  testing::AddVersion(&index_, map, 0x1010, 0x8, "(null)");
  testing::AddVersion(&index_, map, 0x1020, 0x8, "(null)");
  index_.Finish();
  EXPECT_EQ(Named(0x1010), "(unnamed JIT code at 0x1010)");
  EXPECT_EQ(Named(0x1020), "(unnamed JIT code at 0x1020)");
  EXPECT_EQ(unnamed_.GapName(0x1018), "");
}

}  // namespace
}  // namespace cg_inject
