// Builds small JIT images and reads them back with independent consumers: LIEF (the parser the
// rest of src/elf uses), readelf, objdump (the command KCachegrind runs) and addr2line.
#include "elf/jit_image_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <LIEF/ELF.hpp>
#include <LIEF/logging.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cg_inject/error.h"
#include "util/test_shell.h"

namespace cg_inject {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// With the tools' warnings: a test fails on them (readelf's "Warning: ...").
std::string Shell(const std::string& command) { return ShellOutput(command + " 2>&1"); }

/// A temporary directory removed when the test ends, whatever happened.
class JitImageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cg-inject-image-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const JitImageSpec& spec, JitImageLayout* layout = nullptr) {
    std::string path = dir_ + "/image.elf";
    JitImageLayout l = WriteJitImage(path, spec);
    if (layout) *layout = l;
    return path;
  }

  std::string dir_;
  const std::vector<std::string_view> files_ = {"a.js", "/src/b.js"};
};

// push rbp; mov rbp,rsp; pop rbp; ret
const std::string kX86Frame("\x55\x48\x89\xe5\x5d\xc3", 6);
// mov eax,1; ret
const std::string kX86One("\xb8\x01\x00\x00\x00\xc3", 6);
// nop; ret
const std::string kX86Nop("\x90\xc3", 2);

JitImageSpec X86Spec(const std::vector<std::string_view>& files,
                     const std::vector<LineEntry>& lines) {
  JitImageSpec spec;
  spec.functions.push_back({0x5b000000, "jit_frame", kX86Frame, files, lines});
  spec.functions.push_back({0x5b000010, "jit_one", kX86One, files, {}});
  spec.functions.push_back({0x5b002000, "jit_nop far away", kX86Nop, files, {}});
  return spec;
}

const std::vector<LineEntry> kFrameLines = {
    {0x5b000000, 10, 0, 0},
    {0x5b000004, 12, 3, 1},
    {0x5b000100, 99, 0, 0},  // outside the function: ignored
};

TEST_F(JitImageTest, LayoutCountsRangesSymbolsAndRows) {
  JitImageLayout layout;
  std::string path = Write(X86Spec(files_, kFrameLines), &layout);
  EXPECT_EQ(layout.code_ranges, 2);  // 0x5b000000..16 and 0x5b002000 (a page away)
  EXPECT_EQ(layout.symbols, 3);
  EXPECT_EQ(layout.line_rows, 2);
  EXPECT_EQ(layout.code_bytes, 0x16u + 2u);
  EXPECT_EQ(layout.file_size, std::filesystem::file_size(path));
}

TEST_F(JitImageTest, LiefReadsSegmentsSymbolsCodeAndBuildId) {
  std::string path = Write(X86Spec(files_, kFrameLines));
  LIEF::Logger::disable();
  std::unique_ptr<LIEF::ELF::Binary> binary = LIEF::ELF::Parser::parse(path);
  ASSERT_NE(binary, nullptr);
  EXPECT_EQ(binary->header().machine_type(), LIEF::ELF::ARCH::EM_X86_64);
  int loads = 0;
  for (const LIEF::ELF::Segment& s : binary->segments()) {
    if (s.type() != LIEF::ELF::SEGMENT_TYPES::PT_LOAD) continue;
    ++loads;
    EXPECT_EQ(s.file_offset() % 0x1000, s.virtual_address() % 0x1000);
  }
  EXPECT_EQ(loads, 2);
  std::vector<std::string> symbols;
  for (const LIEF::ELF::Symbol& s : binary->static_symbols()) {
    if (s.name().empty()) continue;
    symbols.push_back(s.name() + "@" + std::to_string(s.value()) + "+" + std::to_string(s.size()));
  }
  EXPECT_THAT(symbols, ::testing::ElementsAre("jit_frame@1526726656+6", "jit_one@1526726672+6",
                                              "jit_nop far away@1526734848+2"));
  std::vector<uint8_t> code = binary->get_content_from_virtual_address(0x5b000010, 6);
  EXPECT_EQ(std::string(code.begin(), code.end()), kX86One);
  code = binary->get_content_from_virtual_address(0x5b002000, 2);
  EXPECT_EQ(std::string(code.begin(), code.end()), kX86Nop);
  ASSERT_TRUE(binary->has_section(".note.gnu.build-id"));
  ASSERT_TRUE(binary->has_section(".debug_line"));
}

// The build id is the SHA-1 of the whole image with the id itself zero, as `sha1sum` prints it
// (like ld --build-id=sha1): checked against sha1sum of the file with its id zeroed.
TEST_F(JitImageTest, BuildIdIsTheSha1OfTheImageWithoutIt) {
  std::string path = Write(X86Spec(files_, kFrameLines));
  std::string notes = Shell("readelf -n " + path);
  size_t at = notes.find("Build ID: ");
  ASSERT_NE(at, std::string::npos) << notes;
  std::string id = notes.substr(at + 10, 40);
  std::string id_bytes;
  for (size_t i = 0; i < id.size(); i += 2)
    id_bytes += char(std::stoi(id.substr(i, 2), nullptr, 16));
  std::string image = Shell("cat " + path);
  size_t where = image.find(id_bytes);
  ASSERT_NE(where, std::string::npos);
  image.replace(where, id_bytes.size(), std::string(id_bytes.size(), '\0'));
  std::string zeroed = path + ".zeroed";
  {
    std::ofstream out(zeroed, std::ios::binary);
    out << image;
  }
  EXPECT_EQ(Shell("sha1sum " + zeroed).substr(0, 40), id);
}

TEST_F(JitImageTest, ReadelfPrintsNoWarningAndTheBuildId) {
  std::string path = Write(X86Spec(files_, kFrameLines));
  std::string all = Shell("readelf -a -W " + path);
  EXPECT_THAT(all, Not(HasSubstr("arning")));
  EXPECT_THAT(all, Not(HasSubstr("rror")));
  EXPECT_THAT(all, HasSubstr("Build ID: "));
  std::string lines = Shell("readelf --debug-dump=rawline,info " + path);
  EXPECT_THAT(lines, Not(HasSubstr("arning")));
  EXPECT_THAT(lines, HasSubstr("/src/b.js"));
}

TEST_F(JitImageTest, BuildIdChangesWithTheCode) {
  std::string a = BuildJitImage(X86Spec(files_, kFrameLines), "a");
  JitImageSpec other = X86Spec(files_, kFrameLines);
  other.functions[1].code = kX86Frame;
  std::string b = BuildJitImage(other, "b");
  EXPECT_EQ(a.size(), b.size());
  EXPECT_NE(a, b);
  EXPECT_EQ(a, BuildJitImage(X86Spec(files_, kFrameLines), "a"));  // deterministic
}

TEST_F(JitImageTest, ObjdumpDisassemblesAtRuntimeAddressesWithSymbols) {
  std::string path = Write(X86Spec(files_, kFrameLines));
  // KCachegrind's command (libviews/instrview.cpp): first cost address - 20 .. last + 20.
  std::string out =
      Shell("objdump -C -d --start-address=0x5affffec --stop-address=0x5b000024 " + path);
  EXPECT_THAT(out, HasSubstr("<jit_frame>:"));
  EXPECT_THAT(out, HasSubstr("5b000000:\t55"));
  EXPECT_THAT(out, HasSubstr("5b000004:\t5d"));
  EXPECT_THAT(out, HasSubstr("<jit_one>:"));
  EXPECT_THAT(out, HasSubstr("5b000010:\tb8 01 00 00 00"));
  out = Shell("objdump -d " + path);
  EXPECT_THAT(out, HasSubstr("5b002000 <jit_nop far away>:"));
}

TEST_F(JitImageTest, Addr2lineAndObjdumpPrintTheJitLines) {
  std::string path = Write(X86Spec(files_, kFrameLines));
  EXPECT_EQ(Shell("addr2line -e " + path + " 0x5b000000 0x5b000002 0x5b000004 0x5b000005"),
            "a.js:10\na.js:10\n/src/b.js:12 (discriminator 3)\n/src/b.js:12 (discriminator 3)\n");
  EXPECT_EQ(Shell("addr2line -f -e " + path + " 0x5b000011"), "jit_one\n??:?\n");
  std::string out =
      Shell("objdump -dl --start-address=0x5b000000 --stop-address=0x5b000006 " + path);
  EXPECT_THAT(out, HasSubstr("a.js:10"));
  EXPECT_THAT(out, HasSubstr("/src/b.js:12"));
}

TEST_F(JitImageTest, AArch64ImageDisassemblesWithTheCrossObjdump) {
  JitImageSpec spec;
  spec.machine = kElfMachineAArch64;
  const std::string mov_ret("\x20\x00\x80\xd2\xc0\x03\x5f\xd6", 8);  // mov x0,#1; ret
  std::vector<LineEntry> lines = {{0x5b000070, 7, 0, 0}, {0x5b000074, 8, 0, 0}};
  spec.functions.push_back({0x5b000070, "jit_sum", mov_ret, files_, lines});
  std::string path = Write(spec);
  std::string out = Shell("aarch64-linux-gnu-objdump -C -d " + path);
  EXPECT_THAT(out, HasSubstr("5b000070:\td2800020 \tmov\tx0, #0x1"));
  EXPECT_THAT(out, HasSubstr("5b000074:\td65f03c0 \tret"));
  EXPECT_EQ(Shell("aarch64-linux-gnu-addr2line -e " + path + " 0x5b000074"), "a.js:8\n");
  EXPECT_THAT(Shell("readelf -a -W " + path), Not(HasSubstr("arning")));
}

TEST_F(JitImageTest, OverlappingFunctionsAreRejected) {
  JitImageSpec spec = X86Spec(files_, {});
  spec.functions.push_back({0x5b000012, "inside", kX86Nop, files_, {}});
  try {
    BuildJitImage(spec, "out.elf");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "out.elf: JIT image functions overlap at 0x5b000012");
  }
}

TEST_F(JitImageTest, FunctionWithoutCodeOrWrappingAroundIsRejected) {
  JitImageSpec spec;
  spec.functions.push_back({0x1000, "empty", "", files_, {}});
  try {
    BuildJitImage(spec, "out.elf");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "out.elf: a JIT image function has no code bytes");
  }
  spec.functions[0] = {~uint64_t{0}, "wraps", kX86Nop, files_, {}};
  try {
    BuildJitImage(spec, "out.elf");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "out.elf: a JIT image function wraps around the address space");
  }
}

// A mapped dump's code pages can leave memory while an image is written: the source is told
// after every 4 MB of code and at the end, and the bytes are those of an image whose source was
// never told. The code is read once: the build id is hashed as the bytes go out.
TEST_F(JitImageTest, CodeIsGivenBackEveryFewMegabytesAndAfterEachPass) {
  const std::string big(3 << 20, '\x90');  // nops: 3 MB a function
  const std::string_view names[] = {"f0", "f1", "f2"};
  JitImageSpec spec;
  for (uint64_t i = 0; i < 3; ++i)
    spec.functions.push_back({0x5b000000 + i * (4 << 20), names[i], big, {}, {}});
  const std::string kept = BuildJitImage(spec, "kept.elf");
  int given_back = 0;
  spec.give_back_code = [&given_back] { ++given_back; };
  EXPECT_EQ(BuildJitImage(spec, "given.elf"), kept);
  // 9 MB of code, told once past 6 MB (the second function) and once at its end.
  EXPECT_EQ(given_back, 2);
  given_back = 0;
  Write(X86Spec(files_, kFrameLines));  // no hook: nothing to call
  spec = X86Spec(files_, kFrameLines);
  spec.give_back_code = [&given_back] { ++given_back; };
  Write(spec);
  EXPECT_EQ(given_back, 1);
}

// An image path that is a FIFO is written through (no temporary to write the build id back
// into): the code is hashed in a pass of its own first, and the bytes are the same.
TEST_F(JitImageTest, ImageWrittenThroughAFifoHasTheSameBytes) {
  JitImageSpec spec = X86Spec(files_, kFrameLines);
  const std::string expected = BuildJitImage(spec, "image.elf");
  const std::string fifo = dir_ + "/fifo.elf";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string read_back;
  std::thread reader([&] {
    std::ifstream in(fifo, std::ios::binary);
    read_back.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  });
  int given_back = 0;
  spec.give_back_code = [&given_back] { ++given_back; };
  WriteJitImage(fifo, spec);
  reader.join();
  EXPECT_EQ(read_back, expected);
  EXPECT_EQ(given_back, 2);  // after each of its two passes
}

TEST_F(JitImageTest, EmptyImageIsStillValid) {
  std::string path = Write(JitImageSpec{});
  EXPECT_THAT(Shell("readelf -a -W " + path), Not(HasSubstr("arning")));
}

}  // namespace
}  // namespace cg_inject
