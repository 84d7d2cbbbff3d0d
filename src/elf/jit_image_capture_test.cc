// The images of the stored captures (tests/data: the test JIT on both architectures, Node 20's
// jitdump, MoarVM's raw code files), read back with LIEF: every placed version is a function
// symbol of its image with its size, and the bytes at its address are the source's. A missing
// capture fails the test.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <LIEF/ELF.hpp>
#include <LIEF/logging.hpp>
#include <filesystem>
#include <map>
#include <string>

#include "cg_inject/diagnostics.h"
#include "cg_inject/symbols.h"
#include "elf/jit_image_plan.h"
#include "elf/jit_image_writer.h"
#include "sources/moar_jit_code.h"
#include "sources/symbol_sources.h"

namespace cg_inject {
namespace {

const std::string kRoot = CG_INJECT_SOURCE_ROOT "/tests/data/";

struct Capture {
  const char* dump;  // under tests/data: a jitdump, or a MoarVM perf map when moar_dir is set
  LIEF::ELF::ARCH machine;
  int64_t images;                  // reused addresses need a second image
  int64_t versions;                // code versions placed
  const char* moar_dir = nullptr;  // MoarVM's raw code directory under tests/data
};

class JitImageCaptureTest : public ::testing::TestWithParam<Capture> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cg-inject-capture-images-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_P(JitImageCaptureTest, LiefReadsEverySymbolAndItsBytes) {
  const Capture& c = GetParam();
  const std::string path = kRoot + c.dump;
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  SymbolIndex index;
  Diagnostics diagnostics;
  if (c.moar_dir) {
    LoadSymbolSources({{path, SourceKind::kPerfMap, true}}, &index, &diagnostics);
    MoarCodeStats moar = AttachMoarCode(ReadMoarCodeDir(kRoot + c.moar_dir), 0, &index);
    EXPECT_EQ(moar.paired, c.versions);
  } else {
    LoadSymbolSources({{path, SourceKind::kJitdump, true}}, &index, &diagnostics);
  }
  JitImagePlan plan = PlanJitImages(index, {dir_, "p", false});
  JitImageWriteStats written = WriteJitImages(plan, index);
  EXPECT_EQ(written.images, c.images);
  EXPECT_EQ(plan.versions_placed, c.versions);

  LIEF::Logger::disable();
  int64_t symbols_checked = 0;
  for (const PlannedJitImage& image : plan.images) {
    std::unique_ptr<LIEF::ELF::Binary> binary = LIEF::ELF::Parser::parse(image.path);
    ASSERT_NE(binary, nullptr) << image.path;
    EXPECT_EQ(binary->header().machine_type(), c.machine);
    std::multimap<uint64_t, std::pair<std::string, uint64_t>> symbols;  // addr -> name, size
    for (const LIEF::ELF::Symbol& s : binary->static_symbols())
      if (!s.name().empty()) symbols.emplace(s.value(), std::make_pair(s.name(), s.size()));
    EXPECT_EQ(symbols.size(), image.versions.size());
    for (uint32_t i : image.versions) {
      const CodeVersion& v = index.version(i);
      auto it = symbols.find(v.start());
      ASSERT_NE(it, symbols.end()) << v.function_name();
      EXPECT_EQ(it->second.first, v.function_name().empty() ? v.raw_name() : v.function_name());
      EXPECT_EQ(it->second.second, v.code().size());
      std::vector<uint8_t> bytes =
          binary->get_content_from_virtual_address(v.start(), v.code().size());
      EXPECT_EQ(std::string(bytes.begin(), bytes.end()), v.code()) << v.function_name();
      ++symbols_checked;
    }
  }
  EXPECT_EQ(symbols_checked + plan.versions_shared, c.versions);
}

INSTANTIATE_TEST_SUITE_P(
    Captures, JitImageCaptureTest,
    ::testing::Values(Capture{"x86_64/instr/jit-24022.dump", LIEF::ELF::ARCH::EM_X86_64, 2, 11},
                      Capture{"aarch64/instr/jit-28427.dump", LIEF::ELF::ARCH::EM_AARCH64, 2, 11},
                      Capture{"node/prof/jit-6765.dump.zst", LIEF::ELF::ARCH::EM_X86_64, 1, 2203},
                      Capture{"moar/perf-25521.map", LIEF::ELF::ARCH::EM_X86_64, 1, 44,
                              "moar/moar-jit.25521"}));

}  // namespace
}  // namespace cg_inject
