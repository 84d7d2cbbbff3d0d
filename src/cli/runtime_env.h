// The switches that make JIT runtimes describe their code for perf, as `cg-inject record` sets
// them for the recorded program: environment variables (appended to a value the user already
// has, for the option-list variables), an extra ini directory for PHP (which has no variable for
// single settings) and, for runtimes that only take a command-line flag, an extra argument; and
// the Valgrind options a runtime needs to run under Valgrind at all. Every entry is documented
// in man/cg-inject.1 (RUNTIMES).
#pragma once

#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cg_inject {

struct RuntimeSelection;

/// One runtime and the switch that makes it write a perf map or jitdump. A runtime that needs
/// several variables (Bun) has one entry per variable; the first one names its programs.
struct RuntimeSwitch {
  std::string_view runtime{};   // name used by --no-runtime-env=LIST: "node", "java", ...
  std::string_view variable{};  // environment variable; empty: the switch is program_flag
  // The variable's value; kDirPlaceholder in it stands for record's own directory (the entry is
  // left out when there is none).
  std::string_view value{};
  bool append = false;              // option-list variable: appended to the user's value
  std::string_view program_flag{};  // inserted after the program (and its subcommand), if any
  std::string_view programs{};      // program basenames that are this runtime, space-separated
  std::string_view writes{};        // where the runtime writes its files (PID = its pid)
  // Settings written to `kIniFileName` in a directory of record's own; `variable` is then a
  // ':'-separated directory list (PHP_INI_SCAN_DIR) that gets that directory after the user's
  // list, or after an empty entry (the runtime's default directory) when the user has none.
  std::string_view ini_text{};
  // Valgrind options the runtime needs under Valgrind, space-separated; given before the user's
  // own Valgrind options (so those win) when the program is this runtime.
  std::string_view valgrind_options{};
  char separator = ' ';  // between the user's value and ours, for `append`
  // A file record writes into its own directory for the runtime to read (Bun's preload script):
  // its name and text.
  std::string_view dir_file{};
  std::string_view dir_file_text{};
};

/// The name of the file `ini_text` goes into.
inline constexpr const char* kIniFileName = "cg-inject.ini";
/// What stands for record's own directory in a RuntimeSwitch's value.
inline constexpr std::string_view kDirPlaceholder = "{dir}";

/// All runtimes, in the order of the man page.
std::span<const RuntimeSwitch> RuntimeSwitches();

/// The entries of `runtime` (one for most runtimes), in table order.
std::vector<const RuntimeSwitch*> SwitchesOf(std::string_view runtime);

/// The files record must write into its own directory for `selection`: (name, text) of every
/// selected entry's dir_file, the ini file included (kIniFileName, every selected ini_text).
std::vector<std::pair<std::string, std::string>> PlanDirFiles(const RuntimeSelection& selection);

/// The runtime whose `programs` list has `program`'s basename (version suffixes such as
/// python3.12 match "python"), or null.
const RuntimeSwitch* LookupRuntimeForProgram(std::string_view program);

/// True when `name` is the `runtime` of some entry.
bool IsKnownRuntime(std::string_view name);

/// Which runtimes get their switch: all but `disabled` (names), none when `all_off`.
struct RuntimeSelection {
  bool all_off = false;
  std::set<std::string> disabled;

  bool Enabled(std::string_view runtime) const {
    return !all_off && disabled.count(std::string(runtime)) == 0;
  }
};

/// The environment of the recorded program: `environ` ("NAME=VALUE" strings) with the selected
/// variables set or appended to. `dir` is record's own directory, holding every selected entry's
/// `ini_text` and dir_file files (PlanDirFiles); when empty, the entries that need it are left
/// out. `changes`, if not null, receives the "NAME=VALUE" entries that differ from `environ`, for
/// messages.
std::vector<std::string> PlanRuntimeEnv(const std::vector<std::string>& environ,
                                        const RuntimeSelection& selection, const std::string& dir,
                                        std::vector<std::string>* changes);

/// The text of the `kIniFileName` file record must write for `selection` (every selected entry's
/// `ini_text`); empty when no selected runtime needs one.
std::string PlanIniText(const RuntimeSelection& selection);

/// The Valgrind options the program's runtime needs (see `valgrind_options`), one per element;
/// empty for other programs or when the runtime is not selected.
std::vector<std::string> PlanValgrindOptions(std::string_view program,
                                             const RuntimeSelection& selection);

/// The program's argv with the selected command-line switches added (wasmtime:
/// `--profile=jitdump`, after `run` when that subcommand is given). Other programs unchanged.
std::vector<std::string> PlanProgramArgs(const std::vector<std::string>& program_args,
                                         const RuntimeSelection& selection);

}  // namespace cg_inject
