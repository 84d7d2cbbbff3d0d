#include "cli/child_process.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
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
  ChildResult r = Sh("trap 'exit 42' TERM; touch " + ready + "; while :; do sleep 0.05; done");
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
