// Running the recorded program's Valgrind as a child: spawn, pass on the signals other processes
// send to cg-inject while it runs, wait, and report its status the way a shell does.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace cg_inject {

/// Where a program is, as execvp(3) would find it.
struct ProgramLookup {
  std::string path;  // the file found (the program itself when it has a '/')
  int error = 0;     // 0, ENOENT (no such file) or EACCES (found, but not an executable file)
};

/// Looks `program` up: a name with a '/' is taken as it is; a bare name is searched in the
/// ':'-separated `path_list` (an empty entry is the current directory), the first executable
/// regular file winning. EACCES when only non-executable files (or directories) were found.
ProgramLookup FindProgram(const std::string& program, const std::string& path_list);

/// True when the file at `path` starts with "#!" (a script run by an interpreter).
bool IsScript(const std::string& path);

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
