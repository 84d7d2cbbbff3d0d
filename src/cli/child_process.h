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

/// Why a program that exists cannot be started although exec reported ENOENT: its `#!`
/// interpreter, or an ELF file's program interpreter (dynamic loader), is missing. Returns the
/// explanation ("its interpreter /no/such/sh (named by its #! line) is missing"), or "" when
/// `path` itself is missing or neither applies.
std::string MissingInterpreter(const std::string& path);

/// How a child ended, or why it did not start.
struct ChildResult {
  pid_t pid = 0;        // 0 when it did not start
  int status = 0;       // exit status; 128+N when signal N ended it
  int spawn_error = 0;  // errno of the exec (ENOENT: no such program) when pid is 0
  /// Processes of the child's group that the child left running when it ended, waited for
  /// (their pids, as found when the child ended).
  std::vector<pid_t> waited_for;
};

/// What RunChild reports while the child's group keeps running after the child ended.
using ChildNote = void (*)(const std::vector<pid_t>& still_running, void* context);

/// Runs argv[0] (searched in PATH when it has no '/') with `argv` and the environment `envp`
/// ("NAME=VALUE"), and waits for it, in a process group of its own:
///   - the child dies with this process: it gets SIGKILL when this process ends, even by
///     SIGKILL (PR_SET_PDEATHSIG), and so nothing it runs is left without its recorder;
///   - when this process is the terminal's foreground, the child's group becomes it, so Ctrl-C,
///     Ctrl-\ and reads from the terminal go to the program as they would without cg-inject;
///     Ctrl-Z stops the child and then this process, and `fg` continues both;
///   - every signal that would end this process (sent by kill(2), `timeout`, a closed terminal)
///     is passed on to the child's group instead; the previous handlers are restored before
///     returning;
///   - after the child ends, the processes it left running in its group (a launcher that
///     backgrounds the real program and exits) are waited for too, as this process adopts them
///     (PR_SET_CHILD_SUBREAPER): `note` (when given) is told their pids first.
/// SIGPIPE and SIGXFSZ, which cg-inject ignores, are the default again in the child.
/// Requires: argv is not empty.
ChildResult RunChild(const std::vector<std::string>& argv, const std::vector<std::string>& envp,
                     ChildNote note = nullptr, void* note_context = nullptr);

}  // namespace cg_inject
