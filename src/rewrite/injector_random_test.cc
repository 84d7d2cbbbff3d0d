// Randomized profiles (fixed seeds, so failures reproduce): whatever mix of JIT blocks, ordinary
// blocks, tail-jumped lines, recursion suffixes, reused and moved code the generator produces,
// the injector's own invariant checks must pass and the output must keep every cost.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "cg_inject/inject.h"
#include "cg_inject/symbols.h"
#include "rewrite/test_profile.h"

namespace cg_inject {
namespace {

struct Generated {
  std::string profile;
};

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string JitName(uint64_t addr, int rec) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(addr));
  std::string name = buf;
  if (rec > 1) name += "'" + std::to_string(rec);
  return name;
}

class RandomProfileTest : public ::testing::TestWithParam<int> {};

TEST_P(RandomProfileTest, InvariantsHold) {
  std::mt19937_64 rng(uint64_t(GetParam()) * 7919 + 1);
  auto pick = [&](uint64_t n) { return n ? rng() % n : 0; };
  bool instr = GetParam() % 4 != 0;
  int parts = 1 + int(pick(2));

  // Functions at 0x10000 + i * 0x100, some reused (a second version at the same start), one
  // moved (same function id at another address).
  SymbolIndex index;
  uint32_t source = index.AddSource({"/tmp/perf-1.map", "perf-map", "perf-1.map", 0});
  int functions = 3 + int(pick(6));
  std::vector<uint64_t> starts;
  for (int i = 0; i < functions; ++i) {
    CodeVersionSpec v;
    v.start = 0x10000 + uint64_t(i) * 0x100;
    v.size = 0x40 + pick(0xc0);
    const std::string name = "f" + std::to_string(i), new_name = name + "_new";
    v.function_name = name;
    v.source_file = pick(2) ? "f.js" : "";
    v.source_line = uint32_t(pick(50));
    v.source = source;
    v.function_id = uint32_t(i + 1);
    starts.push_back(v.start);
    CodeVersionSpec moved = v;
    index.Add(std::move(v));
    if (pick(4) == 0) {
      CodeVersionSpec reuse = moved;
      reuse.function_name = new_name;
      reuse.function_id = uint32_t(100 + i);
      index.Add(std::move(reuse));
    }
    if (pick(5) == 0) {
      moved.start = 0x90000 + uint64_t(i) * 0x100;
      starts.push_back(moved.start);
      index.Add(std::move(moved));
    }
  }
  index.Finish();

  std::string p;
  for (int part = 0; part < parts; ++part) {
    p += instr ? "positions: instr line\n" : "positions: line\n";
    p += "events: Ir Dr\n";
    int blocks = 4 + int(pick(8));
    for (int b = 0; b < blocks; ++b) {
      bool jit = pick(3) != 0;
      uint64_t entry = starts[pick(starts.size())] + (pick(4) == 0 ? 0x10 : 0);
      if (jit) {
        p += "ob=???\nfl=???\nfn=" + JitName(pick(6) == 0 ? 0x5000 : entry, pick(4) == 0 ? 2 : 1) +
             "\n";
      } else {
        p += "ob=/bin/prog\nfl=main.c\nfn=" + std::string(pick(2) ? "main" : "helper") + "\n";
      }
      int lines = 1 + int(pick(6));
      for (int l = 0; l < lines; ++l) {
        uint64_t addr =
            jit || pick(3) == 0 ? starts[pick(starts.size())] + pick(0x60) : 0x400 + pick(0x100);
        if (instr)
          p += Hex(addr) + " 0";
        else
          p += std::to_string(pick(20));
        p += " " + std::to_string(pick(100)) + " " + std::to_string(pick(10)) + "\n";
        if (pick(4) == 0) {
          uint64_t target = starts[pick(starts.size())] + (pick(3) == 0 ? 0x10 : 0);
          bool jit_target = pick(3) != 0;
          if (jit_target) {
            p += "cob=???\ncfi=???\ncfn=" + JitName(target, pick(5) == 0 ? 2 : 1) + "\n";
          } else {
            p += "cob=/bin/prog\ncfi=main.c\ncfn=helper\n";
            target = 0x500;
          }
          p += "calls=" + std::to_string(1 + pick(5)) + " " + (instr ? Hex(target) + " 0" : "0") +
               "\n";
          p += (instr ? Hex(addr) + " 0" : "0") + " " + std::to_string(pick(500)) + " " +
               std::to_string(pick(50)) + "\n";
        }
        if (instr && pick(5) == 0) {
          p += "jump=" + std::to_string(pick(4)) + " " + Hex(starts[pick(starts.size())]) + " 0\n";
          p += Hex(addr) + " 0\n";
        }
      }
    }
    p += "totals: 0 0\n";
  }

  testing::RecordingSink input, output;
  testing::FeedProfile(p, &input);
  InjectOptions options;
  options.force = true;  // report violations through the stats, so the test can print them
  Injector injector(index, nullptr, options, &output);
  testing::FeedProfile(p, &injector);
  InjectStats stats = injector.stats();
  EXPECT_TRUE(stats.invariant_violations.empty())
      << stats.invariant_violations[0] << "\n--- input\n"
      << p << "--- output\n"
      << output.text();
  EXPECT_EQ(output.totals(), input.totals());
  EXPECT_TRUE(output.IdsConsistent());
  EXPECT_EQ(output.parts_ended(), parts);
  if (getenv("CG_INJECT_RANDOM_DEBUG")) {
    std::string s;
    AppendStatsText(stats, &s);
    std::printf("%s", s.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomProfileTest, ::testing::Range(0, 300));

}  // namespace
}  // namespace cg_inject
