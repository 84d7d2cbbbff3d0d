// fork+exec rather than posix_spawn: the child must join a process group of its own, take the
// terminal and ask for a signal when its parent dies before it execs (issue 36 item 12), which
// posix_spawn cannot do. Everything the child runs between fork and exec is async-signal-safe
// (the program is looked up and the argument arrays built before the fork), and a failed exec is
// reported back through a close-on-exec pipe, so "valgrind not found" is still told apart from a
// program exiting 127.
#include "cli/child_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cg_inject {
namespace {

// The running child's process group, for the signal handler; 0 when none.
std::atomic<pid_t> g_child_group{0};
// A signal that came while there was no child yet (between installing the handler and the fork
// returning): the spawner passes it on once it knows the group. Without it a SIGTERM in that
// window was dropped and the child ran on with nobody to stop it.
std::atomic<int> g_pending_signal{0};

extern "C" void ForwardSignal(int signo) {
  // The child has a process group of its own, so no signal reaches it through ours: each one is
  // passed on, to the whole group. Store first, then look: either this handler sees the group,
  // or the spawner's exchange below comes after the store and sees the signal. Whoever takes it
  // from g_pending_signal sends it, so it is sent exactly once.
  g_pending_signal.store(signo);
  pid_t group = g_child_group.load();
  if (group > 0 && g_pending_signal.exchange(0) != 0) ::kill(-group, signo);
}

// The signals whose default action ends a process (as main.cc handles them), passed on while a
// child runs.
constexpr std::array<int, 13> kForwarded = {SIGHUP,  SIGINT,  SIGQUIT,   SIGUSR1,   SIGUSR2,
                                            SIGALRM, SIGTERM, SIGSTKFLT, SIGVTALRM, SIGPROF,
                                            SIGIO,   SIGPWR,  SIGXCPU};

/// Forwards the signals above while alive, then restores the previous handlers. Installed
/// before the fork: a signal in between must not end cg-inject and orphan the child.
class SignalForwarding {
 public:
  SignalForwarding() {
    g_pending_signal.store(0);
    struct sigaction action {};
    action.sa_handler = ForwardSignal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < kForwarded.size(); ++i) ::sigaction(kForwarded[i], &action, &old_[i]);
  }
  ~SignalForwarding() {
    for (size_t i = 0; i < kForwarded.size(); ++i) ::sigaction(kForwarded[i], &old_[i], nullptr);
    g_child_group.store(0);
    g_pending_signal.store(0);
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;
  void set_child_group(pid_t group) {
    g_child_group.store(group);
    if (int signo = g_pending_signal.exchange(0); signo != 0) ::kill(-group, signo);
  }

 private:
  std::array<struct sigaction, kForwarded.size()> old_{};
};

/// The terminal this process controls as the foreground, or -1: the child's group gets it while
/// it runs, so the program reads the terminal and gets Ctrl-C as it would without cg-inject.
int ForegroundTerminal() {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (::isatty(fd) && ::tcgetpgrp(fd) == ::getpgrp()) return fd;
  }
  return -1;
}

/// tcsetpgrp from a process that may be in the background: SIGTTOU would stop it.
void GiveTerminal(int tty, pid_t group) {
  if (tty < 0) return;
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGTTOU);
  ::sigprocmask(SIG_BLOCK, &block, &old);
  ::tcsetpgrp(tty, group);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
}

/// The processes of group `group` that are alive (zombies included), from /proc.
std::vector<pid_t> GroupMembers(pid_t group) {
  std::vector<pid_t> members;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return members;
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    std::FILE* f = std::fopen(path, "r");
    if (f == nullptr) continue;
    char buf[512];
    const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    // "PID (COMM) STATE PPID PGRP ...": COMM may hold spaces and parentheses; it ends at the last
    // ')'.
    const char* close = std::strrchr(buf, ')');
    long pgrp = 0;
    char state = 0;
    if (close != nullptr && std::sscanf(close + 1, " %c %*d %ld", &state, &pgrp) == 2 &&
        pgrp == group && state != 'Z')
      members.push_back(pid_t(pid));
  }
  ::closedir(proc);
  return members;
}

/// 0 when `path` is an executable regular file, else ENOENT (absent) or EACCES.
int CheckExecutable(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ENOENT;
  if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) return EACCES;
  return 0;
}

}  // namespace

ProgramLookup FindProgram(const std::string& program, const std::string& path_list) {
  ProgramLookup lookup;
  if (program.empty()) {
    lookup.error = ENOENT;
    return lookup;
  }
  if (program.find('/') != std::string::npos) {
    lookup.path = program;
    lookup.error = CheckExecutable(program);
    return lookup;
  }
  lookup.error = ENOENT;
  size_t begin = 0;
  while (begin <= path_list.size()) {
    size_t end = path_list.find(':', begin);
    if (end == std::string::npos) end = path_list.size();
    std::string dir = path_list.substr(begin, end - begin);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    int error = CheckExecutable(candidate);
    if (error == 0) return {candidate, 0};
    if (error == EACCES && lookup.error == ENOENT) {
      lookup.path = candidate;  // execvp goes on, and reports EACCES if nothing else is found
      lookup.error = EACCES;
    }
    begin = end + 1;
  }
  return lookup;
}

bool IsScript(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  char head[2] = {};
  ssize_t n = ::read(fd, head, sizeof head);
  ::close(fd);
  return n == 2 && head[0] == '#' && head[1] == '!';
}

std::string MissingInterpreter(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  char head[256] = {};
  const ssize_t n = ::read(fd, head, sizeof head - 1);
  ::close(fd);
  if (n >= 2 && head[0] == '#' && head[1] == '!') {
    // "#! /path/to/interpreter [argument]": the kernel runs the first word.
    std::string line(head + 2, size_t(n - 2));
    line = line.substr(0, line.find('\n'));
    const size_t begin = line.find_first_not_of(" \t");
    if (begin == std::string::npos) return "its #! line names no interpreter";
    const std::string interpreter = line.substr(begin, line.find_first_of(" \t", begin) - begin);
    struct stat st;
    if (::stat(interpreter.c_str(), &st) != 0)
      return "its interpreter " + interpreter + " (named by its #! line) is missing";
    return "";
  }
  if (n >= 4 && head[0] == '\x7f' && std::memcmp(head + 1, "ELF", 3) == 0) {
    // A dynamically linked program whose loader (PT_INTERP) is missing: another architecture's,
    // or a distribution's that is not installed.
    return "its program interpreter (the dynamic loader it names) is missing";
  }
  return "";
}

ChildResult RunChild(const std::vector<std::string>& argv, const std::vector<std::string>& envp,
                     ChildNote note, void* note_context) {
  std::vector<char*> c_argv, c_envp;
  for (const std::string& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  for (const std::string& e : envp) c_envp.push_back(const_cast<char*>(e.c_str()));
  c_envp.push_back(nullptr);
  // Looked up as execvp would, before the fork (the search allocates). The PATH is the one
  // given to the child.
  std::string path_list = "/bin:/usr/bin";
  for (const std::string& e : envp) {
    if (e.starts_with("PATH=")) path_list = e.substr(5);
  }
  ChildResult result;
  const ProgramLookup program = FindProgram(argv[0], path_list);
  if (program.error != 0) {
    result.spawn_error = program.error;
    return result;
  }

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    result.spawn_error = errno;
    return result;
  }
  // Descendants left running when the child ends are adopted by this process (instead of init),
  // so they can be waited for.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  const int tty = ForegroundTerminal();
  const pid_t parent = ::getpid();
  SignalForwarding forwarding;
  const pid_t child = ::fork();
  if (child < 0) {
    result.spawn_error = errno;
    ::close(report[0]);
    ::close(report[1]);
    return result;
  }
  if (child == 0) {
    ::close(report[0]);
    ::setpgid(0, 0);
    GiveTerminal(tty, ::getpid());
    // Killed with its recorder, whatever ends it: with nobody to inject its profile, a program
    // that ran on would only leave an orphan Valgrind behind.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the recorder died before the line above
    // Exec keeps ignored signals ignored and resets handled ones: the program gets the defaults.
    for (int signo : {SIGPIPE, SIGXFSZ}) ::signal(signo, SIG_DFL);
    for (int signo : kForwarded) ::signal(signo, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(program.path.c_str(), c_argv.data(), c_envp.data());
    const int error = errno;
    ssize_t ignored = ::write(report[1], &error, sizeof error);
    (void)ignored;
    ::_exit(127);
  }
  ::close(report[1]);
  // Both sides set the group and the terminal, so neither order of the two processes races.
  ::setpgid(child, child);
  GiveTerminal(tty, child);
  forwarding.set_child_group(child);
  int error = 0;
  ssize_t n;
  while ((n = ::read(report[0], &error, sizeof error)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n == sizeof error) {
    int status;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    GiveTerminal(tty, ::getpgrp());
    result.spawn_error = error;
    return result;
  }
  result.pid = child;

  auto status_of = [](int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
  };
  for (;;) {
    int status = 0;
    const pid_t got = ::waitpid(child, &status, WUNTRACED);
    if (got < 0) {
      if (errno == EINTR) continue;
      result.status = 1;
      break;
    }
    if (WIFSTOPPED(status)) {
      // Ctrl-Z stopped the program: stop as well, so the shell gets the terminal back, and go
      // on together when continued.
      GiveTerminal(tty, ::getpgrp());
      ::raise(SIGTSTP);
      GiveTerminal(tty, child);
      ::kill(-child, SIGCONT);
      continue;
    }
    result.status = status_of(status);
    break;
  }
  // What the child left running in its group (adopted by this process as they lose their
  // parents): waited for, so that their profiles are complete before they are read.
  result.waited_for = GroupMembers(child);
  if (!result.waited_for.empty() && note != nullptr) note(result.waited_for, note_context);
  for (;;) {
    int status = 0;
    const pid_t got = ::waitpid(-child, &status, 0);
    if (got > 0) continue;
    if (errno == EINTR) continue;
    if (errno != ECHILD) break;
    // None of them is this process's child yet: a member whose parent (also a member) is alive
    // is adopted only when that parent ends. Poll until the group is empty.
    if (GroupMembers(child).empty()) break;
    ::usleep(100 * 1000);
  }
  GiveTerminal(tty, ::getpgrp());
  return result;
}

}  // namespace cg_inject
