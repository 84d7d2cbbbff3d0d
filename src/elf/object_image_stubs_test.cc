// ReadObjectStubs against objdump: every `NAME@plt` label objdump prints in .plt, .plt.got and
// .plt.sec must be a slot here, at the same address, and no other. The objects are small C
// programs compiled by the test (PIE and not, lazy and immediate binding, IBT's .plt.sec, AArch64
// when the cross compiler is installed) and the runtimes' executables that issue 23 met
// (mono-sgen, beam.smp, node, php), where installed.
#include "elf/object_image_stubs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "elf/elf_test_util.h"
#include "util/test_shell.h"

namespace cg_inject {
namespace {

namespace fs = std::filesystem;

// free's address taken through the GOT and free called: with immediate binding its calls go
// through .plt.got (the mono-sgen and beam.smp case); malloc and strcmp only called.
constexpr char kProgram[] = R"(#include <stdlib.h>
#include <string.h>
void (*volatile release)(void*);
int main(int argc, char** argv) {
  release = free;
  char* p = malloc(16);
  strcpy(p, argv[0]);
  int n = strcmp(p, "x");
  free(p);
  release(malloc(1));
  return n;
}
)";

bool HaveTool(const std::string& tool) {
  int status = 0;
  ShellOutput("command -v " + tool + " >/dev/null 2>&1", &status);
  return status == 0;
}

class ScratchDir {
 public:
  ScratchDir() {
    char pattern[] = "/tmp/cg-inject-stubs-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Compiles kProgram with `cc` and `flags` into DIR/NAME; "" when the compiler fails.
std::string Compile(const ScratchDir& dir, const std::string& cc, const std::string& flags,
                    const std::string& name) {
  const std::string source = dir.path() + "/prog.c";
  std::ofstream(source) << kProgram;
  const std::string out = dir.path() + "/" + name;
  int status = 0;
  std::string log =
      ShellOutput(cc + " -O1 " + flags + " " + source + " -o " + out + " 2>&1", &status);
  EXPECT_EQ(status, 0) << cc << " " << flags << ": " << log;
  return status == 0 ? out : "";
}

// address -> NAME@plt, as objdump labels the PLT sections of `path`.
std::map<uint64_t, std::string> ObjdumpPltLabels(const std::string& objdump,
                                                 const std::string& path) {
  std::string text =
      ShellOutput(objdump + " -d -j .plt -j .plt.got -j .plt.sec " + path + " 2>/dev/null");
  std::map<uint64_t, std::string> labels;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    // "0000000000001070 <free@plt>:"
    size_t open = line.find(" <");
    if (open == 0 || open == std::string::npos || !line.ends_with("@plt>:")) continue;
    if (line.find_first_not_of("0123456789abcdef") != open) continue;
    std::string name = line.substr(open + 2, line.size() - open - 4);
    // IRELATIVE slots have no symbol: objdump writes `*ABS*+0x...@plt`, and so do we not.
    if (name.starts_with("*ABS*")) continue;
    labels[std::stoull(line.substr(0, open), nullptr, 16)] = name;
  }
  return labels;
}

std::map<uint64_t, std::string> OurSlots(const ObjectStubs& stubs) {
  std::map<uint64_t, std::string> slots;
  for (const PltSlot& s : stubs.plt) slots[s.addr] = s.Name();
  return slots;
}

void ExpectObjdumpsNames(const std::string& objdump, const std::string& path) {
  SCOPED_TRACE(path);
  ObjectStubs stubs = ReadObjectStubsFile(path);
  std::map<uint64_t, std::string> labels = ObjdumpPltLabels(objdump, path);
  ASSERT_FALSE(labels.empty()) << "objdump names no PLT slot";
  EXPECT_EQ(OurSlots(stubs), labels);
  for (const auto& [addr, name] : labels) {
    const PltSlot* slot = stubs.PltSlotAt(addr);
    ASSERT_NE(slot, nullptr) << name;
    EXPECT_EQ(slot->Name(), name);
    EXPECT_EQ(stubs.PltSlotAt(addr + slot->size - 1), slot) << name;  // its last byte too
    EXPECT_TRUE(stubs.IsCode(addr)) << name;
  }
}

TEST(ObjectStubsTest, PieWithImmediateBindingHasFreeInPltGot) {
  if (!HaveTool("gcc") || !HaveTool("objdump")) GTEST_SKIP() << "gcc or objdump not installed";
  ScratchDir dir;
  std::string exe = Compile(dir, "gcc", "-fpie -pie -Wl,-z,now", "pie");
  ASSERT_FALSE(exe.empty());
  ExpectObjdumpsNames("objdump", exe);
  ObjectStubs stubs = ReadObjectStubsFile(exe);
  EXPECT_TRUE(stubs.pie_executable);
  EXPECT_FALSE(stubs.fixed_addresses);
  // The case of issue 23 item 7: free's slot is in .plt.got.
  std::string sections = ShellOutput("objdump -d -j .plt.got " + exe);
  EXPECT_THAT(sections, testing::HasSubstr("<free@plt>:"));
  EXPECT_THAT(OurSlots(stubs), testing::Contains(testing::Pair(testing::_, "free@plt")));
  EXPECT_FALSE(stubs.IsCode(0));  // the first PT_LOAD of a PIE: headers, not executable
}

TEST(ObjectStubsTest, NonPieWithLazyBinding) {
  if (!HaveTool("gcc") || !HaveTool("objdump")) GTEST_SKIP() << "gcc or objdump not installed";
  ScratchDir dir;
  std::string exe = Compile(dir, "gcc", "-fno-pie -no-pie -Wl,-z,lazy", "exec");
  ASSERT_FALSE(exe.empty());
  ExpectObjdumpsNames("objdump", exe);
  ObjectStubs stubs = ReadObjectStubsFile(exe);
  EXPECT_FALSE(stubs.pie_executable);
  EXPECT_TRUE(stubs.fixed_addresses);
}

TEST(ObjectStubsTest, IbtPltSec) {
  if (!HaveTool("gcc") || !HaveTool("objdump")) GTEST_SKIP() << "gcc or objdump not installed";
  ScratchDir dir;
  std::string exe = Compile(dir, "gcc", "-fpie -pie -fcf-protection -Wl,-z,ibtplt", "ibt");
  ASSERT_FALSE(exe.empty());
  EXPECT_THAT(ShellOutput("objdump -h " + exe), testing::HasSubstr(".plt.sec"));
  ExpectObjdumpsNames("objdump", exe);
}

TEST(ObjectStubsTest, AArch64) {
  if (!HaveTool("aarch64-linux-gnu-gcc") || !HaveTool("aarch64-linux-gnu-objdump"))
    GTEST_SKIP() << "no AArch64 cross toolchain (gcc-aarch64-linux-gnu)";
  ScratchDir dir;
  for (const char* flags : {"-fpie -pie -Wl,-z,now", "-fno-pie -no-pie -Wl,-z,lazy"}) {
    std::string exe = Compile(dir, "aarch64-linux-gnu-gcc", flags, "arm64");
    ASSERT_FALSE(exe.empty());
    ExpectObjdumpsNames("aarch64-linux-gnu-objdump", exe);
  }
}

TEST(ObjectStubsTest, RuntimesExecutables) {
  if (!HaveTool("objdump")) GTEST_SKIP() << "objdump not installed";
  int checked = 0;
  for (const char* path : {"/usr/bin/mono-sgen", "/usr/lib/erlang/erts-13.1.5/bin/beam.smp",
                           "/usr/bin/node", "/usr/bin/php8.2"}) {
    if (!fs::exists(path)) continue;
    std::string real = fs::canonical(path);
    ExpectObjdumpsNames("objdump", real);
    ObjectStubs stubs = ReadObjectStubsFile(real);
    // node is an ET_EXEC; the others PIE executables (Debian builds them so).
    EXPECT_NE(stubs.fixed_addresses, stubs.pie_executable) << real;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no runtime installed";
}

TEST(ObjectStubsTest, SharedLibraryIsNoPieExecutable) {
  // libc.so.6 has a PT_INTERP (it runs as a program) but no DF_1_PIE. Its slots are read all the
  // same, as objdump names them: a stub of it in `???` locates it (SlotBias).
  const char* libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  if (!fs::exists(libc)) GTEST_SKIP() << "no " << libc;
  ObjectStubs stubs = ReadObjectStubsFile(libc);
  EXPECT_FALSE(stubs.pie_executable);
  EXPECT_FALSE(stubs.fixed_addresses);
  EXPECT_FALSE(stubs.code.empty());
  if (HaveTool("objdump")) ExpectObjdumpsNames("objdump", libc);
}

// A shared library the test builds: every named slot, placed at a page-aligned base, gives that
// base back for its own target's name, and for no other name or page offset.
TEST(ObjectStubsTest, SlotBiasOfASharedLibrary) {
  if (!HaveTool("gcc") || !HaveTool("objdump")) GTEST_SKIP() << "gcc or objdump not installed";
  ScratchDir dir;
  for (const char* flags :
       {"-fpic -shared", "-fpic -shared -Wl,-z,now", "-fpic -shared -fcf-protection"}) {
    SCOPED_TRACE(flags);
    std::string lib = Compile(dir, "gcc", flags, "lib.so");
    ASSERT_FALSE(lib.empty());
    ExpectObjdumpsNames("objdump", lib);
    ObjectStubs stubs = ReadObjectStubsFile(lib);
    ASSERT_FALSE(stubs.plt.empty());
    constexpr uint64_t kBase = 0x4948000;
    for (const PltSlot& slot : stubs.plt) {
      SCOPED_TRACE(slot.Name());
      std::string target(slot.symbol);
      EXPECT_EQ(stubs.SlotBias(kBase + slot.addr, target), kBase);
      EXPECT_EQ(stubs.SlotBias(kBase + slot.addr, target + "x"), std::nullopt);
      EXPECT_EQ(stubs.SlotBias(kBase + slot.addr + 1, target), std::nullopt);
      EXPECT_EQ(stubs.SlotBias(kBase + slot.addr + 0x800, target), std::nullopt);
      if (slot.addr >= 0x1000) {  // below the slot
        EXPECT_EQ(stubs.SlotBias(slot.addr - 0x1000, target), std::nullopt);
      }
    }
  }
}

TEST(ObjectStubsTest, SlotNamesViewTheFile) {
  // Names stay in the file's bytes: a slot copied its name, and 2,000 slots of one 1 MB name
  // took 1.9 GB (issue 36 item 2).
  if (!HaveTool("gcc")) GTEST_SKIP() << "gcc not installed";
  ScratchDir dir;
  std::string exe = Compile(dir, "gcc", "-fpie -pie", "pie");
  ASSERT_FALSE(exe.empty());
  std::ifstream in(exe, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ObjectStubs stubs = ReadObjectStubs(bytes);
  ASSERT_FALSE(stubs.plt.empty());
  for (const PltSlot& slot : stubs.plt) {
    EXPECT_GE(slot.symbol.data(), bytes.data()) << slot.Name();
    EXPECT_LE(slot.symbol.data() + slot.symbol.size(), bytes.data() + bytes.size());
  }
  // Read from the file, the stubs keep its map for their names.
  ObjectStubs from_file = ReadObjectStubsFile(exe);
  EXPECT_NE(from_file.names, nullptr);
  EXPECT_EQ(OurSlots(from_file), OurSlots(stubs));
}

TEST(ObjectStubsTest, TablesDescribedManyTimesAreSkipped) {
  // 65,000 SHT_RELA headers over one relocation block made reading quadratic (103 s, issue 36
  // item 1): tables of one kind that add up to more than the file are not read, and the stubs
  // say why.
  if (!HaveTool("gcc")) GTEST_SKIP() << "gcc not installed";
  ScratchDir dir;
  std::string exe = Compile(dir, "gcc", "-fpie -pie -Wl,-z,now", "pie");
  ASSERT_FALSE(exe.empty());
  std::ifstream in(exe, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (uint32_t type : {4u /* SHT_RELA */, 6u /* SHT_DYNAMIC */}) {
    SCOPED_TRACE(type);
    const int index = FindSection64(bytes, type);
    ASSERT_GE(index, 0);
    ObjectStubs twice = ReadObjectStubs(RepeatSection(bytes, true, index, 1));
    EXPECT_EQ(twice.skipped, "");
    EXPECT_FALSE(twice.plt.empty());
    // Enough copies to add up to more than the grown file.
    const uint64_t size = GetLittle(bytes, GetLittle(bytes, 40, 8) + uint64_t(index) * 64 + 32, 8);
    const int copies = int(bytes.size() / size) * 2 + 10;
    ObjectStubs many = ReadObjectStubs(RepeatSection(bytes, true, index, copies));
    EXPECT_THAT(many.skipped,
                testing::StartsWith(type == 4 ? "skipped: its relocation sections add up to "
                                              : "skipped: its dynamic sections add up to "));
    EXPECT_TRUE(many.plt.empty() && many.code.empty() && !many.pie_executable);
  }
}

TEST(ObjectStubsTest, UnreadableFilesGiveNothing) {
  ObjectStubs missing = ReadObjectStubsFile("/nonexistent/object");
  EXPECT_TRUE(missing.code.empty() && missing.plt.empty() && !missing.pie_executable);
  ObjectStubs text = ReadObjectStubs("not an ELF file");
  EXPECT_TRUE(text.code.empty() && text.plt.empty());
}

TEST(ObjectStubsTest, CutOffAndCorruptFilesAreReadWithinTheirBytes) {
  if (!HaveTool("gcc")) GTEST_SKIP() << "gcc not installed";
  ScratchDir dir;
  std::string exe = Compile(dir, "gcc", "-fpie -pie -Wl,-z,now", "pie");
  ASSERT_FALSE(exe.empty());
  std::ifstream in(exe, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(ReadObjectStubs(bytes).plt.empty());
  // Exactly-sized copies, so that AddressSanitizer catches any read past the end.
  for (size_t size = 0; size < bytes.size(); size += 61) {
    std::vector<char> cut(bytes.begin(), bytes.begin() + ptrdiff_t(size));
    ObjectStubs stubs = ReadObjectStubs(std::string_view(cut.data(), cut.size()));
    EXPECT_LE(stubs.plt.size(), 16u);
  }
  // A byte turned into 0xff in turn: offsets and sizes pointing anywhere.
  std::vector<char> copy(bytes.begin(), bytes.end());
  for (size_t at = 0; at < copy.size(); at += 7) {
    copy[at] = char(copy[at] ^ 0xff);
    ObjectStubs stubs = ReadObjectStubs(std::string_view(copy.data(), copy.size()));
    EXPECT_LE(stubs.plt.size(), copy.size() / 8);
    copy[at] = char(copy[at] ^ 0xff);
  }
}

}  // namespace
}  // namespace cg_inject
