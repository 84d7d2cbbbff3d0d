// cg-inject record:
//   run valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=DIR/callgrind.out.%p
//         [VALGRIND OPTIONS] PROGRAM ARGS, with the runtime switches in its environment
//   wait (RunChild passes on SIGINT/SIGTERM/SIGHUP that other processes send to cg-inject; a
//         Ctrl-C reaches Valgrind through the terminal's process group by itself)
//   per pid: move its perf map / jitdump into DIR, inject its files with RunCgInject (in
//         parallel, one task per pid), print each task's messages in pid order
// Callgrind writes its profile when the client dies of a signal: Valgrind runs the tool's exit
// handler before it re-raises the signal (measured with 3.19: `kill -INT` gives a complete
// callgrind.out.PID and exit status 130), so an interrupted run is still injected.
// Launcher scripts (`erl`, any `#!` script or shell that ends in `exec RUNTIME`): Valgrind does
// not follow an exec without --trace-children=yes; the program then runs outside it, and the
// shell's profile stays empty (Callgrind creates it at start and writes it at exit, which never
// comes). With --trace-children=yes the exec'd program keeps the pid, so its profile replaces
// the shell's under the same name: record turns it on for scripts and shells.
#include "cli/record.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include "callgrind/callgrind_reader.h"
#include "cg_inject/error.h"
#include "cg_inject/io.h"
#include "cg_inject/profile.h"
#include "cli/child_process.h"
#include "cli/options.h"
#include "cli/record_options.h"
#include "cli/recorded_files.h"
#include "cli/run.h"
#include "cli/runtime_env.h"
#include "cli/valgrind_choice.h"
#include "resolve/jit_name.h"

extern char** environ;

namespace cg_inject {
namespace {

/// First-event cost in unnamed JIT code (fn=0x... in ob=???) and in total: enough to tell "the
/// runtime wrote no map" from "this was not a JIT runtime".
class UnnamedCostScan : public ProfileSink {
 public:
  void OnPartBegin(int) override {}
  void OnHeader(std::string_view, std::string_view) override {}
  void OnLayout(const PartLayout&) override {}
  void OnFunction(const FunctionContext& f) override {
    JitName jit;
    unnamed_ = IsUnknownObject(f.object.text) && ParseJitFunctionName(f.function.text, &jit);
  }
  void OnCost(const CostRecord& cost) override {
    if (cost.costs.empty()) return;
    total_ += cost.costs[0];
    if (unnamed_) unnamed_cost_ += cost.costs[0];
  }
  void OnCall(const CallRecord&) override {}
  void OnJump(const JumpRecord&) override {}
  void OnPartEnd() override {}

  uint64_t total() const { return total_; }
  uint64_t unnamed_cost() const { return unnamed_cost_; }

 private:
  bool unnamed_ = false;
  uint64_t total_ = 0, unnamed_cost_ = 0;
};

/// Below this share of unnamed code (fn=0x... in ob=???) a process without symbol sources is
/// taken for one that ran no JIT code: a C program's PLT stubs land there too (/bin/true 0.02%,
/// sh 0.01% with Valgrind 3.19), while a JIT runtime's interpreter and stubs alone are more
/// (the test JIT 1.7%, Java and Node much more).
constexpr double kJitShareThreshold = 0.01;

/// One recorded process and what happens to it.
struct ProcessTask {
  RecordedProcess process;
  std::vector<SourceSpec> sources;  // moved into DIR, used for injecting
  std::vector<std::string> files;   // everything moved into DIR (removed by --clean)
  std::string program;              // argv[0] of the process, for messages
  CliOptions inject;
  std::string messages;  // RunCgInject's stderr
  ExitCode code = ExitCode::kOk;
};

/// Helpers that launcher scripts run to find their own directory (and Erlang's runtime helpers):
/// with --trace-children=yes they run outside Valgrind instead of leaving a profile each (erl
/// runs basename, dirname and dyn_erl before it execs erlexec, which execs beam.smp; beam.smp
/// starts erl_child_setup).
constexpr const char* kUntracedHelpers =
    "--trace-children-skip=*/basename,*/dirname,*/readlink,*/realpath,*/uname,*/sed,*/expr,"
    "*/dyn_erl,*/erl_child_setup,*/inet_gethost";

/// Shells and `env`: programs that run the next one, usually by exec; and Erlang's erlc and
/// escript, ELF programs that exec `erl` (a launcher script).
bool IsLauncherProgram(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  return name == "sh" || name == "bash" || name == "dash" || name == "env" || name == "erlc" ||
         name == "escript";
}

/// The value of `name` in `environ` ("NAME=VALUE"); `fallback` when it is not set.
std::string LookupEnv(const std::vector<std::string>& environ, const std::string& name,
                      const std::string& fallback) {
  for (const std::string& e : environ) {
    if (e.size() > name.size() && e.starts_with(name) && e[name.size()] == '=')
      return e.substr(name.size() + 1);
  }
  return fallback;
}

/// A directory of record's own holding the runtimes' ini file (PHP), removed when the run is
/// over: the runtime reads it at startup.
class IniDirectory {
 public:
  /// Creates DIR/cg-inject-ini.XXXXXX with `text` in kIniFileName; path() is empty on failure
  /// (a message went to `err`).
  IniDirectory(const std::string& tmp_dir, const std::string& text, std::FILE* err) {
    if (text.empty()) return;
    std::string pattern = Join(tmp_dir, "cg-inject-ini.XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::fprintf(err, "cg-inject: cannot create a directory in %s: %s; PHP gets no switch\n",
                   tmp_dir.c_str(), std::strerror(errno));
      return;
    }
    std::string file = Join(pattern, kIniFileName);
    std::FILE* f = std::fopen(file.c_str(), "w");
    bool ok = f != nullptr && std::fputs(text.c_str(), f) >= 0;
    if (f != nullptr && std::fclose(f) != 0) ok = false;
    if (!ok) {
      std::fprintf(err, "cg-inject: cannot write %s: %s; PHP gets no switch\n", file.c_str(),
                   std::strerror(errno));
      ::unlink(file.c_str());
      ::rmdir(pattern.c_str());
      return;
    }
    path_ = pattern;
  }
  ~IniDirectory() {
    if (path_.empty()) return;
    ::unlink(Join(path_, kIniFileName).c_str());
    ::rmdir(path_.c_str());
  }
  IniDirectory(const IniDirectory&) = delete;
  IniDirectory& operator=(const IniDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  static std::string Join(const std::string& dir, const std::string& name) {
    return (std::filesystem::path(dir) / name).string();
  }
  std::string path_;
};

std::string Join(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir == ".") return name;
  return (std::filesystem::path(dir) / name).string();
}

std::string Basename(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

/// Moves `from` to `to` (copy and unlink across file systems); returns false on failure.
bool MoveFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) == 0) return true;
  if (errno != EXDEV) return false;
  std::error_code ec;
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) return false;
  ::unlink(from.c_str());
  return true;
}

/// Moves `path` into `dir` unless it is there already; returns where it is now.
std::string MoveInto(const std::string& path, const std::string& dir, std::FILE* err) {
  std::string target = Join(dir, Basename(path));
  struct stat a, b;
  if (::stat(path.c_str(), &a) == 0 && ::stat(target.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
      a.st_ino == b.st_ino)
    return target;
  if (MoveFile(path, target)) return target;
  std::fprintf(err, "cg-inject: cannot move %s to %s: %s; using it where it is\n", path.c_str(),
               target.c_str(), std::strerror(errno));
  return path;
}

/// The file system's clock, which stamps modification times (the kernel's coarse clock).
int64_t FileClockNowNs() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return int64_t(now.tv_sec) * 1000000000 + now.tv_nsec;
}

/// The process's perf maps and jitdumps, moved beside its profile. A file last written before
/// the recording started is another process's that had the same pid (pids are reused: pid_max is
/// 32768 on many systems, and runtimes leave /tmp/perf-PID.map behind): its names would be
/// wrong, and it is not ours to move. 2 s of slack for file systems with coarse times.
std::vector<SourceSpec> CollectAndMoveSources(uint64_t pid, const DiscoveryRoots& roots,
                                              const std::string& dir, int64_t started_ns,
                                              std::FILE* err) {
  constexpr int64_t kSlackNs = 2'000'000'000;
  std::vector<SourceSpec> moved;
  for (SourceSpec& found : DiscoverSources(pid, roots)) {
    struct stat st;
    if (::stat(found.path.c_str(), &st) == 0 &&
        int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec < started_ns - kSlackNs) {
      std::fprintf(err,
                   "cg-inject: pid %llu: not using %s: it was last written before the recording "
                   "started, by another process with the same pid; left where it is\n",
                   static_cast<unsigned long long>(pid), found.path.c_str());
      continue;
    }
    moved.push_back({MoveInto(found.path, dir, err), found.kind, true});
  }
  return moved;
}

/// V8's isolate-0xADDR-PID-v8.log, which --perf-prof and --perf-basic-prof make it write into
/// the working directory (Node 20): a by-product of the switch, moved beside the profile too.
std::vector<std::string> MoveByproducts(uint64_t pid, const DiscoveryRoots& roots,
                                        const std::string& dir, std::FILE* err) {
  std::vector<std::string> moved;
  const std::string suffix = "-" + std::to_string(pid) + "-v8.log";
  for (const DirEntry& e : ListDirectory(roots.cwd)) {
    if (e.name.starts_with("isolate-") && e.name.ends_with(suffix))
      moved.push_back(MoveInto(Join(roots.cwd, e.name), dir, err));
  }
  return moved;
}

/// The sources to inject with. A jitdump describes the same code as the map plus code bytes and
/// lines, so it is preferred (Node with both switches writes both; given both, the injector would
/// see every function twice as reused code). But runtimes buffer their jitdumps: after a signal
/// ended the program the dump is cut off (Node 20 on Ctrl-C lost its last 3 KiB, with fib's
/// optimized code: 18% of the cost stayed unnamed), while the map was complete, so then the map
/// is preferred.
std::vector<SourceSpec> PickSources(const std::vector<SourceSpec>& found, bool killed) {
  SourceKind preferred = killed ? SourceKind::kPerfMap : SourceKind::kJitdump;
  bool has_preferred = std::any_of(found.begin(), found.end(),
                                   [&](const SourceSpec& s) { return s.kind == preferred; });
  std::vector<SourceSpec> picked;
  for (const SourceSpec& s : found) {
    if (!has_preferred || s.kind == preferred) picked.push_back(s);
  }
  return picked;
}

std::string ExpectedPlaces(uint64_t pid, const DiscoveryRoots& roots) {
  const std::string id = std::to_string(pid);
  std::string cwd = roots.cwd == "." ? std::filesystem::current_path().string() : roots.cwd;
  std::string text = Join(roots.tmp_dir, "perf-" + id + ".map") + ", " +
                     Join(cwd, "jit-" + id + ".dump") + ", " +
                     Join(roots.tmp_dir, "jit-" + id + ".dump");
  if (!roots.home.empty()) text += ", " + Join(roots.home, ".debug/jit/*/jit-" + id + ".dump");
  return text;
}

/// The first word of the profile's `cmd:` line (in its first 64 KiB), or "?".
std::string ReadProgramName(const std::string& profile) {
  try {
    std::unique_ptr<ByteSource> source = OpenInput(profile);
    std::string head(64 * 1024, '\0');
    size_t filled = 0;
    while (filled < head.size()) {
      size_t n = source->Read(head.data() + filled, head.size() - filled);
      if (n == 0) break;
      filled += n;
    }
    head.resize(filled);
    size_t at = head.starts_with("cmd:") ? 0 : head.find("\ncmd:");
    if (at == std::string::npos) return "?";
    at = head.find_first_not_of(' ', at + (at == 0 ? 4 : 5));
    size_t end = head.find_first_of(" \n", at);
    return at == std::string::npos ? "?" : head.substr(at, end - at);
  } catch (const InputError&) {
    return "?";
  }
}

/// Explains a process that ran unnamed JIT code without leaving a symbol source. Returns the
/// text (several lines).
std::string ExplainMissingSources(const ProcessTask& task, const RecordOptions& options,
                                  const RecordEnvironment& env, double share) {
  char head[256];
  std::snprintf(head, sizeof head,
                "cg-inject: pid %llu (%s): %.2f%% of the cost ran in unnamed JIT code, but the "
                "process left no perf map or jitdump\n",
                static_cast<unsigned long long>(task.process.pid), task.program.c_str(),
                share * 100.0);
  std::string text = head;
  const RuntimeSwitch* runtime = LookupRuntimeForProgram(task.program);
  if (runtime == nullptr) {
    text += "cg-inject:   " + Basename(task.program) +
            " is not a runtime record knows; make it write /tmp/perf-PID.map or jit-PID.dump "
            "(see RUNTIMES in cg-inject(1))\n";
  } else if (!options.runtimes.Enabled(runtime->runtime)) {
    text += "cg-inject:   the " + std::string(runtime->runtime) +
            " switch was turned off by --no-runtime-env\n";
  } else {
    std::string what;
    if (runtime->variable.empty()) {
      what = std::string(runtime->program_flag) + " was added to its arguments";
    } else if (!runtime->ini_text.empty()) {
      std::string settings(runtime->ini_text);
      std::replace(settings.begin(), settings.end(), '\n', ' ');
      while (settings.ends_with(' ')) settings.pop_back();
      what = std::string(runtime->variable) + " listed an ini file with " + settings;
    } else {
      what = std::string(runtime->variable) + "=" + std::string(runtime->value) + " was set";
    }
    text += "cg-inject:   " + what + "; " + std::string(runtime->runtime) + " writes " +
            std::string(runtime->writes) + "\n";
  }
  text += "cg-inject:   looked for " + ExpectedPlaces(task.process.pid, env.roots) + "\n";
  return text;
}

/// Says why valgrind did not start; returns the exit status (127 not found, 126 otherwise).
int ReportSpawnError(const std::string& valgrind, int error, std::FILE* err) {
  if (error == ENOENT) {
    std::fprintf(err,
                 "cg-inject: %s: valgrind not found%s; install it (Debian: apt-get install "
                 "valgrind) or give --valgrind PATH\n",
                 valgrind.c_str(), valgrind.find('/') == std::string::npos ? " in PATH" : "");
    return int(ExitCode::kNotFound);
  }
  std::fprintf(err, "cg-inject: cannot run %s: %s\n", valgrind.c_str(), std::strerror(error));
  return int(ExitCode::kCannotRun);
}

/// Prepares the RunCgInject options of one process.
void PlanInjection(const RecordOptions& options, ProcessTask* task) {
  CliOptions& o = task->inject;
  o.inputs = task->process.profiles;
  if (o.inputs.size() == 1) o.output = o.inputs[0] + o.suffix;  // else INPUT.jit each
  for (const SourceSpec& s : task->sources) {
    (s.kind == SourceKind::kJitdump ? o.jitdumps : o.perf_maps).push_back(s.path);
  }
  o.discover = false;  // exactly the files found for this pid, already moved
  o.progress = false;  // several tasks at once: no \r lines
  o.verbosity = task->sources.empty() ? 0 : options.verbosity;
  o.stats = task->sources.empty() ? StatsFormat::kNone : options.stats;
}

void RunTasks(std::vector<ProcessTask>* tasks, int jobs) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < tasks->size(); i = next++) {
      ProcessTask& task = (*tasks)[i];
      char* buf = nullptr;
      size_t size = 0;
      RunEnvironment renv;
      renv.err = ::open_memstream(&buf, &size);
      if (renv.err == nullptr) renv.err = stderr;
      task.code = RunCgInject(task.inject, renv);
      if (renv.err != stderr) {
        std::fclose(renv.err);
        task.messages.assign(buf, size);
        std::free(buf);
      }
    }
  };
  size_t n = std::min<size_t>(tasks->size(), size_t(std::max(jobs, 1)));
  std::vector<std::thread> threads;
  for (size_t i = 1; i < n; ++i) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
}

/// Says what was written for an injected process; for one without sources, whether it ran JIT
/// code (then the message explains the missing map and false is returned) or not (a note).
bool ReportResult(const ProcessTask& task, const RecordOptions& options,
                  const RecordEnvironment& env) {
  std::FILE* err = env.err;
  const auto pid = static_cast<unsigned long long>(task.process.pid);
  std::string outputs;
  for (const std::string& in : task.process.profiles) outputs += " " + in + task.inject.suffix;
  if (!task.sources.empty()) {
    if (options.verbosity > 0)
      std::fprintf(err, "cg-inject: pid %llu: wrote%s\n", pid, outputs.c_str());
    return true;
  }
  // Read the written copy: the same records, and the input may be gone with --clean.
  UnnamedCostScan scan;
  try {
    for (const std::string& in : task.process.profiles) {
      std::unique_ptr<ByteSource> source = OpenInput(in + task.inject.suffix);
      ReadCallgrind(*source, scan);
    }
  } catch (const InputError& e) {
    std::fprintf(err, "cg-inject: %s\n", e.what());
  }
  double share = double(scan.unnamed_cost()) / double(std::max<uint64_t>(scan.total(), 1));
  if (share >= kJitShareThreshold) {
    std::fputs(ExplainMissingSources(task, options, env, share).c_str(), err);
    std::fprintf(err, "cg-inject:   wrote%s with the addresses unnamed\n", outputs.c_str());
    return false;
  }
  if (options.verbosity > 0) {
    std::fprintf(err,
                 "cg-inject: note: pid %llu (%s) ran no JIT code (%.2f%% of the cost in unnamed "
                 "code, PLT stubs and the like); wrote%s unchanged\n",
                 pid, task.program.c_str(), share * 100.0, outputs.c_str());
  }
  return true;
}

int Record(const RecordOptions& options, const RecordEnvironment& env) {
  std::FILE* err = env.err;
  std::error_code ec;
  std::filesystem::create_directories(options.output_dir, ec);
  std::string dir = std::filesystem::absolute(options.output_dir, ec).lexically_normal().string();
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::fprintf(err, "cg-inject: %s: cannot create the output directory\n",
                 options.output_dir.c_str());
    return int(ExitCode::kInputError);
  }
  std::vector<DirEntry> before = ListDirectory(dir);
  // Valgrind gets the absolute path (the program may change directory); the files are named
  // relative to the given directory, as the user wrote it, in messages and to RunCgInject.
  const std::string& shown_dir = options.output_dir;

  std::error_code self_ec;
  const ValgrindChoice valgrind =
      ChooseValgrind(options.valgrind_given ? options.valgrind : "",
                     std::filesystem::read_symlink("/proc/self/exe", self_ec).string());
  // The program is looked up first, as Valgrind will (PATH of the program's environment), so
  // that a missing program is told apart from a missing valgrind; the codes are the shell's.
  ProgramLookup found =
      FindProgram(options.program[0], LookupEnv(env.environ, "PATH", "/bin:/usr/bin"));
  if (found.error == ENOENT) {
    std::fprintf(err, "cg-inject: %s: program not found%s\n", options.program[0].c_str(),
                 options.program[0].find('/') == std::string::npos ? " in PATH" : "");
    return int(ExitCode::kNotFound);
  }
  if (found.error != 0) {
    std::fprintf(err, "cg-inject: %s: cannot run the program: not an executable file\n",
                 found.path.c_str());
    return int(ExitCode::kCannotRun);
  }
  const bool user_trace =
      std::any_of(options.valgrind_args.begin(), options.valgrind_args.end(),
                  [](const std::string& a) { return a.starts_with("--trace-children="); });
  const bool follow = !user_trace && (IsScript(found.path) || IsLauncherProgram(found.path));

  std::vector<std::string> argv = {valgrind.program, "--tool=callgrind", "--dump-instr=yes",
                                   "--callgrind-out-file=" + Join(dir, "callgrind.out.%p")};
  if (options.verbosity == 0) argv.push_back("-q");  // no banner: errors only
  for (std::string& o : PlanValgrindOptions(options.program[0], options.runtimes))
    argv.push_back(std::move(o));
  if (follow) {
    argv.push_back("--trace-children=yes");
    argv.push_back(kUntracedHelpers);
  }
  argv.insert(argv.end(), options.valgrind_args.begin(), options.valgrind_args.end());
  std::vector<std::string> program = PlanProgramArgs(options.program, options.runtimes);
  argv.insert(argv.end(), program.begin(), program.end());
  IniDirectory ini(env.roots.tmp_dir, PlanIniText(options.runtimes), err);
  std::vector<std::string> changes;
  std::vector<std::string> envp =
      PlanRuntimeEnv(env.environ, options.runtimes, ini.path(), &changes);
  if (!valgrind.valgrind_lib.empty()) {
    std::erase_if(envp, [](const std::string& e) { return e.starts_with("VALGRIND_LIB="); });
    envp.push_back("VALGRIND_LIB=" + valgrind.valgrind_lib);
  }
  if (options.verbosity >= 1) std::fprintf(err, "%s\n", valgrind.message.c_str());
  if (options.verbosity >= 2) {
    std::string line;
    for (const std::string& a : argv) line += " " + a;
    std::fprintf(err, "cg-inject: running%s\n", line.c_str());
    for (const std::string& c : changes) std::fprintf(err, "cg-inject:   with %s\n", c.c_str());
  }

  const int64_t started_ns = FileClockNowNs();
  ChildResult child = RunChild(argv, envp);
  if (child.pid == 0) return ReportSpawnError(valgrind.program, child.spawn_error, err);
  const int status = child.status;
  if (options.verbosity >= 2) std::fprintf(err, "cg-inject: valgrind exited with %d\n", status);

  std::vector<DirEntry> after = ListDirectory(dir);
  std::vector<RecordedProcess> processes =
      GroupRecordedProfiles(shown_dir, after, UnchangedNames(before, after));
  if (processes.empty()) {
    std::fprintf(err,
                 "cg-inject: no Callgrind file was written to %s (valgrind exited with status "
                 "%d; see its messages above)\n",
                 dir.c_str(), status);
    // Valgrind's own 126/127 (the program cannot be run or was not found) are passed on.
    bool not_run = status == int(ExitCode::kCannotRun) || status == int(ExitCode::kNotFound);
    return not_run ? status : int(ExitCode::kInputError);
  }

  // A process whose every file is empty ended without Callgrind's dump: it exec'd a program
  // Valgrind did not follow (or SIGKILL ended it). It is no result; the program's own process
  // is an error, another (a helper's subshell) a note.
  bool main_exec_away = false;
  std::erase_if(processes, [&](const RecordedProcess& p) {
    for (const std::string& f : p.profiles) {
      struct stat fst;
      if (::stat(f.c_str(), &fst) != 0 || fst.st_size != 0) return false;
    }
    const bool is_main = p.pid == uint64_t(child.pid);
    if (is_main || options.verbosity > 0) {
      std::fprintf(err,
                   "cg-inject: %spid %llu (%s) left an empty profile: it exec'd a program that "
                   "ran outside Valgrind (or SIGKILL ended it)\n",
                   is_main ? "" : "note: ", static_cast<unsigned long long>(p.pid),
                   is_main ? options.program[0].c_str() : "?");
    }
    if (is_main) {
      main_exec_away = true;
      std::fprintf(err, "cg-inject:   %s\n",
                   follow ? "the exec'd program is one --trace-children-skip leaves out"
                          : "give -- --trace-children=yes -- to follow an exec");
    }
    return true;
  });

  std::vector<ProcessTask> tasks;
  for (RecordedProcess& p : processes) {
    ProcessTask task;
    task.process = std::move(p);
    std::vector<SourceSpec> found =
        CollectAndMoveSources(task.process.pid, env.roots, shown_dir, started_ns, err);
    task.sources = PickSources(found, status > 128);
    for (const SourceSpec& s : found) task.files.push_back(s.path);
    for (std::string& f : MoveByproducts(task.process.pid, env.roots, shown_dir, err))
      task.files.push_back(std::move(f));
    // The program's own pid runs what it exec'd when children are followed (beam.smp for erl).
    task.program = task.process.pid == uint64_t(child.pid) && !follow && !user_trace
                       ? options.program[0]
                       : ReadProgramName(task.process.profiles[0]);
    if (task.program == "?") task.program = options.program[0];
    PlanInjection(options, &task);
    tasks.push_back(std::move(task));
  }
  int jobs =
      options.jobs > 0 ? options.jobs : int(std::max(1u, std::thread::hardware_concurrency()));
  RunTasks(&tasks, jobs);

  int worst = 0;
  bool missing_sources = false;
  for (ProcessTask& task : tasks) {
    if (tasks.size() > 1 && !task.messages.empty())
      std::fprintf(err, "cg-inject: pid %llu (%s):\n",
                   static_cast<unsigned long long>(task.process.pid), task.program.c_str());
    std::fputs(task.messages.c_str(), err);
    if (task.code != ExitCode::kOk) {
      if (worst == 0) worst = int(task.code);
      continue;  // the raw files stay, even with --clean
    }
    if (!ReportResult(task, options, env)) missing_sources = true;
    if (options.clean) {
      for (const std::string& in : task.process.profiles) ::unlink(in.c_str());
      for (const std::string& f : task.files) ::unlink(f.c_str());
    }
  }
  if (worst != 0) return worst;
  if (missing_sources || main_exec_away) return int(ExitCode::kInputError);
  return status;
}

}  // namespace

RecordEnvironment RecordEnvironment::FromProcess() {
  RecordEnvironment env;
  for (char** e = ::environ; e != nullptr && *e != nullptr; ++e) env.environ.emplace_back(*e);
  env.roots = DiscoveryRoots::FromEnvironment();
  // LLVM's perf listener (Julia) writes under $JITDUMPDIR when set, else $HOME.
  if (const char* dir = std::getenv("JITDUMPDIR"); dir != nullptr && *dir != '\0')
    env.roots.home = dir;
  return env;
}

int RunRecord(const RecordOptions& options, const RecordEnvironment& env) {
  try {
    return Record(options, env);
  } catch (const InputError& e) {
    std::fprintf(env.err, "cg-inject: %s\n", e.what());
    return int(ExitCode::kInputError);
  } catch (const std::exception& e) {
    std::fprintf(env.err, "cg-inject: record: %s\n", e.what());
    return int(ExitCode::kInputError);
  }
}

}  // namespace cg_inject
