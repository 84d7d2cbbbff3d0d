// Running the recorded program's Valgrind as a child: spawn, pass on the signals other processes
// send to cg-inject while it runs, wait, and report its status the way a shell does.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace cg_inject {

/// How a child ended, or why it did not start.
struct ChildResult {
  pid_t pid = 0;        // 0 when it did not start
  int status = 0;       // exit status; 128+N when signal N ended it
  int spawn_error = 0;  // errno of posix_spawn (ENOENT: no such program) when pid is 0
};

/// Runs argv[0] (searched in PATH when it has no '/') with `argv` and the environment `envp`
/// ("NAME=VALUE"), and waits for it. While it runs, SIGINT, SIGTERM and SIGHUP sent to this
/// process by kill(2) are passed on to the child; a terminal's Ctrl-C is not, because the
/// terminal sends it to the whole foreground process group, the child included. The previous
/// handlers are restored before returning. Requires: argv is not empty.
ChildResult RunChild(const std::vector<std::string>& argv, const std::vector<std::string>& envp);

}  // namespace cg_inject
