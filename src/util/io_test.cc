#include "cg_inject/io.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cg_inject/error.h"

namespace cg_inject {
namespace {

std::string ReadInChunks(ByteSource& source, size_t chunk = 7) {
  std::string out;
  std::vector<char> buf(chunk);
  while (size_t n = source.Read(buf.data(), buf.size())) out.append(buf.data(), n);
  return out;
}

std::string Compress(std::string_view text, int level = 3) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), level);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

/// A temporary directory removed (with its files) even when an assertion fails.
class ScopedTempDir {
 public:
  ScopedTempDir() {
    char tmpl[] = "/tmp/cg_inject_io_test.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~ScopedTempDir() {
    for (const std::string& name : List()) unlink((path_ + "/" + name).c_str());
    chmod(path_.c_str(), 0700);
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  std::vector<std::string> List() const {
    std::vector<std::string> names;
    if (DIR* dir = opendir(path_.c_str())) {
      while (dirent* e = readdir(dir)) {
        std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(name);
      }
      closedir(dir);
    }
    return names;
  }

 private:
  std::string path_;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(InputTest, MemoryInputPassesPlainBytesThrough) {
  auto src = OpenMemoryInput("events: Ir\n", "mem");
  EXPECT_EQ(src->display_name(), "mem");
  EXPECT_EQ(ReadInChunks(*src, 3), "events: Ir\n");
}

TEST(InputTest, ShortInputsAreNotMistakenForZstd) {
  auto src = OpenMemoryInput(std::string_view("\x28\xB5", 2), "mem");
  EXPECT_EQ(ReadInChunks(*src), std::string("\x28\xB5", 2));
  auto empty = OpenMemoryInput("", "mem");
  EXPECT_EQ(ReadInChunks(*empty), "");
}

TEST(InputTest, ZstdIsDetectedByMagicBytes) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "fn=(" + std::to_string(i) + ") f\n";
  std::string packed = Compress(text);
  auto src = OpenMemoryInput(packed, "x.callgrind");
  EXPECT_EQ(ReadInChunks(*src, 4096), text);
}

TEST(InputTest, ConcatenatedZstdFramesDecodeAsOneStream) {
  std::string packed = Compress("first frame\n") + Compress("second frame\n", 19);
  auto src = OpenMemoryInput(packed, "two.zst");
  EXPECT_EQ(ReadInChunks(*src), "first frame\nsecond frame\n");
}

/// A zstd skippable frame (magic 0x184D2A5N, little-endian, then a 4-byte length) of `payload`.
std::string SkippableFrame(unsigned nibble, std::string_view payload) {
  std::string frame = {static_cast<char>(0x50 | nibble), 0x2A, 0x4D, 0x18};
  uint32_t size = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) frame += static_cast<char>(size >> (8 * i) & 0xff);
  return frame + std::string(payload);
}

TEST(InputTest, SkippableFrameFirstIsZstd) {
  // pzstd writes a skippable frame (its frame sizes) before the data frames (issue 22).
  for (unsigned nibble : {0u, 7u, 15u}) {
    std::string packed = SkippableFrame(nibble, std::string(12, '\x01')) + Compress("a\n") +
                         SkippableFrame(0, "") + Compress("b\n");
    EXPECT_TRUE(StartsWithZstdFrame(packed));
    auto src = OpenMemoryInput(packed, "p.zst");
    EXPECT_EQ(ReadInChunks(*src), "a\nb\n");
  }
  // Not a skippable frame: another high nibble, or another byte after it.
  EXPECT_FALSE(StartsWithZstdFrame(std::string_view("\x60\x2A\x4D\x18", 4)));
  EXPECT_FALSE(StartsWithZstdFrame(std::string_view("\x50\x2A\x4D\x19", 4)));
  EXPECT_FALSE(StartsWithZstdFrame(std::string_view("\x50\x2A\x4D", 3)));
  EXPECT_FALSE(StartsWithZstdFrame("# callgrind format\n"));
}

TEST(InputTest, TruncatedZstdIsAnError) {
  std::string packed = Compress(std::string(100000, 'a') + "tail");
  packed.resize(packed.size() - 3);
  auto src = OpenMemoryInput(packed, "cut.zst");
  try {
    ReadInChunks(*src);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "cut.zst: expected more zstd data, got end of file");
  }
}

TEST(InputTest, CorruptZstdNamesTheFile) {
  std::string packed = Compress("hello hello hello hello\n");
  packed[packed.size() / 2] ^= 0x5A;
  packed[packed.size() - 1] ^= 0x5A;
  auto src = OpenMemoryInput(packed, "bad.zst");
  try {
    ReadInChunks(*src);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("bad.zst: zstd decompression failed: ", 0), 0u)
        << e.what();
  }
}

TEST(InputTest, OpenInputReadsFilesAndNamesMissingOnes) {
  ScopedTempDir dir;
  std::string path = dir.path() + "/in.zst";
  {
    std::ofstream out(path, std::ios::binary);
    out << Compress("compressed file\n");
  }
  auto src = OpenInput(path);
  EXPECT_EQ(src->display_name(), path);
  EXPECT_EQ(ReadInChunks(*src, 1 << 16), "compressed file\n");
  std::string missing = dir.path() + "/nope";
  try {
    OpenInput(missing);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), missing + ": cannot open: No such file or directory");
  }
  try {
    OpenInput(dir.path());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), dir.path() + ": cannot read: Is a directory");
  }
}

TEST(InputTest, ReadAllReadsTheRest) {
  std::string text(300000, 'z');
  auto src = OpenMemoryInput(text, "mem");
  char first[10];
  size_t have = 0;
  while (have < sizeof first) {
    size_t n = src->Read(first + have, sizeof first - have);  // may return fewer bytes
    ASSERT_GT(n, 0u);
    have += n;
  }
  EXPECT_EQ(ReadAll(*src), text.substr(10));
}

TEST(InputTest, PrependBytesReplaysAPeekedHeader) {
  std::string text = "pid: 42\nevents: Ir\nfn=f\n1 2\n";
  std::unique_ptr<ByteSource> src = OpenMemoryInput(text, "peek");
  char head[8];
  size_t have = 0;
  while (have < sizeof head) {
    size_t n = src->Read(head + have, sizeof head - have);  // may return fewer bytes
    ASSERT_GT(n, 0u);
    have += n;
  }
  std::unique_ptr<ByteSource> replay = PrependBytes(std::string(head, sizeof head), std::move(src));
  EXPECT_EQ(replay->display_name(), "peek");
  EXPECT_EQ(ReadAll(*replay), text);
}

TEST(InputTest, ReadWholeFileKeepsRawBytes) {
  ScopedTempDir dir;
  std::string path = dir.path() + "/raw";
  std::string bytes = Compress("not decompressed");
  bytes += std::string(200000, '\0');
  {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
  }
  EXPECT_EQ(ReadWholeFile(path), bytes);
}

TEST(AtomicOutputFileTest, CommitRenamesIntoPlace) {
  ScopedTempDir dir;
  std::string target = dir.path() + "/out.callgrind";
  {
    AtomicOutputFile out(target);
    out.Write("hello ");
    out.Write(std::string(3 << 20, 'x'));  // larger than one output block
    out.Write("end\n");
    EXPECT_EQ(dir.List().size(), 1u);  // only the temporary so far
    out.Commit();
  }
  EXPECT_EQ(dir.List(), std::vector<std::string>{"out.callgrind"});
  EXPECT_EQ(Slurp(target), "hello " + std::string(3 << 20, 'x') + "end\n");
  struct stat st;
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

// A header filled in last (an ELF image's build id) overwrites bytes still in the buffer and
// bytes already written; a FIFO, written through, cannot be written back into.
TEST(AtomicOutputFileTest, WriteAtOverwritesWrittenAndBufferedBytes) {
  ScopedTempDir dir;
  std::string target = dir.path() + "/image";
  {
    AtomicOutputFile out(target);
    ASSERT_TRUE(out.CanWriteAt());
    out.Write("head:....;");
    out.Write(std::string(3 << 20, 'x'));  // past one output block: the head is on disk
    out.Write("tail:....;");               // still buffered
    out.WriteAt(5, "1234");
    out.WriteAt(10 + (3 << 20) + 5, "5678");
    out.Write("after");
    out.Commit();
  }
  EXPECT_EQ(Slurp(target), "head:1234;" + std::string(3 << 20, 'x') + "tail:5678;after");

  std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  AtomicOutputFile through(fifo);
  EXPECT_FALSE(through.CanWriteAt());
  through.Write("x");
  EXPECT_THROW(through.WriteAt(0, "y"), InputError);
  close(reader);
}

TEST(AtomicOutputFileTest, UncommittedOutputLeavesNothingAndKeepsTheOldFile) {
  ScopedTempDir dir;
  std::string target = dir.path() + "/out";
  {
    std::ofstream old(target);
    old << "old contents";
  }
  {
    AtomicOutputFile out(target);
    out.Write("partial");
    out.Finish();
    EXPECT_EQ(dir.List().size(), 2u);
  }  // destroyed without Commit, as when an exception unwinds
  EXPECT_EQ(dir.List(), std::vector<std::string>{"out"});
  EXPECT_EQ(Slurp(target), "old contents");
}

TEST(AtomicOutputFileTest, SignalHandlerCleanupRemovesPendingTemporaries) {
  ScopedTempDir dir;
  AtomicOutputFile out(dir.path() + "/out");
  out.Write("data");
  out.Finish();
  ASSERT_EQ(dir.List().size(), 1u);
  RemovePendingOutputsFromSignalHandler();
  EXPECT_TRUE(dir.List().empty());
}

// The output's directory renamed while the output is written (issue 36 item 5: the rename by
// path failed, "cannot replace", and the temporary stayed): the temporary is made, renamed and
// removed through a handle on the directory.
TEST(AtomicOutputFileTest, DirectoryRenamedDuringTheRunGetsTheOutput) {
  ScopedTempDir dir;
  const std::string before = dir.path() + "/before", after = dir.path() + "/after";
  ASSERT_EQ(mkdir(before.c_str(), 0700), 0);
  {
    AtomicOutputFile out(before + "/out");
    out.Write("whole");
    ASSERT_EQ(rename(before.c_str(), after.c_str()), 0);
    out.Commit();
  }
  EXPECT_EQ(Slurp(after + "/out"), "whole");
  unlink((after + "/out").c_str());
  rmdir(after.c_str());  // fails, and the next line with it, if anything else was left there
  EXPECT_EQ(dir.List(), std::vector<std::string>{});
}

TEST(AtomicOutputFileTest, FailureOrSignalRemovesTheTemporaryFromARenamedDirectory) {
  ScopedTempDir dir;
  const std::string before = dir.path() + "/before", after = dir.path() + "/after";
  ASSERT_EQ(mkdir(before.c_str(), 0700), 0);
  {
    OutputGroup group;
    AtomicOutputFile grouped(before + "/grouped", &group);
    grouped.Write("x");
    grouped.Commit();
    AtomicOutputFile failed(before + "/failed");
    failed.Write("x");
    ASSERT_EQ(rename(before.c_str(), after.c_str()), 0);
  }  // both destroyed without being renamed into place, as when the run fails
  EXPECT_EQ(rmdir(after.c_str()), 0) << "left in the renamed directory";
  ASSERT_EQ(mkdir(before.c_str(), 0700), 0);
  AtomicOutputFile pending(before + "/pending");
  pending.Write("x");
  pending.Finish();
  ASSERT_EQ(rename(before.c_str(), after.c_str()), 0);
  RemovePendingOutputsFromSignalHandler();
  EXPECT_EQ(rmdir(after.c_str()), 0) << "the signal-time clean-up missed it";
}

TEST(AtomicOutputFileTest, OutputsOfOneDirectoryShareItsHandleUntilItIsReplaced) {
  ScopedTempDir dir;
  const std::string sub = dir.path() + "/sub";
  ASSERT_EQ(mkdir(sub.c_str(), 0700), 0);
  OutputGroup group;
  AtomicOutputFile first(sub + "/a", &group);
  first.Commit();
  // The directory replaced under its name: a new output goes into the new one.
  ASSERT_EQ(rename(sub.c_str(), (dir.path() + "/old").c_str()), 0);
  ASSERT_EQ(mkdir(sub.c_str(), 0700), 0);
  AtomicOutputFile second(sub + "/b", &group);
  second.Commit();
  group.CommitAll();
  EXPECT_EQ(access((dir.path() + "/old/a").c_str(), F_OK), 0);
  EXPECT_EQ(access((sub + "/b").c_str(), F_OK), 0);
  unlink((dir.path() + "/old/a").c_str());
  unlink((sub + "/b").c_str());
  rmdir((dir.path() + "/old").c_str());
  rmdir(sub.c_str());
}

// Root may write into read-only directories: as root, the check runs in a child process that
// has become nobody (uid and gid 65534) first.
TEST(AtomicOutputFileTest, UnwritableDirectoryIsANamedError) {
  ScopedTempDir dir;
  chmod(dir.path().c_str(), 0500);
  std::string target = dir.path() + "/out";
  const std::string expected = target + ": cannot create: Permission denied";
  auto message = [&]() -> std::string {
    try {
      AtomicOutputFile out(target);
      return "(no error)";
    } catch (const InputError& e) {
      return e.what();
    }
  };
  if (geteuid() != 0) {
    EXPECT_EQ(message(), expected);
    return;
  }
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
    _exit(message() == expected ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: another message, 2: could not become nobody";
}

TEST(AtomicOutputFileTest, MissingDirectoryIsANamedError) {
  ScopedTempDir dir;
  std::string target = dir.path() + "/no/such/out";
  try {
    AtomicOutputFile out(target);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), target + ": cannot create: No such file or directory");
  }
}

TEST(AtomicOutputFileTest, WriteErrorsNameThePath) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  // /dev/full fails every write with ENOSPC; "-" writes straight to fd 1, so point fd 1 there.
  int saved = dup(1);
  FILE* full = fopen("/dev/full", "w");
  ASSERT_NE(full, nullptr);
  dup2(fileno(full), 1);
  std::string message;
  try {
    AtomicOutputFile out("-");
    out.Write("x");
    out.Commit();
  } catch (const InputError& e) {
    message = e.what();
  }
  dup2(saved, 1);
  close(saved);
  fclose(full);
  EXPECT_EQ(message, "<stdout>: cannot write: No space left on device");
}

TEST(OutputGroupTest, RenamesEveryMemberOnlyAtCommitAll) {
  ScopedTempDir dir;
  {
    OutputGroup group;
    AtomicOutputFile a(dir.path() + "/a", &group), b(dir.path() + "/b", &group);
    a.Write("A");
    b.Write("B");
    a.Commit();
    b.Commit();
    EXPECT_EQ(group.size(), 2u);
    for (const std::string& name : dir.List()) EXPECT_NE(name, "a");  // still temporaries
    group.CommitAll();
  }
  std::vector<std::string> names = dir.List();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Slurp(dir.path() + "/b"), "B");
}

TEST(OutputGroupTest, DestroyedBeforeCommitAllLeavesNothingAndKeepsOldFiles) {
  ScopedTempDir dir;
  std::ofstream(dir.path() + "/a") << "old";
  {
    OutputGroup group;
    AtomicOutputFile a(dir.path() + "/a", &group), b(dir.path() + "/b", &group);
    a.Write("new");
    a.Commit();
    b.Commit();
    EXPECT_EQ(dir.List().size(), 3u);  // "a" and two temporaries
  }
  EXPECT_EQ(dir.List(), std::vector<std::string>{"a"});
  EXPECT_EQ(Slurp(dir.path() + "/a"), "old");
}

TEST(OutputGroupTest, OneTargetTwiceIsRefused) {
  ScopedTempDir dir;
  OutputGroup group;
  AtomicOutputFile a(dir.path() + "/a", &group), again(dir.path() + "/a", &group);
  a.Commit();
  EXPECT_THROW(again.Commit(), InputError);
}

TEST(AtomicOutputFileTest, FifoIsWrittenThroughNotReplaced) {
  ScopedTempDir dir;
  std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  {
    AtomicOutputFile out(fifo);
    out.Write("through");
    out.Commit();
  }
  char buf[16] = {};
  EXPECT_EQ(read(reader, buf, sizeof buf), 7);
  EXPECT_EQ(std::string(buf), "through");
  close(reader);
  struct stat st;
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(dir.List(), std::vector<std::string>{"fifo"});
}

TEST(AtomicOutputFileTest, TemporaryNamesStayWithinNameMax) {
  ScopedTempDir dir;
  std::string target = dir.path() + "/" + std::string(NAME_MAX, 'n');
  {
    AtomicOutputFile out(target);
    out.Write("x");
    for (const std::string& name : dir.List()) EXPECT_LE(name.size(), size_t(NAME_MAX));
    out.Commit();
  }
  EXPECT_EQ(Slurp(target), "x");
  try {
    AtomicOutputFile out(target + "n");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is 256 bytes, more than the 255"), std::string::npos)
        << e.what();
  }
}

TEST(AtomicOutputFileTest, StaleTemporariesAreThoseOfDeadProcesses) {
  ScopedTempDir dir;
  std::string target = dir.path() + "/out";
  std::string prefix = TempPrefixFor(target);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);  // a pid that is gone (until reused)
  std::ofstream(prefix + std::to_string(getpid()) + ".Abc123") << "mine, running";
  std::ofstream(prefix + std::to_string(child) + ".Abc123") << "a dead run's";
  std::ofstream(prefix + "Xyz789") << "an older cg-inject's (no pid)";
  EXPECT_EQ(
      FindStaleTemporaries(target),
      (std::vector<std::string>{prefix + std::to_string(child) + ".Abc123", prefix + "Xyz789"}));
}

TEST(ZstdSinkTest, RoundTripsThroughTheReader) {
  std::string text;
  for (int i = 0; i < 50000; ++i) text += std::to_string(i) + " 1 2 3\n";
  StringSink raw;
  {
    auto zsink = MakeZstdSink(&raw, 3);
    zsink->Write(text.substr(0, 1000));
    zsink->Write(text.substr(1000));
    zsink->Finish();
  }
  ASSERT_GE(raw.data().size(), 4u);
  EXPECT_EQ(raw.data().substr(0, 4), std::string("\x28\xB5\x2F\xFD", 4));
  EXPECT_LT(raw.data().size(), text.size() / 3);
  auto src = OpenMemoryInput(raw.data(), "mem");
  EXPECT_EQ(ReadInChunks(*src, 1 << 16), text);
}

TEST(ZstdSinkTest, CompressedAtomicOutputFile) {
  ScopedTempDir dir;
  std::string target = dir.path() + "/out.zst";
  {
    AtomicOutputFile file(target);
    auto zsink = MakeZstdSink(&file);
    zsink->Write("events: Ir\n");
    zsink->Finish();
    file.Commit();
  }
  auto src = OpenInput(target);
  EXPECT_EQ(ReadInChunks(*src), "events: Ir\n");
}

}  // namespace
}  // namespace cg_inject
