#include "rewrite/object_code.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cg_inject/inject.h"
#include "cg_inject/symbols.h"
#include "resolve/name_table.h"
#include "rewrite/rewrite_test_util.h"

namespace cg_inject {
namespace {

using testing::AddVersion;
using testing::FakeExtents;

class ObjectCodeTest : public ::testing::Test {
 protected:
  ObjectCodeTest() {
    uint32_t source = index_.AddSource({"/tmp/perf-1.map", "perf-map", "perf-1.map", 0});
    // JIT code, and a "builtin" that the map lists inside /usr/bin/node's own code.
    AddVersion(&index_, source, 0x40000000, 0x100, "LazyCompile:*f a.js:1");
    AddVersion(&index_, source, 0x1000100, 0x80, "Builtin:Add");
    index_.Finish();
    FakeExtents::Object node{0x1000000, 0x2000000, true, {{0x1000000, "main"}, {0x1000100, "Add"}}};
    extents_.objects["/usr/bin/node"] = node;
    extents_.objects["/lib/libc.so.6"] = FakeExtents::Object{0x7000, 0x9000, false, {}};
  }
  uint32_t Id(std::string_view text) { return names_.Intern(text).id; }
  FunctionKey Key(std::string_view object, std::string_view file, std::string_view function) {
    return {Id(object), Id(file), Id(function)};
  }

  SymbolIndex index_;
  FakeExtents extents_;
  NameTable names_;
};

TEST_F(ObjectCodeTest, AnIndexedAddressIsJitCodeUnlessAnObjectOwnsIt) {
  ObjectCode code(index_, &extents_, &names_);
  EXPECT_TRUE(code.IsJitAddress(Id("???"), 0x40000010));
  EXPECT_FALSE(code.IsJitAddress(Id("???"), 0x40000100));  // past the version
  EXPECT_FALSE(code.IsJitAddress(Id("???"), 0x10));        // outside the index's span
  // The block's own object contains it: its own code, whatever the map says.
  EXPECT_FALSE(code.IsJitAddress(Id("/usr/bin/node"), 0x1000110));
  // From an object that does not contain it, the builtin looks like JIT code until node is known.
  EXPECT_TRUE(code.IsJitAddress(Id("/lib/libc.so.6"), 0x1000110));
  EXPECT_FALSE(code.IsObjectCode(0x1000110));
  code.NoteObject(Id("/usr/bin/node"));
  EXPECT_TRUE(code.IsObjectCode(0x1000110));
  EXPECT_FALSE(code.IsJitAddress(Id("/lib/libc.so.6"), 0x1000110));
  EXPECT_FALSE(code.IsJitAddress(Id("???"), 0x1000110));
  EXPECT_TRUE(code.IsJitAddress(Id("???"), 0x40000010));  // JIT code stays JIT code
}

TEST_F(ObjectCodeTest, MayBeJitAddressIsIsJitAddressWithoutTheIndexLookup) {
  ObjectCode code(index_, &extents_, &names_);
  // Covered addresses: the same answers as IsJitAddress, before and after node's code is known.
  for (int known = 0; known < 2; ++known) {
    if (known) code.NoteObject(Id("/usr/bin/node"));
    for (uint64_t addr : {0x40000010ull, 0x1000110ull}) {
      for (std::string_view object : {"???", "/usr/bin/node", "/lib/libc.so.6"}) {
        SCOPED_TRACE(std::string(object) + " " + std::to_string(addr));
        EXPECT_EQ(code.MayBeJitAddress(Id(object), addr), code.IsJitAddress(Id(object), addr));
      }
    }
  }
  // Between the versions, inside the index's span: no version there, which only the index says.
  EXPECT_FALSE(code.IsJitAddress(Id("???"), 0x30000000));
  EXPECT_TRUE(code.MayBeJitAddress(Id("???"), 0x30000000));
  // Outside the span, or in the block's own object: no, without the index.
  EXPECT_FALSE(code.MayBeJitAddress(Id("???"), 0x10));
  EXPECT_FALSE(code.MayBeJitAddress(Id("/usr/bin/node"), 0x1000180));
}

TEST_F(ObjectCodeTest, ObjectsWithoutAbsoluteAddressesOwnNoIndexedCode) {
  ObjectCode code(index_, &extents_, &names_);
  code.NoteObject(Id("/lib/libc.so.6"));
  code.NoteCost(Key("/lib/libc.so.6", "libc.c", "memcpy"), 0x1000110);
  EXPECT_FALSE(code.IsObjectCode(0x1000110));
  EXPECT_EQ(code.SymbolOwner(0x1000110), nullptr);
}

TEST_F(ObjectCodeTest, ACostLineInIndexedCodeMakesItsFunctionTheOwner) {
  ObjectCode code(index_, &extents_, &names_);
  FunctionKey builtins = Key("/usr/bin/node", "builtins.cc", "Builtins_Add");
  code.NoteObject(builtins.object);
  code.NoteCost(builtins, 0x1000104);
  const FunctionKey* owner = nullptr;
  ASSERT_TRUE(code.IsObjectCode(0x1000170, &owner));  // anywhere in that version
  ASSERT_NE(owner, nullptr);
  EXPECT_EQ(*owner, builtins);
  // Inside node but in no version with a cost line: object code, no owner.
  ASSERT_TRUE(code.IsObjectCode(0x1000010, &owner));
  EXPECT_EQ(owner, nullptr);
}

TEST_F(ObjectCodeTest, TheSymbolOwnerTakesTheFileOfItsFunctionsBlock) {
  ObjectCode code(index_, &extents_, &names_);
  code.NoteObject(Id("/usr/bin/node"));
  EXPECT_EQ(code.SymbolOwner(0x40000010), nullptr);  // no object contains it
  const FunctionKey* main_owner = code.SymbolOwner(0x1000010);
  ASSERT_NE(main_owner, nullptr);  // a symbol whose function had no block: file ???
  EXPECT_EQ(*main_owner, Key("/usr/bin/node", "???", "main"));

  code.NoteFunction(Key("/usr/bin/node", "builtins.cc", "Add"));
  code.NoteFunction(Key("/usr/bin/node", "other.cc", "Add"));  // the first block's file wins
  code.NoteFunction(Key("/lib/libc.so.6", "libc.c", "Add"));   // another object: not its symbol
  const FunctionKey* add_owner = code.SymbolOwner(0x1000120);
  ASSERT_NE(add_owner, nullptr);
  EXPECT_EQ(*add_owner, Key("/usr/bin/node", "builtins.cc", "Add"));
  EXPECT_EQ(code.SymbolOwner(0x1000130), add_owner);  // one key per symbol, stable
  EXPECT_EQ(code.SymbolOwner(0x1000010), main_owner);
}

TEST_F(ObjectCodeTest, WithoutExtentsOnlyTheIndexDecides) {
  ObjectCode code(index_, nullptr, &names_);
  code.NoteObject(Id("/usr/bin/node"));
  EXPECT_FALSE(code.IsObjectCode(0x1000110));
  EXPECT_TRUE(code.IsJitAddress(Id("/usr/bin/node"), 0x1000110));
  EXPECT_EQ(code.SymbolOwner(0x1000110), nullptr);
}

// Issue 23 item 7: `???` addresses in an object whose load address the profile implies.
TEST_F(ObjectCodeTest, StubsAreFoundInObjectsWithAKnownLoadBias) {
  FakeExtents::Object prog{0x1000, 0x3000, false, {{0x1100, "main"}}};
  prog.load_bias = 0x108000;
  prog.plt = {{0x1070, "free@plt"}};
  extents_.objects["/usr/bin/prog"] = prog;
  extents_.objects["/lib/libc.so.6"].plt = {{0x7070, "memcpy@plt"}};  // no bias: not located
  ObjectCode code(index_, &extents_, &names_);
  ObjectCode::Stub stub;
  EXPECT_FALSE(code.StubAt(0x109070, &stub));  // the object is not known yet
  code.NoteObject(Id("/lib/libc.so.6"));
  code.NoteObject(Id("/usr/bin/prog"));
  ASSERT_TRUE(code.StubAt(0x109070, &stub));
  EXPECT_EQ(stub.object, Id("/usr/bin/prog"));
  EXPECT_EQ(names_.Text(stub.name), "free@plt");
  EXPECT_EQ(stub.elf_addr, 0x1070u);
  ASSERT_TRUE(code.StubAt(0x109104, &stub));  // the function symbol otherwise
  EXPECT_EQ(names_.Text(stub.name), "main");
  EXPECT_FALSE(code.StubAt(0x1070));    // the ELF address itself is not where it ran
  EXPECT_FALSE(code.StubAt(0x10b000));  // past the object
  EXPECT_FALSE(code.StubAt(0x7070));    // the library's slot: its base is unknown
}

// The report's yes or no (issue 35): naming code outside the PLT reads the object's symbol
// tables (libjvm.so's, on the Java capture), which whether it is a stub never needs.
TEST_F(ObjectCodeTest, AStubsYesOrNoAsksForNoName) {
  struct CountingExtents : FakeExtents {
    mutable int names_asked = 0;
    std::optional<std::string> CodeNameAt(std::string_view object, uint64_t addr) const override {
      ++names_asked;
      return FakeExtents::CodeNameAt(object, addr);
    }
    bool IsCodeAt(std::string_view object, uint64_t addr) const override {
      auto it = objects.find(object);
      return it != objects.end() && addr >= it->second.lo && addr < it->second.hi;
    }
  };
  CountingExtents extents;
  FakeExtents::Object prog{0x1000, 0x3000, false, {{0x1100, "main"}}};
  prog.load_bias = 0x108000;
  prog.plt = {{0x1070, "free@plt"}};
  extents.objects["/usr/bin/prog"] = prog;
  ObjectCode code(index_, &extents, &names_);
  code.NoteObject(Id("/usr/bin/prog"));
  EXPECT_TRUE(code.StubAt(0x109104));   // main's code
  EXPECT_TRUE(code.StubAt(0x109070));   // free@plt
  EXPECT_FALSE(code.StubAt(0x10b000));  // past the object
  EXPECT_EQ(extents.names_asked, 0);
  // Naming still names, and its kept answer serves the next yes or no.
  ObjectCode::Stub stub;
  ASSERT_TRUE(code.StubAt(0x109104, &stub));
  EXPECT_EQ(names_.Text(stub.name), "main");
  EXPECT_EQ(extents.names_asked, 1);
  EXPECT_TRUE(code.StubAt(0x109104));
  EXPECT_EQ(extents.names_asked, 1);
}

TEST_F(ObjectCodeTest, NamingAnswersStayWhatTheyWereFirst) {
  FakeExtents::Object prog{0x1000, 0x3000, false, {}};
  prog.load_bias = 0x108000;
  prog.plt = {{0x1070, "free@plt"}};
  extents_.objects["/usr/bin/prog"] = prog;
  ObjectCode code(index_, &extents_, &names_);
  ObjectCode::Stub stub;
  // Asked before the object is seen: not a stub for naming, for the whole run, so a call
  // written under the address name and the block later get one name.
  EXPECT_FALSE(code.NamedStubAt(0x109070, &stub));
  code.NoteObject(Id("/usr/bin/prog"));
  EXPECT_FALSE(code.NamedStubAt(0x109070, &stub));
  EXPECT_TRUE(code.StubAt(0x109070));  // the report's answer follows what is known now
  EXPECT_TRUE(code.NamedStubAt(0x109078 - 4, &stub));
  EXPECT_EQ(names_.Text(stub.name), "free@plt");
}

// FakeExtents that gives each known object's extent at once (as the ELF catalog does) and counts
// what it is asked.
class CountingExtents : public FakeExtents {
 public:
  mutable int contains_asked = 0;
  mutable std::map<std::string, int, std::less<>> extent_asked;
  std::optional<bool> Contains(std::string_view object, uint64_t addr) const override {
    ++contains_asked;
    return FakeExtents::Contains(object, addr);
  }
  Extent ExtentOf(std::string_view object) const override {
    ++extent_asked[std::string(object)];
    auto it = objects.find(object);
    if (it == objects.end()) return {Extent::kUnknown};
    return {Extent::kRange, it->second.lo, it->second.hi};
  }
};

// Issue 24: an object's extent is asked once, where its first address would have been, and
// then answers every cost line without Contains.
TEST_F(ObjectCodeTest, AnObjectsExtentIsAskedOnceAndOnlyWhenNeeded) {
  CountingExtents extents;
  extents.objects = extents_.objects;
  ObjectCode code(index_, &extents, &names_);
  // Outside the index's span nothing is asked (for the catalog: no file opened, no warning).
  EXPECT_FALSE(code.IsJitAddress(Id("/lib/libc.so.6"), 0x10));
  EXPECT_EQ(extents.extent_asked.count("/lib/libc.so.6"), 0u);
  for (int round = 0; round < 3; ++round) {
    EXPECT_TRUE(code.IsJitAddress(Id("/lib/libc.so.6"), 0x1000110));
    EXPECT_FALSE(code.IsJitAddress(Id("/usr/bin/node"), 0x1000110));  // its own, at its edges:
    EXPECT_FALSE(code.IsJitAddress(Id("/usr/bin/node"), 0x1000000));
    EXPECT_TRUE(code.IsJitAddress(Id("/usr/bin/node"), 0x40000010));  // past its end
    EXPECT_TRUE(code.IsJitAddress(Id("???"), 0x1000110));
    EXPECT_FALSE(code.IsJitAddress(Id("???"), 0x1000180));  // past the version
  }
  code.NoteObject(Id("/usr/bin/node"));  // absolute: its extent is known already
  EXPECT_FALSE(code.IsJitAddress(Id("/lib/libc.so.6"), 0x1000110));
  EXPECT_TRUE(code.IsObjectCode(0x1ffffff));
  EXPECT_FALSE(code.IsObjectCode(0x2000000));
  EXPECT_TRUE(code.IsJitAddress(Id("???"), 0x40000010));
  ASSERT_NE(code.SymbolOwner(0x1000120), nullptr);
  EXPECT_EQ(code.SymbolOwner(0x40000010), nullptr);

  EXPECT_EQ(extents.extent_asked["/usr/bin/node"], 1);
  EXPECT_EQ(extents.extent_asked["/lib/libc.so.6"], 1);
  EXPECT_EQ(extents.extent_asked.count("???"), 0u);  // never an object
  EXPECT_EQ(extents.contains_asked, 0);
}

// The same answers from an ObjectExtents that has only Contains (the default ExtentOf): it is
// asked per address, as before.
TEST_F(ObjectCodeTest, ExtentsWithoutARangeAreAskedPerAddress) {
  CountingExtents by_range;
  by_range.objects = extents_.objects;
  struct PerAddress : FakeExtents {
    mutable int contains_asked = 0;
    std::optional<bool> Contains(std::string_view object, uint64_t addr) const override {
      ++contains_asked;
      return FakeExtents::Contains(object, addr);
    }
  } per_address;
  per_address.objects = extents_.objects;
  ObjectCode a(index_, &by_range, &names_), b(index_, &per_address, &names_);
  for (ObjectCode* code : {&a, &b}) code->NoteObject(Id("/usr/bin/node"));
  for (uint64_t addr : {0x0ffffffu, 0x1000000u, 0x10000ffu, 0x1000100u, 0x100017fu, 0x1000180u,
                        0x1ffffffu, 0x2000000u, 0x40000000u, 0x400000ffu, 0x40000100u}) {
    for (const char* object : {"/lib/libc.so.6", "/usr/bin/node", "???", "/bin/other"}) {
      EXPECT_EQ(a.IsJitAddress(Id(object), addr), b.IsJitAddress(Id(object), addr))
          << object << " " << std::hex << addr;
    }
    EXPECT_EQ(a.IsObjectCode(addr), b.IsObjectCode(addr)) << std::hex << addr;
  }
  EXPECT_GT(per_address.contains_asked, 0);
  EXPECT_EQ(by_range.contains_asked, 0);
}

// Issue 24: whether any version covers an address is answered from the versions' merged ranges
// and the last range or gap found; it must agree with the index everywhere, whatever order the
// addresses come in (a miss, then an address in a version past it; edges; nested, touching,
// overlapping and empty versions).
TEST(ObjectCodeCoverTest, TheLastRangeOrGapAnswersAsTheIndex) {
  SymbolIndex index;
  uint32_t source = index.AddSource({"/tmp/perf-1.map", "perf-map", "perf-1.map", 0});
  const std::vector<std::pair<uint64_t, uint64_t>> versions = {
      {0x1000, 0x100}, {0x1100, 0x80},                   // touching
      {0x2000, 0x100}, {0x2080, 0x180},                  // overlapping
      {0x2300, 0},                                       // empty: covers nothing
      {0x2400, 0x10},  {0x3000, 0x100}, {0x3010, 0x10},  // nested
      {0x5000, 1}};
  for (auto [start, size] : versions) AddVersion(&index, source, start, size, "f");
  index.Finish();
  NameTable names;
  const uint32_t unknown = names.Intern("???").id;

  std::vector<uint64_t> addrs = {0x0, 0xfff, 0x5001, 0x5002, UINT64_MAX};
  for (auto [start, size] : versions) {
    for (uint64_t a :
         {start - 1, start, start + 1, start + size - 1, start + size, start + size + 1})
      addrs.push_back(a);
  }
  std::vector<uint64_t> ascending = addrs, descending = addrs;
  std::sort(ascending.begin(), ascending.end());
  std::sort(descending.rbegin(), descending.rend());
  std::vector<uint64_t> shuffled = addrs;
  std::mt19937 random(24);
  std::shuffle(shuffled.begin(), shuffled.end(), random);
  // A miss in the gap before a version, then that version's first address.
  std::vector<uint64_t> miss_then_hit = {0x1f00, 0x2000, 0x1fff, 0x2000, 0x21ff, 0x2200,
                                         0x23ff, 0x2400, 0x240f, 0x2410, 0x4fff, 0x5000};

  int covered = 0;
  for (const std::vector<uint64_t>* order :
       {&ascending, &descending, &shuffled, &miss_then_hit, &shuffled, &ascending}) {
    ObjectCode code(index, nullptr, &names);
    for (uint64_t addr : *order) {
      const bool expected = addr >= 0x1000 && addr < 0x5001 && index.Lookup(addr) != nullptr;
      EXPECT_EQ(code.IsJitAddress(unknown, addr), expected) << std::hex << addr;
      covered += expected;
    }
  }
  EXPECT_GT(covered, 0);
}

// Node's code at [0x1000000, 0x2000000), seen, whose builtins the index lists: (start, size).
struct NodeBuiltins {
  explicit NodeBuiltins(std::vector<std::pair<uint64_t, uint64_t>> builtins) {
    uint32_t source = index.AddSource({"/tmp/perf-1.map", "perf-map", "perf-1.map", 0});
    for (auto [start, size] : builtins)
      AddVersion(&index, source, start, size, "Builtin:" + std::to_string(start));
    index.Finish();
    code.emplace(index, &extents, &names);
    code->NoteObject(names.Intern("/usr/bin/node").id);
  }
  FunctionKey Key(std::string_view function) {
    return FunctionKey{names.Intern("/usr/bin/node").id, names.Intern("b.cc").id,
                       names.Intern(function).id};
  }
  SymbolIndex index;
  NameTable names;
  FakeExtents extents = FakeExtents::Node(0x1000000, 0x2000000);
  std::optional<ObjectCode> code;
};

// The owner of object code is the latest version's at the address: a version no other overlaps
// answers for its whole range, and only there.
TEST(ObjectCodeCoverTest, OwnersAreTheLatestVersionAtTheAddress) {
  // A (lone); D touches A, overlaps none; B; C over B's end, loaded later.
  NodeBuiltins node({{0x1000100, 0x80}, {0x1000180, 0x10}, {0x1000200, 0x80}, {0x1000240, 0x80}});
  ObjectCode& code = *node.code;
  code.NoteCost(node.Key("fa"), 0x1000104);
  code.NoteCost(node.Key("fd"), 0x1000180);  // just past A
  code.NoteCost(node.Key("fc"), 0x1000250);
  code.NoteCost(node.Key("fb"), 0x100023f);  // just before C
  code.NoteCost(node.Key("fx"), 0x1000260);  // C has an owner already
  const std::vector<std::pair<uint64_t, const char*>> expected = {
      {0x1000100, "fa"}, {0x100017f, "fa"}, {0x1000180, "fd"}, {0x100018f, "fd"},
      {0x1000190, ""},   {0x1000200, "fb"}, {0x100023f, "fb"}, {0x1000240, "fc"},
      {0x100027f, "fc"}, {0x10002bf, "fc"}, {0x10002c0, ""},   {0x10000ff, ""}};
  for (auto [addr, function] : expected) {
    const FunctionKey* owner = nullptr;
    EXPECT_TRUE(code.IsObjectCode(addr, &owner)) << std::hex << addr;
    if (*function == '\0') {
      EXPECT_EQ(owner, nullptr) << std::hex << addr;
    } else {
      ASSERT_NE(owner, nullptr) << std::hex << addr;
      EXPECT_EQ(*owner, node.Key(function)) << std::hex << addr;
    }
  }
}

// A version that gets its owner after IsObjectCode answered for it (from the gap it lay in, kept
// for the next question) has that owner from then on.
TEST(ObjectCodeCoverTest, AnOwnerNotedAfterAQuestionIsTheNextAnswer) {
  NodeBuiltins node({{0x1000100, 0x80}, {0x1000400, 0x80}});
  ObjectCode& code = *node.code;
  code.NoteCost(node.Key("fa"), 0x1000104);
  const FunctionKey* owner = nullptr;
  EXPECT_TRUE(code.IsObjectCode(0x1000410, &owner));  // node's code, in no owned version yet
  EXPECT_EQ(owner, nullptr);
  code.NoteCost(node.Key("fb"), 0x1000404);
  ASSERT_TRUE(code.IsObjectCode(0x1000410, &owner));
  ASSERT_NE(owner, nullptr);
  EXPECT_EQ(*owner, node.Key("fb"));
}

// An owned version whose range spans two owned ones (loaded before them, so they are the latest
// at their own addresses) joins their ranges: its code past the second is still found owned.
TEST(ObjectCodeCoverTest, AVersionOverTwoOwnedOnesIsOwnedPastThem) {
  NodeBuiltins node({{0x1000100, 0x100}, {0x1000110, 0x10}, {0x1000140, 0x10}});
  ObjectCode& code = *node.code;
  code.NoteCost(node.Key("fa"), 0x1000114);
  code.NoteCost(node.Key("fb"), 0x1000144);
  code.NoteCost(node.Key("fc"), 0x1000180);
  // Past the second first: the range found last answers for the addresses after it.
  const std::vector<std::pair<uint64_t, const char*>> expected = {
      {0x1000160, "fc"}, {0x10001ff, "fc"}, {0x1000144, "fb"},
      {0x1000130, "fc"}, {0x1000114, "fa"}, {0x1000100, "fc"}};
  for (auto [addr, function] : expected) {
    const FunctionKey* owner = nullptr;
    ASSERT_TRUE(code.IsObjectCode(addr, &owner));
    ASSERT_NE(owner, nullptr) << std::hex << addr;
    EXPECT_EQ(*owner, node.Key(function)) << std::hex << addr;
  }
}

// Owned versions noted in any order, touching, overlapping and nested ones among them: each
// address of an owned version (the latest at the address) answers with its owner, every other
// with none, after every note.
TEST(ObjectCodeCoverTest, OwnersNotedInAnyOrderAnswerEverywhere) {
  std::mt19937 random(35);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::pair<uint64_t, uint64_t>> builtins;
    uint64_t at = 0x1000100;
    for (int i = 0; i < 30; ++i) {
      const uint64_t size = 0x10 + random() % 0x40;
      builtins.push_back({at, size});
      // Now and then one over several earlier ones (two ranges noted apart become one).
      if (random() % 5 == 0 && at >= 0x1000100 + 0x80) builtins.push_back({at - 0x80, 0x100});
      // Next: touching, overlapping, nested or apart.
      switch (random() % 4) {
        case 0:
          at += size;
          break;
        case 1:
          at += size / 2;
          break;
        case 2:
          at += 1;
          break;
        default:
          at += size + 0x20;
          break;
      }
    }
    NodeBuiltins node(builtins);
    ObjectCode& code = *node.code;
    std::map<const CodeVersion*, std::string> owners;
    std::vector<size_t> order(builtins.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), random);
    for (size_t i : order) {
      const uint64_t addr = builtins[i].first + random() % builtins[i].second;
      const std::string function = "f" + std::to_string(i);
      code.NoteCost(node.Key(function), addr);
      owners.try_emplace(node.index.Lookup(addr), function);
      for (uint64_t a = 0x1000100; a < at + 0x80; a += 3) {
        const FunctionKey* owner = nullptr;
        ASSERT_TRUE(code.IsObjectCode(a, &owner));  // node's code, owned or not
        auto it = owners.find(node.index.Lookup(a));
        if (it == owners.end()) {
          ASSERT_EQ(owner, nullptr) << std::hex << a;
        } else {
          ASSERT_NE(owner, nullptr) << std::hex << a;
          ASSERT_EQ(*owner, node.Key(it->second)) << std::hex << a;
        }
      }
    }
  }
}

}  // namespace
}  // namespace cg_inject
