#include "elf/jit_image_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "cg_inject/symbols.h"
#include "elf/jit_image_writer.h"

namespace cg_inject {
namespace {

using ::testing::ElementsAre;

// Views into `name` and `code`; SymbolIndex::Add copies them.
CodeVersionSpec Version(uint64_t start, std::string_view name, std::string_view code,
                        uint32_t source = 0) {
  CodeVersionSpec v;
  v.start = start;
  v.size = code.size();
  v.raw_name = name;
  v.function_name = name;
  v.code = code;
  v.source = source;
  return v;
}

class JitImagePlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SymbolSourceInfo dump;
    dump.path = "/tmp/x/jit-7.dump";
    dump.kind = "jitdump";
    dump.elf_machine = kElfMachineX86_64;
    index_.AddSource(dump);
  }
  JitImagePlan Plan(bool relative = false) {
    index_.Finish();
    return PlanJitImages(index_, {"/out", "callgrind.out.jit", relative});
  }
  SymbolIndex index_;
};

TEST_F(JitImagePlanTest, ReusedAddressGoesToASecondImageAndAMoveStaysInTheFirst) {
  uint32_t moved = index_.Add(Version(0x1000, "moved", "\x90\xc3"));
  CodeVersionSpec at_new = Version(0x2000, "moved", "\x90\xc3");
  index_.Add(at_new);
  index_.Add(Version(0x3000, "reuse_v1", "\x90\x90\xc3"));
  index_.Add(Version(0x3001, "reuse_v2", "\xc3"));
  (void)moved;
  JitImagePlan plan = Plan();
  ASSERT_EQ(plan.images.size(), 2u);
  EXPECT_EQ(plan.images[0].path, "/out/callgrind.out.jit.jit-7.dump.elf");
  EXPECT_EQ(plan.images[0].object, plan.images[0].path);
  EXPECT_THAT(plan.images[0].versions, ElementsAre(0u, 1u, 2u));
  EXPECT_EQ(plan.images[1].path, "/out/callgrind.out.jit.jit-7.dump.2.elf");
  EXPECT_THAT(plan.images[1].versions, ElementsAre(3u));
  EXPECT_THAT(plan.object_by_version, ElementsAre(plan.images[0].object, plan.images[0].object,
                                                  plan.images[0].object, plan.images[1].object));
  EXPECT_EQ(plan.versions_placed, 4);
}

TEST_F(JitImagePlanTest, IdenticalReloadSharesItsSymbolAndChangedCodeDoesNot) {
  index_.Add(Version(0x1000, "f", "\x90\xc3"));
  index_.Add(Version(0x1000, "f", "\x90\xc3"));
  index_.Add(Version(0x1000, "f", "\xcc\xc3"));
  JitImagePlan plan = Plan(/*relative=*/true);
  ASSERT_EQ(plan.images.size(), 2u);
  EXPECT_EQ(plan.images[0].object, "callgrind.out.jit.jit-7.dump.elf");
  EXPECT_THAT(plan.images[0].versions, ElementsAre(0u));
  EXPECT_THAT(plan.images[1].versions, ElementsAre(2u));
  EXPECT_EQ(plan.object_by_version[1], "callgrind.out.jit.jit-7.dump.elf");
  EXPECT_EQ(plan.versions_shared, 1);
}

TEST_F(JitImagePlanTest, ReloadsAtOneAddressShareWithTheVersionOfTheirNameAndCode) {
  index_.Add(Version(0x1000, "f", "\x90\xc3"));  // 0
  index_.Add(Version(0x1000, "f", "\xcc\xc3"));  // 1: changed code
  index_.Add(Version(0x1000, "g", "\x90\xc3"));  // 2: another name
  index_.Add(Version(0x1000, "f", "\xcc\xc3"));  // 3: 1 again
  index_.Add(Version(0x1000, "f", "\x90\xc3"));  // 4: 0 again
  index_.Add(Version(0x2000, "f", "\x90\xc3"));  // 5: 0's code elsewhere
  JitImagePlan plan = Plan(/*relative=*/true);
  EXPECT_THAT(plan.shared_with, ElementsAre(std::pair<uint32_t, uint32_t>(3, 1),
                                            std::pair<uint32_t, uint32_t>(4, 0)));
  EXPECT_EQ(plan.versions_shared, 2);
  EXPECT_EQ(plan.versions_placed, 6);
  ASSERT_EQ(plan.images.size(), 3u);
  EXPECT_THAT(plan.images[0].versions, ElementsAre(0u, 5u));
  EXPECT_THAT(plan.images[1].versions, ElementsAre(1u));
  EXPECT_THAT(plan.images[2].versions, ElementsAre(2u));
  EXPECT_EQ(plan.object_by_version[3], plan.images[1].object);
  EXPECT_EQ(plan.object_by_version[4], plan.images[0].object);
}

TEST_F(JitImagePlanTest, VersionsWithoutCodeOrOfAnotherArchitectureGetNoImage) {
  SymbolSourceInfo map;
  map.path = "/tmp/perf-7.map";
  map.kind = "perf-map";
  map.elf_machine = 0;
  uint32_t map_source = index_.AddSource(map);
  SymbolSourceInfo arm32;
  arm32.path = "jit-8.dump";
  arm32.elf_machine = 40;  // EM_ARM
  uint32_t arm_source = index_.AddSource(arm32);
  index_.Add(Version(0x1000, "from_map", "", map_source));
  index_.Add(Version(0x2000, "arm", "\x01\x10\xa0\xe1", arm_source));
  CodeVersionSpec salted = Version(0x3000, "salted", "\x90\x90\xc3");
  salted.salted_code_tail = 1;
  index_.Add(salted);
  JitImagePlan plan = Plan();
  ASSERT_EQ(plan.images.size(), 1u);
  EXPECT_THAT(plan.object_by_version, ElementsAre("", "", plan.images[0].object));
  EXPECT_EQ(plan.versions_skipped, 1);
  EXPECT_EQ(plan.salted_versions, 1);
}

TEST_F(JitImagePlanTest, ManyFunctionsSpillIntoFurtherImages) {
  for (uint64_t i = 0; i < 5; ++i) index_.Add(Version(0x1000 * (i + 1), "f", "\xc3"));
  index_.Finish();
  JitImagePlan plan = PlanJitImages(index_, {"/out", "p", false, /*max_functions=*/2});
  ASSERT_EQ(plan.images.size(), 3u);
  EXPECT_THAT(plan.images[0].versions, ElementsAre(0u, 1u));
  EXPECT_THAT(plan.images[1].versions, ElementsAre(2u, 3u));
  EXPECT_THAT(plan.images[2].versions, ElementsAre(4u));
}

TEST_F(JitImagePlanTest, WritesEveryImage) {
  char tmpl[] = "/tmp/cg-inject-plan-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  index_.Add(Version(0x1000, "a", "\x90\xc3"));
  index_.Add(Version(0x1000, "b", "\xc3"));
  index_.Finish();
  JitImagePlan plan = PlanJitImages(index_, {dir, "p", false});
  JitImageWriteStats stats = WriteJitImages(plan, index_);
  EXPECT_EQ(stats.images, 2);
  EXPECT_EQ(stats.symbols, 2);
  EXPECT_TRUE(std::filesystem::exists(dir + "/p.jit-7.dump.elf"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/p.jit-7.dump.2.elf"));
  EXPECT_EQ(stats.file_bytes, std::filesystem::file_size(dir + "/p.jit-7.dump.elf") +
                                  std::filesystem::file_size(dir + "/p.jit-7.dump.2.elf"));
  std::filesystem::remove_all(dir);
}

TEST_F(JitImagePlanTest, CodeReusedManyTimesAtOneAddressGetsImagesOfItsOwn) {
  // A jitdump that loads one address 10,000 times (issue 36 item 6): placing each version tried
  // every image so far. Past max_shared_images a version has an image to itself.
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) names.push_back("v" + std::to_string(i));
  for (const std::string& name : names) index_.Add(Version(0x1000, name, "\x90\xc3"));
  index_.Finish();
  JitImageNaming naming{"/out", "p", false};
  naming.max_shared_images = 8;
  JitImagePlan plan = PlanJitImages(index_, naming);
  ASSERT_EQ(plan.images.size(), 200u);
  EXPECT_EQ(plan.versions_alone, 192);
  for (size_t i = 0; i < plan.images.size(); ++i) {
    EXPECT_THAT(plan.images[i].versions, ElementsAre(uint32_t(i)));
    EXPECT_EQ(
        plan.images[i].path,
        "/out/p.jit-7.dump" + (i == 0 ? std::string() : "." + std::to_string(i + 1)) + ".elf");
  }
}

TEST_F(JitImagePlanTest, OnlyImagesHoldingATouchedVersionAreKeptWhole) {
  index_.Add(Version(0x1000, "a", "\x90\xc3"));
  index_.Add(Version(0x1000, "b", "\x90\xc3"));  // reuses a's address: image 2
  index_.Add(Version(0x2000, "c", "\x90\xc3"));  // beside a: image 1
  index_.Add(Version(0x1000, "b", "\x90\xc3"));  // b loaded again, identical: shares b's symbol
  JitImagePlan plan = Plan();
  ASSERT_EQ(plan.images.size(), 2u);
  ASSERT_EQ(plan.versions_shared, 1);
  JitImagePlan only_a = plan;
  // The output named c, and the reload of b only: both images, each whole (a beside c).
  KeepTouched(&plan, {false, false, true, true});
  ASSERT_EQ(plan.images.size(), 2u);
  EXPECT_THAT(plan.images[0].versions, ElementsAre(0u, 2u));
  EXPECT_THAT(plan.images[1].versions, ElementsAre(1u));  // the symbol the reload shares
  EXPECT_EQ(plan.versions_untouched, 0);
  EXPECT_EQ(plan.images_untouched, 0);
  // The output named a only: b's image is not written.
  KeepTouched(&only_a, {true, false, false, false});
  ASSERT_EQ(only_a.images.size(), 1u);
  EXPECT_THAT(only_a.images[0].versions, ElementsAre(0u, 2u));
  EXPECT_EQ(only_a.versions_untouched, 1);
  EXPECT_EQ(only_a.images_untouched, 1);
}

}  // namespace
}  // namespace cg_inject
