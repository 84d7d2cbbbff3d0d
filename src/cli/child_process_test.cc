#include "cli/child_process.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace cg_inject {
namespace {

ChildResult Sh(const std::string& script, std::vector<std::string> envp = {}) {
  return RunChild({"sh", "-c", script},
                  envp.empty() ? std::vector<std::string>{"PATH=/bin:/usr/bin"} : envp);
}

TEST(ChildProcessTest, ExitStatusAndSignalsAsAShellReportsThem) {
  EXPECT_EQ(Sh("exit 0").status, 0);
  EXPECT_EQ(Sh("exit 3").status, 3);
  ChildResult killed = Sh("kill -SEGV $$");
  EXPECT_NE(killed.pid, 0);
  EXPECT_EQ(killed.status, 128 + SIGSEGV);
}

TEST(ChildProcessTest, TheEnvironmentIsExactlyTheOneGiven) {
  EXPECT_EQ(Sh("[ \"$CG_X\" = 1 ] && [ -z \"$HOME\" ]", {"PATH=/bin:/usr/bin", "CG_X=1"}).status,
            0);
}

TEST(ChildProcessTest, AMissingProgramIsASpawnError) {
  ChildResult r = RunChild({"cg-inject-no-such-program"}, {"PATH=/nonexistent"});
  EXPECT_EQ(r.pid, 0);
  EXPECT_EQ(r.spawn_error, ENOENT);
  r = RunChild({"/nonexistent/valgrind"}, {});
  EXPECT_EQ(r.spawn_error, ENOENT);
}

// A temporary directory with an executable script, a binary-looking file and a file without
// the execute bit, for FindProgram and IsScript.
class ProgramDir {
 public:
  ProgramDir() {
    char pattern[] = "/tmp/cg-inject-programs.XXXXXX";
    dir_ = ::mkdtemp(pattern);
    Write("launcher", "#!/bin/sh\nexec true\n", 0755);
    Write("binary",
          "\x7f"
          "ELF",
          0755);
    Write("data", "#!/bin/sh\n", 0644);
  }
  ~ProgramDir() {
    for (const char* name : {"launcher", "binary", "data"}) ::unlink((dir_ + "/" + name).c_str());
    ::rmdir(dir_.c_str());
  }
  const std::string& dir() const { return dir_; }

 private:
  void Write(const std::string& name, const std::string& text, mode_t mode) {
    std::string path = dir_ + "/" + name;
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
    ::chmod(path.c_str(), mode);
  }
  std::string dir_;
};

TEST(ChildProcessTest, FindProgramSearchesThePathAsExecvpDoes) {
  ProgramDir d;
  ProgramLookup found = FindProgram("launcher", "/nonexistent:" + d.dir());
  EXPECT_EQ(found.error, 0);
  EXPECT_EQ(found.path, d.dir() + "/launcher");
  EXPECT_EQ(FindProgram("nope", d.dir()).error, ENOENT);
  EXPECT_EQ(FindProgram(d.dir() + "/nope", "").error, ENOENT);
  // Found but not executable: 126 for a shell, unlike "not found".
  EXPECT_EQ(FindProgram("data", d.dir()).error, EACCES);
  EXPECT_EQ(FindProgram(d.dir() + "/data", "").error, EACCES);
  EXPECT_EQ(FindProgram(d.dir(), "").error, EACCES);  // a directory
  // A later executable wins over an earlier non-executable one; none: EACCES still.
  EXPECT_EQ(FindProgram("data", d.dir() + ":/nonexistent").error, EACCES);
  EXPECT_EQ(FindProgram("sh", d.dir() + ":/bin").error, 0);
}

TEST(ChildProcessTest, ScriptsAreToldApartByTheirFirstTwoBytes) {
  ProgramDir d;
  EXPECT_TRUE(IsScript(d.dir() + "/launcher"));
  EXPECT_FALSE(IsScript(d.dir() + "/binary"));
  EXPECT_FALSE(IsScript(d.dir() + "/nope"));
}

TEST(ChildProcessTest, SigtermFromAnotherProcessIsPassedOnAndHandlersRestored) {
  char dir_template[] = "/tmp/cg-inject-child-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string ready = std::string(dir_template) + "/ready";
  std::thread sender([&] {
    struct stat st;
    for (int i = 0; i < 500 && ::stat(ready.c_str(), &st) != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ::kill(::getpid(), SIGTERM);  // si_code SI_USER: forwarded
  });
  // The loop ends by itself after about 20 s, so a signal that is not passed on fails the test
  // with status 0 instead of hanging it until Meson's timeout.
  ChildResult r = Sh("trap 'exit 42' TERM; touch " + ready +
                     "; i=0; while [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done");
  sender.join();
  EXPECT_EQ(r.status, 42);
  struct sigaction now {};
  ::sigaction(SIGTERM, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);
  ::unlink(ready.c_str());
  ::rmdir(dir_template);
}

}  // namespace
}  // namespace cg_inject
