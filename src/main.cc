// cg-inject's executable: parse the command line, run, map the result to an exit code.
#include <unistd.h>
#include <csignal>
#include <cstdio>
#include <string_view>
#include <vector>

#include "cg_inject/io.h"
#include "cli/options.h"
#include "cli/record.h"
#include "cli/record_options.h"
#include "cli/run.h"

namespace {

// Signals whose default action ends the process (signal(7)): every one removes the temporaries
// first (issue 36 item 4: QUIT, USR1, ALRM, PROF, XCPU, ... left them). SIGKILL and SIGSTOP
// cannot be caught; SIGPIPE and SIGXFSZ are ignored (they become write errors); SIGBUS has its
// own handler below. The faults come last: a crash still ends as the crash it is.
constexpr int kEndingSignals[] = {SIGHUP,    SIGINT,    SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGTERM,
                                  SIGSTKFLT, SIGVTALRM, SIGPROF, SIGIO,   SIGPWR,  SIGXCPU};
constexpr int kFaultSignals[] = {SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGSEGV, SIGSYS};
struct sigaction g_previous[NSIG];

extern "C" void OnSignal(int signo) {
  // No partial output may remain: drop temporaries, then die with the conventional status.
  cg_inject::RemovePendingOutputsFromSignalHandler();
  _exit(128 + signo);
}

extern "C" void OnFault(int signo, siginfo_t* info, void*) {
  cg_inject::RemovePendingOutputsFromSignalHandler();
  // The handler that was there before (the sanitizers' report, else the default: a core dump)
  // takes over: a fault happens again when this returns, a signal sent by kill() is raised again.
  sigaction(signo, &g_previous[signo], nullptr);
  if (info == nullptr || info->si_code <= 0) raise(signo);
}

void InstallSignalHandlers() {
  for (int signo : kEndingSignals) std::signal(signo, OnSignal);
  for (int signo = SIGRTMIN; signo <= SIGRTMAX; ++signo) std::signal(signo, OnSignal);
  struct sigaction fault {};
  fault.sa_sigaction = OnFault;
  fault.sa_flags = SA_SIGINFO;
  sigemptyset(&fault.sa_mask);
  for (int signo : kFaultSignals) sigaction(signo, &fault, &g_previous[signo]);
}

extern "C" void OnBusError(int) {
  // Symbol sources and the real objects ob= names are memory-mapped (sources/mapped_file.h,
  // elf/elf_reader.cc); a file cut shorter while mapped faults on access. That is a bad input, not
  // a crash: say so, leave nothing behind.
  static constexpr char kMessage[] =
      "cg-inject: an input file (a perf map, a jitdump or an ob= object) became shorter while "
      "it was read (SIGBUS); no output written\n";
  cg_inject::RemovePendingOutputsFromSignalHandler();
  ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  (void)ignored;
  _exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  InstallSignalHandlers();
  std::signal(SIGPIPE, SIG_IGN);  // a closed stdout becomes a write error with a message
  // A file size limit (ulimit -f) becomes EFBIG, reported like ENOSPC, instead of a kill that
  // would leave the temporary output behind.
  std::signal(SIGXFSZ, SIG_IGN);
  std::signal(SIGBUS, OnBusError);

  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "record") {
    // `cg-inject record ... PROGRAM ARGS`: its own options, then the plain injection per process.
    cg_inject::ParsedRecordCommandLine record =
        cg_inject::ParseRecordCommandLine({args.begin() + 1, args.end()});
    if (!record.error.empty()) {
      std::fprintf(stderr, "cg-inject: %s\n%s", record.error.c_str(),
                   std::string(cg_inject::RecordShortUsage()).c_str());
      return int(cg_inject::ExitCode::kUsage);
    }
    if (record.options.help) {
      std::fputs(std::string(cg_inject::RecordHelpText()).c_str(), stdout);
      return 0;
    }
    return cg_inject::RunRecord(record.options, cg_inject::RecordEnvironment::FromProcess());
  }
  cg_inject::ParsedCommandLine parsed = cg_inject::ParseCommandLine(args);
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "cg-inject: %s\n%s", parsed.error.c_str(),
                 std::string(cg_inject::ShortUsage()).c_str());
    return int(cg_inject::ExitCode::kUsage);
  }
  if (parsed.options.help) {
    std::fputs(std::string(cg_inject::HelpText()).c_str(), stdout);
    return 0;
  }
  if (parsed.options.version) {
    std::printf("cg-inject %s\n", CG_INJECT_VERSION);
    return 0;
  }
  return int(cg_inject::RunCgInject(parsed.options, cg_inject::RunEnvironment::FromProcess()));
}
