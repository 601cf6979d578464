// The one way the orchestrator starts a child process (issue #26): argv, the environment rules, the working
// directory, what the standard streams are connected to, which descriptors are handed down, the process group
// or session, a parent-death signal, a user to run as; and waiting for and stopping a child by its PID. Used
// by the server's scheduler supervisor, the scheduler's executor client, the std handlers' commands, the
// compile service and `inmanta deploy`. Invariant: a started child holds no descriptor of ours above stderr
// except those listed in SpawnOptions::keepFds (every other one is closed on exec), and spawn() returns only
// once the child has exec'd — a failed exec, chdir or user switch is an error of spawn(), never a silent exit
// code.
#pragma once

#include <llvm/Support/Error.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace inm::support {

/// What one of the child's standard streams (0, 1, 2) is connected to.
enum class StreamMode {
  Inherit, ///< the parent's descriptor of the same number
  Null,    ///< /dev/null
  Pipe,    ///< a new pipe; the parent's end comes back in Child (close-on-exec)
  Fd,      ///< Stream::fd of the parent (spawn neither closes nor takes it)
};

/// One standard stream of the child.
struct Stream {
  StreamMode mode = StreamMode::Inherit;
  int fd = -1; ///< for StreamMode::Fd
  static Stream inherit() { return {}; }
  static Stream null() { return {StreamMode::Null, -1}; }
  static Stream pipe() { return {StreamMode::Pipe, -1}; }
  static Stream to(int fd) { return {StreamMode::Fd, fd}; }
};

/// Everything about a child to start.
struct SpawnOptions {
  std::vector<std::string> argv; ///< argv[0] is the program's path (no PATH search: see findOnPath)
  std::string program; ///< when set, the path executed instead of argv[0] (argv[0] is kept as given)
  std::string cwd;     ///< the child's working directory; empty keeps ours
  /// Environment rules, applied in this order: start from our environment (or from nothing when
  /// `clearEnvironment`), remove the names in `unsetEnv`, then set every `setEnv` pair (overriding).
  bool clearEnvironment = false;
  std::vector<std::string> unsetEnv;
  std::vector<std::pair<std::string, std::string>> setEnv;
  Stream in = Stream::null(), out, err; ///< stdin defaults to /dev/null, stdout/stderr to ours
  /// Descriptors above stderr handed down to the child at the same number; all others are closed on exec.
  std::vector<int> keepFds;
  bool newProcessGroup =
      false;                 ///< the child leads a new process group (stopProcess(…, group) reaches it all)
  bool newSession = false;   ///< setsid(): a new session and process group, no controlling terminal
  int parentDeathSignal = 0; ///< PR_SET_PDEATHSIG; the child exits at once if we are already gone
  bool clearSignalMask = false; ///< start the program with no blocked signal
  bool defaultSignals = false;  ///< every signal's disposition back to default (ignored ones too)
  std::optional<std::pair<uid_t, gid_t>> runAs; ///< setgid + setuid before exec (needs privileges)
};

/// A started child: its PID and our ends of the streams asked for as StreamMode::Pipe (else -1). The caller
/// owns the descriptors and must reap the child (waitExit / tryWait / stopProcess).
struct Child {
  pid_t pid = -1;
  int stdinFd = -1;  ///< write end of the child's stdin pipe
  int stdoutFd = -1; ///< read end of the child's stdout pipe
  int stderrFd = -1; ///< read end of the child's stderr pipe
};

/// Starts a child. Errors name the program and the step that failed ("cannot start /x: No such file or
/// directory", "cannot change to directory …"); nothing is left running or open after an error.
llvm::Expected<Child> spawn(const SpawnOptions& options);

/// Waits for `pid` to end (EINTR-safe) and returns its raw wait status (-1 when it is not our child).
int waitExit(pid_t pid);
/// The raw wait status of `pid` if it has ended (and is reaped now), else nullopt.
std::optional<int> tryWait(pid_t pid);
/// An exit code for a wait status: the exit status, or 128 + the signal's number.
int exitCode(int status);
/// Sends `sig` to `pid` and waits up to `grace` for it to end; then SIGKILLs it (and its process group when
/// `group`) and reaps it. Returns its raw wait status.
int stopProcess(pid_t pid, int sig, std::chrono::milliseconds grace, bool group = false);

/// The full path of `name` found on PATH (a name with a '/' is checked as it is), "" when absent. Resolve
/// before spawn: the child performs no search.
std::string findOnPath(const std::string& name);

} // namespace inm::support
