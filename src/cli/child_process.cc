// posix_spawn rather than fork+exec: glibc reports a failed exec as the spawn's error (so
// "valgrind not found" is told apart from a program exiting 127), and nothing runs between fork
// and exec in a process that may have threads.
#include "cli/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>

namespace cg_inject {
namespace {

// The running child, for the signal handler; 0 when none.
std::atomic<pid_t> g_child{0};
// A signal that came while there was no child yet (between installing the handler and the spawn
// returning): the spawner passes it on once it knows the pid. Without it a SIGTERM in that window
// was dropped and the child ran on with nobody to stop it.
std::atomic<int> g_pending_signal{0};

extern "C" void ForwardSignal(int signo, siginfo_t* info, void*) {
  // A terminal's Ctrl-C (si_code SI_KERNEL) already went to the child, which shares our process
  // group; sending it again could interrupt Callgrind's dump. Signals from kill(2) are passed on.
  if (info == nullptr || info->si_code == SI_KERNEL) return;
  // Store first, then look: either this handler sees the child, or the spawner's exchange below
  // comes after the store and sees the signal. Whoever takes it from g_pending_signal sends it, so
  // it is sent exactly once.
  g_pending_signal.store(signo);
  pid_t child = g_child.load();
  if (child > 0 && g_pending_signal.exchange(0) != 0) ::kill(child, signo);
}

/// Forwards SIGINT/SIGTERM/SIGHUP while alive, then restores the previous handlers. Installed
/// before the spawn: a signal in between must not end cg-inject and orphan the child.
class SignalForwarding {
 public:
  SignalForwarding() {
    g_pending_signal.store(0);
    struct sigaction action {};
    action.sa_sigaction = ForwardSignal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &action, &old_[i]);
  }
  ~SignalForwarding() {
    for (size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
    g_child.store(0);
    g_pending_signal.store(0);
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;
  void set_child(pid_t child) {
    g_child.store(child);
    if (int signo = g_pending_signal.exchange(0); signo != 0) ::kill(child, signo);
  }

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

int WaitFor(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
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

ChildResult RunChild(const std::vector<std::string>& argv, const std::vector<std::string>& envp) {
  std::vector<char*> c_argv, c_envp;
  for (const std::string& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  for (const std::string& e : envp) c_envp.push_back(const_cast<char*>(e.c_str()));
  c_envp.push_back(nullptr);

  ChildResult result;
  SignalForwarding forwarding;
  const char* path = c_argv[0];
  bool search = argv[0].find('/') == std::string::npos;
  int rc = search
               ? ::posix_spawnp(&result.pid, path, nullptr, nullptr, c_argv.data(), c_envp.data())
               : ::posix_spawn(&result.pid, path, nullptr, nullptr, c_argv.data(), c_envp.data());
  if (rc != 0) {
    result.pid = 0;
    result.spawn_error = rc;
    return result;
  }
  forwarding.set_child(result.pid);
  result.status = WaitFor(result.pid);
  return result;
}

}  // namespace cg_inject
