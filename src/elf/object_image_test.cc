#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cg_inject/object_catalog.h"

namespace cg_inject {
namespace {

using ::testing::ElementsAre;

// A PIE-like layout: read-only headers, code, read-only data, data.
std::vector<LoadSegment> TypicalSegments() {
  return {{0x0, 0x1290, false},
          {0x2000, 0x3d59, true},
          {0x6000, 0x1b60, false},
          {0x8d70, 0x608, false}};
}

ObjectImage Image(std::vector<ElfSymbol> symbols,
                  std::vector<LoadSegment> segments = TypicalSegments()) {
  return ObjectImage("/usr/lib/libtest.so", true, std::move(segments), std::move(symbols));
}

std::string NameAt(const ObjectImage& image, uint64_t addr) {
  const ElfSymbol* s = image.LookupSymbol(addr);
  return s == nullptr ? "(none)" : std::string(s->name);
}

TEST(ObjectImageTest, ExtentSpansAllLoadSegments) {
  ObjectImage image = Image({});
  EXPECT_EQ(image.path(), "/usr/lib/libtest.so");
  EXPECT_TRUE(image.is_pie());
  EXPECT_EQ(image.extent_begin(), 0x0u);
  EXPECT_EQ(image.extent_end(), 0x8d70u + 0x608u);
  EXPECT_TRUE(image.InExtent(0));
  EXPECT_TRUE(image.InExtent(0x9377));
  EXPECT_FALSE(image.InExtent(0x9378));
  EXPECT_TRUE(image.has_code());
}

TEST(ObjectImageTest, ExtentOfNonPieStartsAtFirstSegment) {
  ObjectImage image("/usr/bin/app", false,
                    {{0x400000, 0x1000, false}, {0x401000, 0x500, true}, {0x0, 0, false}}, {});
  EXPECT_FALSE(image.is_pie());
  // The empty segment at 0 does not drag the extent down.
  EXPECT_EQ(image.extent_begin(), 0x400000u);
  EXPECT_EQ(image.extent_end(), 0x401500u);
  EXPECT_FALSE(image.InExtent(0x3fffff));
  EXPECT_TRUE(image.InExtent(0x400000));
  EXPECT_FALSE(image.InExtent(0));
}

TEST(ObjectImageTest, IsCodeOnlyInExecutableSegments) {
  ObjectImage image = Image({});
  EXPECT_FALSE(image.IsCode(0x1000));
  EXPECT_TRUE(image.IsCode(0x2000));
  EXPECT_TRUE(image.IsCode(0x2000 + 0x3d58));
  EXPECT_FALSE(image.IsCode(0x2000 + 0x3d59));
  EXPECT_FALSE(image.IsCode(0x8d80));
}

TEST(ObjectImageTest, NoSegmentsMeansEmptyExtentAndNoCode) {
  ObjectImage image("/x", false, {}, {});
  EXPECT_EQ(image.extent_begin(), image.extent_end());
  EXPECT_FALSE(image.InExtent(0));
  EXPECT_FALSE(image.has_code());
  EXPECT_EQ(image.LookupSymbol(0), nullptr);
}

TEST(ObjectImageTest, LookupByAddressHonoursSizes) {
  // Given out of order: the image sorts them.
  ObjectImage image = Image({{0x2100, 0x40, "b"}, {0x2000, 0x20, "a"}, {0x2200, 0x10, "c"}});
  EXPECT_EQ(NameAt(image, 0x1fff), "(none)");
  EXPECT_EQ(NameAt(image, 0x2000), "a");
  EXPECT_EQ(NameAt(image, 0x201f), "a");
  EXPECT_EQ(NameAt(image, 0x2020), "(none)");  // gap between a and b
  EXPECT_EQ(NameAt(image, 0x2100), "b");
  EXPECT_EQ(NameAt(image, 0x213f), "b");
  EXPECT_EQ(NameAt(image, 0x220f), "c");
  EXPECT_EQ(NameAt(image, 0x2210), "(none)");
  ASSERT_EQ(image.symbols().size(), 3u);
  EXPECT_EQ(image.symbols()[0].name, "a");
  EXPECT_EQ(image.symbols()[2].name, "c");
}

TEST(ObjectImageTest, SizeZeroSymbolCoversOnlyItsAddress) {
  ObjectImage image = Image({{0x2000, 0, "_start_label"}, {0x2010, 0x10, "f"}});
  EXPECT_EQ(NameAt(image, 0x2000), "_start_label");
  EXPECT_EQ(NameAt(image, 0x2001), "(none)");
  EXPECT_EQ(NameAt(image, 0x2010), "f");
}

TEST(ObjectImageTest, NestedSymbolsPreferTheInnermost) {
  ObjectImage image = Image({{0x2000, 0x100, "outer"},
                             {0x2040, 0x10, "inner"},
                             {0x2080, 0x08, "inner2"},
                             {0x2200, 0x10, "after"}});
  EXPECT_EQ(NameAt(image, 0x2000), "outer");
  EXPECT_EQ(NameAt(image, 0x2045), "inner");
  // Past both inner symbols the lookup must walk back to the enclosing one.
  EXPECT_EQ(NameAt(image, 0x2050), "outer");
  EXPECT_EQ(NameAt(image, 0x2090), "outer");
  EXPECT_EQ(NameAt(image, 0x20ff), "outer");
  EXPECT_EQ(NameAt(image, 0x2100), "(none)");
  EXPECT_EQ(NameAt(image, 0x2205), "after");
}

TEST(ObjectImageTest, AliasesFoldIntoFirstGivenName) {
  // As a reader would pass libc's entries: the preferred name first, .dynsym repeating .symtab.
  ObjectImage image = Image({{0x2000, 8, "getpid"},
                             {0x2000, 8, "__getpid"},
                             {0x2000, 8, "getpid"},
                             {0x2010, 8, "other"}});
  ASSERT_EQ(image.symbols().size(), 2u);
  const ElfSymbol* s = image.LookupSymbol(0x2004);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "getpid");
  EXPECT_EQ(image.FindSymbol("getpid"), s);
  EXPECT_EQ(image.FindSymbol("__getpid"), s);
  EXPECT_THAT(image.AliasesOf(*s), ElementsAre("__getpid"));
  EXPECT_THAT(image.AliasesOf(*image.FindSymbol("other")), ElementsAre());
}

TEST(ObjectImageTest, ManyAliasesAtOneAddressKeepEachNameOnce) {
  // Thousands of names at one address (a hostile .symtab had 250,000: issue 36 item 1), each
  // given twice, as .symtab and .dynsym would: every name is kept once, in the order given.
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) names.push_back("alias_" + std::to_string(i));
  std::vector<ElfSymbol> symbols;
  for (int round = 0; round < 2; ++round)
    for (const std::string& n : names) symbols.push_back({0x4000, 0x40, n});
  ObjectImage image("/hostile", false, {{0x4000, 0x1000, true}}, std::move(symbols));
  ASSERT_EQ(image.symbols().size(), 1u);
  EXPECT_EQ(image.symbols()[0].name, "alias_0");
  std::vector<std::string_view> aliases = image.AliasesOf(image.symbols()[0]);
  ASSERT_EQ(aliases.size(), names.size() - 1);
  for (size_t i = 1; i < names.size(); ++i) EXPECT_EQ(aliases[i - 1], names[i]);
  EXPECT_EQ(image.FindSymbol("alias_4999"), &image.symbols()[0]);
}

TEST(ObjectImageTest, SizedSymbolWinsOverEarlierSizeZeroOne) {
  ObjectImage image = Image({{0x2000, 0, "label"}, {0x2000, 0x30, "func"}});
  const ElfSymbol* s = image.LookupSymbol(0x2020);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "func");
  EXPECT_EQ(s->size, 0x30u);
  EXPECT_EQ(image.FindSymbol("label"), s);
}

TEST(ObjectImageTest, RepeatedNamesAtDifferentAddresses) {
  // Local functions of different files may share a name.
  ObjectImage image = Image(
      {{0x3000, 4, "helper"}, {0x2000, 4, "helper"}, {0x2800, 4, "x"}, {0x2800, 4, "helper"}});
  const ElfSymbol* first = image.FindSymbol("helper");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->addr, 0x2000u);
  std::vector<uint64_t> addrs;
  for (const ElfSymbol* s : image.FindSymbols("helper")) addrs.push_back(s->addr);
  EXPECT_THAT(addrs, ElementsAre(0x2000u, 0x2800u, 0x3000u));
  EXPECT_EQ(image.FindSymbol("help"), nullptr);
  EXPECT_EQ(image.FindSymbol("helper2"), nullptr);
  EXPECT_TRUE(image.FindSymbols("nothing").empty());
}

TEST(ObjectImageTest, NameIndexSurvivesMove) {
  // Short names live inside the string objects (small-string optimization), so this checks that
  // moving the image keeps the index's views valid.
  ObjectImage image = Image({{0x2000, 4, "a"}, {0x2000, 4, "b"}, {0x2004, 4, "c"}});
  ObjectImage moved = std::move(image);
  ObjectImage assigned("/other", false, {}, {});
  assigned = std::move(moved);
  ASSERT_NE(assigned.FindSymbol("b"), nullptr);
  EXPECT_EQ(assigned.FindSymbol("b")->name, "a");
  EXPECT_EQ(assigned.FindSymbol("c")->addr, 0x2004u);
  EXPECT_THAT(assigned.AliasesOf(*assigned.FindSymbol("a")), ElementsAre("b"));
}

TEST(ObjectImageTest, NamesAreCopiedWhenNothingKeepsThem) {
  // Names built at run time, gone (and their bytes overwritten) before the image is asked: the
  // image must have its own copy (ASan reports a read of the freed strings otherwise).
  auto names = std::make_unique<std::vector<std::string>>();
  for (const char* n : {"a_function_name_longer_than_sso", "alias_of_it_also_long_enough", "b"})
    names->push_back(n);
  ObjectImage image = Image(
      {{0x2000, 0x10, (*names)[0]}, {0x2000, 0x10, (*names)[1]}, {0x2010, 0x10, (*names)[2]}});
  for (std::string& n : *names) std::fill(n.begin(), n.end(), 'x');
  names.reset();
  ObjectImage moved = std::move(image);
  EXPECT_EQ(NameAt(moved, 0x2008), "a_function_name_longer_than_sso");
  EXPECT_EQ(NameAt(moved, 0x2010), "b");
  ASSERT_NE(moved.FindSymbol("alias_of_it_also_long_enough"), nullptr);
  EXPECT_EQ(moved.FindSymbol("alias_of_it_also_long_enough")->addr, 0x2000u);
}

TEST(ObjectImageTest, NamesStayInTheStorageGivenWithThem) {
  // The ELF reader's case: names view bytes the image keeps alive (its map of the file).
  auto bytes = std::make_shared<std::string>(std::string("first\0second", 12));
  std::weak_ptr<std::string> watch = bytes;
  const std::string_view first(bytes->data(), 5), second(bytes->data() + 6, 6);
  ObjectImage image("/usr/lib/libtest.so", true, TypicalSegments(),
                    {{0x2000, 0x10, first}, {0x2010, 0x10, second}}, "", bytes);
  bytes.reset();
  ASSERT_FALSE(watch.expired());  // kept by the image
  EXPECT_EQ(NameAt(image, 0x2000), "first");
  EXPECT_EQ(image.LookupSymbol(0x2010)->name.data(), watch.lock()->data() + 6);  // not copied
}

TEST(ObjectImageTest, SymbolAtTopOfAddressSpaceDoesNotWrap) {
  ObjectImage image = Image({{~uint64_t{0} - 4, 16, "top"}, {0x10, 4, "low"}});
  EXPECT_EQ(NameAt(image, ~uint64_t{0}), "top");
  EXPECT_EQ(NameAt(image, 0x12), "low");
  EXPECT_EQ(NameAt(image, 0x20), "(none)");
}

}  // namespace
}  // namespace cg_inject
