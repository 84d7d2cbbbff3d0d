#include "resolve/definition_names.h"

#include <gtest/gtest.h>

#include "sources/name_location.h"

namespace cg_inject {
namespace {

// A site as the injector builds it from a perf-map or jitdump name.
DefinitionSite Site(std::string_view object, std::string_view raw_name, NameLocation* storage) {
  *storage = ParseNameLocation(raw_name);
  return {object,           storage->file,   storage->function,
          storage->line_no, storage->column, storage->definition_tag};
}

TEST(DefinitionNamesTest, AnonymousV8FunctionsOfOneFileStayApart) {
  // The five anonymous functions of node:internal/validators in tests/data/node/basic/
  // perf-6390.map (real lines), one of them at baseline tier (^), plus a named one.
  const char* lines[] = {
      "JS:~ node:internal/validators:94:3",   "JS:~ node:internal/validators:115:3",
      "JS:^ node:internal/validators:161:40", "JS:~ node:internal/validators:217:41",
      "JS:~ node:internal/validators:241:3",  "JS:~isInt32 node:internal/validators:44:17",
  };
  NameLocation storage[6];
  DefinitionSite sites[6];
  DefinitionNames names;
  for (int i = 0; i < 6; ++i) {
    sites[i] = Site("perf-6390.map", lines[i], &storage[i]);
    names.Add(sites[i]);
  }
  names.Finish();
  EXPECT_EQ(names.NameOf(sites[0]), "(anonymous):94");
  EXPECT_EQ(names.NameOf(sites[1]), "(anonymous):115");
  EXPECT_EQ(names.NameOf(sites[2]), "(anonymous):161");
  EXPECT_EQ(names.NameOf(sites[3]), "(anonymous):217");
  EXPECT_EQ(names.NameOf(sites[4]), "(anonymous):241");
  EXPECT_EQ(names.NameOf(sites[5]), "isInt32");  // alone with its name: no position needed
  EXPECT_EQ(names.disambiguated_groups(), 1);
}

TEST(DefinitionNamesTest, OneLineTwoColumns) {
  // Two arrow functions on one line (V8 `JS:` names carry the column).
  NameLocation a, b;
  DefinitionNames names;
  DefinitionSite s1 = Site("perf-5.map", "JS:~ /app/main.js:12:20", &a);
  DefinitionSite s2 = Site("perf-5.map", "JS:~ /app/main.js:12:41", &b);
  names.Add(s1);
  names.Add(s2);
  names.Finish();
  EXPECT_EQ(names.NameOf(s1), "(anonymous):12:20");
  EXPECT_EQ(names.NameOf(s2), "(anonymous):12:41");
}

TEST(DefinitionNamesTest, TiersAndVersionsOfOneDefinitionShareItsName) {
  // V8 tiers (~ interpreted, ^ baseline, * optimized) and re-JITed code of one definition.
  NameLocation a, b, c;
  DefinitionNames names;
  DefinitionSite lazy = Site("jit-1.dump", "LazyCompile:~fib /app/fib.js:3", &a);
  DefinitionSite opt = Site("jit-1.dump", "LazyCompile:*fib /app/fib.js:3", &b);
  DefinitionSite base = Site("jit-1.dump", "Function:^fib /app/fib.js:3", &c);
  for (const auto& s : {lazy, opt, base}) names.Add(s);
  names.Finish();
  EXPECT_EQ(names.NameOf(lazy), "fib");
  EXPECT_EQ(names.NameOf(opt), "fib");
  EXPECT_EQ(names.NameOf(base), "fib");
  EXPECT_EQ(names.disambiguated_groups(), 0);
}

TEST(DefinitionNamesTest, V8FifteenTiersOfOneDefinitionShareItsName) {
  // Deno 2.9's map (tests/data/deno): OSR's `o` and context specialization's `'` are tiers too.
  const char* lines[] = {
      "JS:~sumTo file:///d/prog.js:5:15",  "JS:^sumTo file:///d/prog.js:5:15",
      "JS:o+sumTo file:///d/prog.js:5:15", "JS:o*sumTo file:///d/prog.js:5:15",
      "JS:*'sumTo file:///d/prog.js:5:15", "JS:+'fib file:///d/prog.js:2:13",
  };
  NameLocation storage[6];
  DefinitionSite sites[6];
  DefinitionNames names;
  for (int i = 0; i < 6; ++i) {
    sites[i] = Site("perf-7.map", lines[i], &storage[i]);
    names.Add(sites[i]);
  }
  names.Finish();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(names.NameOf(sites[i]), "sumTo") << lines[i];
  EXPECT_EQ(names.NameOf(sites[5]), "fib");
  EXPECT_EQ(names.disambiguated_groups(), 0);
}

TEST(DefinitionNamesTest, JscTiersShareOneNameAndHashesTellTwoFunctionsApart) {
  // Bun's jitdump (tests/data/bun): fib in three tiers is one function named fib; two functions
  // named run (two hashes) are run#A1b2C3 and run#D4e5F6; two anonymous ones likewise.
  const char* lines[] = {
      "JSC-Baseline: fib#EoE7sP", "JSC-DFG: fib#EoE7sP", "JSC-FTL: fib#EoE7sP",
      "JSC-Baseline: run#A1b2C3", "JSC-DFG: run#D4e5F6", "JSC-Baseline: #Zz9Yy8",
      "JSC-DFG: #Xx7Ww6",         "JSC-FTL: run#A1b2C3",
  };
  constexpr size_t kCount = std::size(lines);
  NameLocation storage[kCount];
  DefinitionSite sites[kCount];
  DefinitionNames names;
  for (size_t i = 0; i < kCount; ++i) {
    sites[i] = Site("jit-9-8.dump", lines[i], &storage[i]);
    names.Add(sites[i]);
  }
  names.Finish();
  EXPECT_EQ(names.NameOf(sites[0]), "fib");
  EXPECT_EQ(names.NameOf(sites[1]), "fib");
  EXPECT_EQ(names.NameOf(sites[2]), "fib");
  EXPECT_EQ(names.NameOf(sites[3]), "run#A1b2C3");
  EXPECT_EQ(names.NameOf(sites[4]), "run#D4e5F6");
  EXPECT_EQ(names.NameOf(sites[7]), "run#A1b2C3");
  EXPECT_EQ(names.NameOf(sites[5]), "(anonymous)#Zz9Yy8");
  EXPECT_EQ(names.NameOf(sites[6]), "(anonymous)#Xx7Ww6");
  EXPECT_EQ(names.disambiguated_groups(), 2);
}

TEST(DefinitionNamesTest, MoarVmNamelessFramesByLine) {
  // MoarVM names a nameless frame `(FILE:LINE)`; v6c.nqp has many.
  NameLocation a, b, c;
  DefinitionNames names;
  DefinitionSite s1 = Site("perf-9.map", "(gen/moar/BOOTSTRAP/v6c.nqp:7018)", &a);
  DefinitionSite s2 = Site("perf-9.map", "(gen/moar/BOOTSTRAP/v6c.nqp:7035)", &b);
  DefinitionSite named = Site("perf-9.map", "new(gen/moar/BOOTSTRAP/v6c.nqp:100)", &c);
  for (const auto& s : {s1, s2, named, s1}) names.Add(s);
  names.Finish();
  EXPECT_EQ(names.NameOf(s1), "(anonymous):7018");
  EXPECT_EQ(names.NameOf(s2), "(anonymous):7035");
  EXPECT_EQ(names.NameOf(named), "new");
}

TEST(DefinitionNamesTest, SameNameInOneFileTwoClasses) {
  // Two classes' `get` in one file (CPython qualifies, V8 does not).
  NameLocation a, b;
  DefinitionNames names;
  DefinitionSite s1 = Site("perf-2.map", "JS:*get /app/models.js:10:5", &a);
  DefinitionSite s2 = Site("perf-2.map", "JS:*get /app/models.js:80:5", &b);
  names.Add(s1);
  names.Add(s2);
  names.Finish();
  EXPECT_EQ(names.NameOf(s1), "get:10");
  EXPECT_EQ(names.NameOf(s2), "get:80");
}

TEST(DefinitionNamesTest, SameBaseNameInTwoDirectories) {
  // KCachegrind keys functions by the files' base names: /a/index.js and /b/index.js collide.
  NameLocation a, b, c;
  DefinitionNames names;
  DefinitionSite s1 = Site("perf-3.map", "JS:~ /a/index.js:1:1", &a);
  DefinitionSite s2 = Site("perf-3.map", "JS:~ /b/index.js:1:1", &b);
  DefinitionSite s3 = Site("perf-3.map", "JS:~ /b/index.js:5:1", &c);
  for (const auto& s : {s1, s2, s3}) names.Add(s);
  names.Finish();
  EXPECT_EQ(names.NameOf(s1), "(anonymous) (/a/index.js:1:1)");
  EXPECT_EQ(names.NameOf(s2), "(anonymous) (/b/index.js:1:1)");
  EXPECT_EQ(names.NameOf(s3), "(anonymous) (/b/index.js:5:1)");
}

TEST(DefinitionNamesTest, DifferentObjectsNeverCollide) {
  NameLocation a, b;
  DefinitionNames names;
  DefinitionSite s1 = Site("perf-4.map", "JS:~ /a/x.js:1:1", &a);
  DefinitionSite s2 = Site("jit-4.dump", "JS:~ /a/x.js:9:1", &b);
  names.Add(s1);
  names.Add(s2);
  names.Finish();
  EXPECT_EQ(names.NameOf(s1), "(anonymous)");
  EXPECT_EQ(names.NameOf(s2), "(anonymous)");
}

TEST(DefinitionNamesTest, BuildNamesAsAddAndFinishDo) {
  // Two passes (group hashes first, then only the shared groups' definitions) decide as the
  // one-pass Add + Finish: tiers of one definition, two anonymous functions of one file, two
  // classes' `get` on one line told apart by the column, a nameless version, lone names.
  const char* lines[] = {
      "JS:~ /app/a.js:94:3",
      "JS:* /app/a.js:94:3",
      "JS:~ /app/a.js:115:3",
      "JS:~get /app/b.js:7:10",
      "JS:~get /app/b.js:7:30",
      "JS:~lone /app/a.js:1:1",
      "",
      "JS:~other /app/c.js:5:2",
  };
  constexpr size_t kCount = std::size(lines);
  NameLocation storage[kCount];
  DefinitionSite sites[kCount];
  DefinitionNames one_pass;
  for (size_t i = 0; i < kCount; ++i) {
    sites[i] = Site("perf-1.map", lines[i], &storage[i]);
    if (lines[i][0] == '\0') sites[i].name = {};  // what SiteOf gives a nameless version
    if (!sites[i].name.empty()) one_pass.Add(sites[i]);
  }
  one_pass.Finish();
  DefinitionNames two_pass;
  int calls = 0;
  two_pass.Build(kCount, [&](size_t i) {
    ++calls;
    return sites[i];
  });
  EXPECT_EQ(calls, 2 * int(kCount));
  EXPECT_EQ(two_pass.disambiguated_groups(), 2);
  EXPECT_EQ(two_pass.disambiguated_groups(), one_pass.disambiguated_groups());
  for (size_t i = 0; i < kCount; ++i) {
    if (sites[i].name.empty()) continue;
    EXPECT_EQ(two_pass.NameOf(sites[i]), one_pass.NameOf(sites[i])) << lines[i];
  }
  EXPECT_EQ(two_pass.NameOf(sites[0]), "(anonymous):94");
  EXPECT_EQ(two_pass.NameOf(sites[1]), "(anonymous):94");
  EXPECT_EQ(two_pass.NameOf(sites[3]), "get:7:10");
  EXPECT_EQ(two_pass.NameOf(sites[5]), "lone");
}

TEST(DefinitionNamesTest, BuildWithDistinctNamesCollectsNothing) {
  DefinitionNames names;
  std::vector<std::string> texts;
  for (int i = 0; i < 1000; ++i) texts.push_back("f" + std::to_string(i));
  names.Build(texts.size(), [&](size_t i) {
    return DefinitionSite{"perf-1.map", "a.js", texts[i], uint32_t(i + 1), 0};
  });
  EXPECT_EQ(names.disambiguated_groups(), 0);
  EXPECT_EQ(names.NameOf({"perf-1.map", "a.js", "f3", 4, 0}), "f3");
}

}  // namespace
}  // namespace cg_inject
