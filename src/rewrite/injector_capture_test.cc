// The injector on the project's real captures (tests/data/x86_64, written by the end-to-end
// scripts): through the real Callgrind reader, jitdump reader and writer, checked against the
// captures' ahead-of-time twins (same code as ELF functions) and with callgrind_annotate.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "callgrind/callgrind_reader.h"
#include "callgrind/callgrind_writer.h"
#include "cg_inject/diagnostics.h"
#include "cg_inject/inject.h"
#include "cg_inject/io.h"
#include "cg_inject/symbols.h"
#include "resolve/jit_name.h"
#include "rewrite/test_profile.h"
#include "sources/symbol_sources.h"

namespace cg_inject {
namespace {

const std::string kRoot = CG_INJECT_SOURCE_ROOT "/tests/data/";

struct Capture {
  const char* arch;  // directory under tests/data
  CodeArch code_arch;
  const char* scenario;
  const char* file;
};

std::string Dir(const Capture& c) { return kRoot + c.arch + "/" + c.scenario + "/"; }

std::string FindDump(const std::string& dir) {
  std::string found;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.rfind("jit-", 0) == 0 && name.find(".dump") != std::string::npos) found = dir + name;
    }
    closedir(d);
  }
  return found;
}

void Read(const std::string& bytes, ProfileSink* sink) {
  std::unique_ptr<ByteSource> in = OpenMemoryInput(bytes, "profile");
  ReadCallgrind(*in, *sink);
}

/// Name (fn text without object/file) -> self cost, for functions named jit_* or c_*.
std::map<std::string, uint64_t> SelfByName(const testing::RecordingSink& sink) {
  std::map<std::string, uint64_t> out;
  for (const auto& [key, f] : sink.functions()) {
    std::string fn = key.substr(key.rfind('|') + 1);
    if (fn.rfind("jit_", 0) == 0 || fn.rfind("c_", 0) == 0)
      out[fn] += f.self.empty() ? 0 : f.self[0];
  }
  return out;
}

struct Result {
  testing::RecordingSink input, output, twin;
  std::string written;
  InjectStats stats;
};

void InjectCapture(const Capture& c, Result* r) {
  std::string dir = Dir(c);
  std::string file = c.file;
  std::string dump = FindDump(dir);
  ASSERT_FALSE(dump.empty()) << "no jitdump in " << dir;
  SymbolIndex index;
  Diagnostics diagnostics;
  LoadSymbolSourceBytes(ReadWholeFile(dump), dump, SourceKind::kJitdump, &index, &diagnostics);
  index.Finish();
  std::string input;
  {
    std::unique_ptr<ByteSource> in = OpenInput(dir + file);
    char buf[1 << 16];
    while (size_t n = in->Read(buf, sizeof buf)) input.append(buf, n);
  }
  Read(input, &r->input);
  StringSink bytes;
  {
    CallgrindWriter writer(&bytes);
    InjectOptions options;
    options.arch = c.code_arch;
    Injector injector(index, nullptr, options, &writer);
    Read(input, &injector);
    writer.Flush();
    r->stats = injector.stats();
  }
  r->written = bytes.data();
  Read(r->written, &r->output);
  std::string twin_path = dir + "twin." + file;
  std::unique_ptr<ByteSource> twin = OpenInput(twin_path);
  ReadCallgrind(*twin, r->twin);
}

class CaptureTest : public ::testing::TestWithParam<Capture> {};

TEST_P(CaptureTest, MatchesTwinAndKeepsTotals) {
  const Capture& c = GetParam();
  std::string scenario = std::string(c.arch) + "/" + c.scenario;
  std::string file = c.file;
  // The captures are committed: a missing one is a broken checkout, not a reason to skip.
  ASSERT_EQ(access((Dir(c) + file).c_str(), R_OK), 0)
      << "committed capture " << scenario << "/" << file << " is missing";
  Result r;
  InjectCapture(c, &r);
  EXPECT_TRUE(r.stats.invariant_violations.empty()) << r.stats.invariant_violations[0];
  EXPECT_EQ(r.output.totals(), r.input.totals());

  // Every function the twin has under a JIT name has the twin's self cost, exactly: the same
  // instructions ran. This includes the address reused by new code without a dump in between,
  // where one block holds both versions' code and the shared entry line is split.
  std::map<std::string, uint64_t> twin = SelfByName(r.twin);
  std::map<std::string, uint64_t> injected = SelfByName(r.output);
  // AArch64 exception: with fixed 4-byte instructions the shorter reused version's addresses
  // are also instruction starts of the longer one, so nothing in one block tells them apart
  // (counted as a reused address in the stats); with a dump in between (parts) they are exact.
  // There exactly this is asserted: the two versions may trade cost, their sum is the twin's.
  bool reuse_indistinct = c.code_arch == CodeArch::kAArch64 && std::string(c.scenario) != "parts";
  uint64_t twin_reuse = 0, injected_reuse = 0;
  for (const auto& [name, cost] : twin) {
    if (name.rfind("jit_", 0) != 0) continue;
    if (reuse_indistinct && name.rfind("jit_reuse_v", 0) == 0) {
      twin_reuse += cost;
      injected_reuse += injected[name];
      continue;
    }
    EXPECT_EQ(injected[name], cost) << name << " in " << scenario << "/" << file;
  }
  EXPECT_EQ(injected_reuse, twin_reuse) << "jit_reuse_v1 + jit_reuse_v2 in " << scenario;

  // No function whose address a source covers is left as 0x...
  for (const auto& [key, f] : r.output.functions()) {
    std::string ob = key.substr(0, key.find('|'));
    std::string fn = key.substr(key.rfind('|') + 1);
    JitName jit;
    if (IsUnknownObject(ob) && ParseJitFunctionName(fn, &jit)) {
      EXPECT_FALSE(jit.addr >= 0x5b000000 && jit.addr < 0x5b010000) << fn << " left unnamed";
    }
  }
}

#define CAPTURES(arch, code_arch)                                            \
  Capture{arch, code_arch, "instr", "callgrind.out.zst"},                    \
      Capture{arch, code_arch, "jumps", "callgrind.out.zst"},                \
      Capture{arch, code_arch, "skip", "callgrind.out.zst"},                 \
      Capture{arch, code_arch, "parts", "callgrind.out.1.zst"},              \
      Capture{arch, code_arch, "parts", "callgrind.out.zst"},                \
      Capture{arch, code_arch, "threads", "callgrind.out-01.zst"}, Capture { \
    arch, code_arch, "threads", "callgrind.out-02.zst"                       \
  }

INSTANTIATE_TEST_SUITE_P(X86_64, CaptureTest,
                         ::testing::Values(CAPTURES("x86_64", CodeArch::kX86_64)));
INSTANTIATE_TEST_SUITE_P(AArch64, CaptureTest,
                         ::testing::Values(CAPTURES("aarch64", CodeArch::kAArch64)));

// callgrind_annotate reads the written file and shows the JIT functions by file:name, with the
// tail-jumped function's own cost.
TEST(CaptureAnnotateTest, CallgrindAnnotateShowsNamesAndLines) {
  ASSERT_EQ(access("/usr/bin/callgrind_annotate", X_OK), 0)
      << "no /usr/bin/callgrind_annotate (scripts/setup-deps.sh installs valgrind)";
  Capture c{"x86_64", CodeArch::kX86_64, "instr", "callgrind.out.zst"};
  ASSERT_EQ(access((Dir(c) + c.file).c_str(), R_OK), 0) << "committed capture missing";
  Result r;
  InjectCapture(c, &r);
  char path[] = "/tmp/cg_inject_capture_test_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  { std::ofstream(path) << r.written; }
  std::string cmd = std::string(
                        "/usr/bin/callgrind_annotate --inclusive=yes --tree=caller "
                        "--threshold=100 ") +
                    path + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string text;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) text.append(buf, n);
  pclose(pipe);
  unlink(path);
  uint64_t tail_b = SelfByName(r.twin)["jit_tail_b"];
  ASSERT_GT(tail_b, 0u);
  // `*  file:function [object]` rows name the function itself in --tree=caller output.
  EXPECT_NE(text.find("*  tests/e2e/jit/workload.mini:jit_tail_b [jit-"), std::string::npos)
      << text.substr(0, 4000);
  EXPECT_NE(text.find("< tests/e2e/jit/workload.mini:jit_tail_a (1x)"), std::string::npos);
  EXPECT_EQ(text.find("???:0x000000005b"), std::string::npos);
}

}  // namespace
}  // namespace cg_inject
