// baton-reaper.node: the system calls Node does not expose: the three that reaping orphans needs, flock() for the
// liveness lock (src/handoff/liveness-lock.ts), _exit, the command's spawn (src/run/start-process.ts), and
// (wait-events.c) what a waiting baton blocks on.
// Plain Node-API (C, no C++ runtime), so one build loads into every Node >= 20 and into the standalone build.
// Every function here returns at once (WNOHANG); the policy (which pid to reap, when to look again) lives in
// src/run/reaper.ts, on the main thread, never inside a signal handler.
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "signal-relay.h"
#include "wait-events.h"

static napi_value throw_errno(napi_env env, const char *syscall) {
  char message[160];
  int err = errno;
  strncpy(message, syscall, sizeof message - 1);
  message[sizeof message - 1] = '\0';
  strncat(message, ": ", sizeof message - strlen(message) - 1);
  strncat(message, strerror(err), sizeof message - strlen(message) - 1);
  napi_throw_error(env, NULL, message);
  return NULL;
}

static napi_value int_value(napi_env env, int value) {
  napi_value result;
  napi_create_int32(env, value, &result);
  return result;
}

// peekExited(): the pid of a child that has exited and is not reaped yet, without reaping it (WNOWAIT),
// so a child that libuv is about to reap keeps its exit status. 0 when no child has exited or there is none.
static napi_value peek_exited(napi_env env, napi_callback_info info) {
  (void)info;
  siginfo_t child;
  memset(&child, 0, sizeof child);  // si_pid stays 0 when WNOHANG finds nothing
  int rc;
  do rc = waitid(P_ALL, 0, &child, WEXITED | WNOHANG | WNOWAIT);
  while (rc == -1 && errno == EINTR);
  if (rc == -1) return errno == ECHILD ? int_value(env, 0) : throw_errno(env, "waitid");
  return int_value(env, child.si_pid);
}

// reap(pid): collect the exit status of that one child. Returns pid when reaped, 0 when it has not exited,
// -1 when it is not (or no longer) a child of this process.
static napi_value reap(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t pid = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_int32(env, argv[0], &pid) != napi_ok || pid <= 0) {
    napi_throw_type_error(env, NULL, "reap(pid): pid must be a positive integer");
    return NULL;
  }
  int status, rc;
  do rc = waitpid(pid, &status, WNOHANG);
  while (rc == -1 && errno == EINTR);
  if (rc == -1) return errno == ECHILD ? int_value(env, -1) : throw_errno(env, "waitpid");
  return int_value(env, rc);
}

// becomeSubreaper(): orphans of our descendants are re-parented to us instead of to PID 1 (Linux >= 3.4).
static napi_value become_subreaper(napi_env env, napi_callback_info info) {
  (void)info;
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1) return throw_errno(env, "prctl(PR_SET_CHILD_SUBREAPER)");
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  return undefined;
}

// flock(fd, operation): 0 on success, else the errno (EWOULDBLOCK: another process holds a conflicting lock).
// The caller passes LOCK_NB: this never blocks the main thread.
static napi_value flock_fd(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t fd = -1, operation = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok || napi_get_value_int32(env, argv[1], &operation) != napi_ok ||
      fd < 0 || (operation & LOCK_NB) == 0) {
    napi_throw_type_error(env, NULL, "flock(fd, operation): a descriptor and an operation with LOCK_NB");
    return NULL;
  }
  int rc;
  do rc = flock(fd, operation);
  while (rc == -1 && errno == EINTR);
  return int_value(env, rc == -1 ? errno : 0);
}

// A copy of a Buffer's bytes, NUL-terminated (malloc'd; NULL when it is not a Buffer or holds a NUL).
static char *buffer_string(napi_env env, napi_value value) {
  void *data;
  size_t length;
  bool is_buffer = false;
  if (napi_is_buffer(env, value, &is_buffer) != napi_ok || !is_buffer) return NULL;
  if (napi_get_buffer_info(env, value, &data, &length) != napi_ok || memchr(data, 0, length) != NULL) return NULL;
  char *copy = malloc(length + 1);
  if (copy == NULL) return NULL;
  memcpy(copy, data, length);
  copy[length] = '\0';
  return copy;
}

static void free_strings(char **strings) {
  if (strings == NULL) return;
  for (char **s = strings; *s != NULL; s++) free(*s);
  free(strings);
}

// A NULL-terminated vector of copies of an array of Buffers; NULL when one is not a Buffer.
static char **buffer_strings(napi_env env, napi_value array) {
  uint32_t count = 0;
  if (napi_get_array_length(env, array, &count) != napi_ok) return NULL;
  char **strings = calloc((size_t)count + 1, sizeof *strings);
  if (strings == NULL) return NULL;
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    if (napi_get_element(env, array, i, &element) != napi_ok || (strings[i] = buffer_string(env, element)) == NULL) {
      free_strings(strings);
      return NULL;
    }
  }
  return strings;
}

// posix_spawn(p) of file in a session of its own (setsid, as child_process's detached), every signal at its default
// and none blocked, stdio inherited: 0 or an errno (exec's failure included: glibc reports it).
// Every signal means every bit of the set, the C library's own signals too (32 and 33 in glibc, 32-34 in musl): the
// child of posix_spawn sets each signal that is not in the default set and that the library keeps for itself to
// SIG_IGN, and an ignored signal stays ignored across exec, so the command would start with them ignored (SigIgn
// 0000000180000000 in /proc/PID/status) where tini, Tekton's and Argo's entrypoints leave none. sigfillset and
// sigaddset refuse those signals; posix_spawnattr_setsigdefault copies the set as it is and the child tests each bit,
// so the bits are set by hand. (SIGKILL and SIGSTOP in the set are harmless: their sigaction fails, unseen.)
// pipes[1] and pipes[2], when not -1, are the write ends that become the command's stdout and stderr.
static int spawn_in_session(pid_t *pid, const char *file, char *const argv[], char *const envp[], int search_path,
                            const int pipes[3]) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, none;
  memset(&defaults, 0xff, sizeof defaults);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  // Node may hold its stdio close-on-exec: dup2 of a descriptor onto itself clears that in the child (POSIX 2018).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd = 0; fd <= 2; fd++) posix_spawn_file_actions_adddup2(&actions, pipes[fd] == -1 ? fd : pipes[fd], fd);
  int rc = search_path ? posix_spawnp(pid, file, &actions, &attr, argv, envp)
                       : posix_spawn(pid, file, &actions, &attr, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc;
}

// The file posix_spawnp tried: file itself when it holds a slash, else the first executable regular file of that
// name in PATH (glibc's default without one). 0, or ENOEXEC when there is none (then nothing else is tried).
static int found_in_path(const char *file, char *out, size_t size) {
  if (strchr(file, '/') != NULL) return snprintf(out, size, "%s", file) < (int)size ? 0 : ENOEXEC;
  const char *path = getenv("PATH");
  if (path == NULL) path = "/bin:/usr/bin";
  for (const char *dir = path;; dir++) {
    const char *end = strchrnul(dir, ':');
    int len = (int)(end - dir); // an empty entry is the current folder, as for execvp
    struct stat st;
    if (snprintf(out, size, "%.*s%s%s", len, dir, len ? "/" : "", file) < (int)size && access(out, X_OK) == 0 &&
        stat(out, &st) == 0 && S_ISREG(st.st_mode))
      return 0;
    if (*end == '\0') return ENOEXEC;
    dir = end;
  }
}

// True when the file starts as an ELF binary does: one the kernel refused (another architecture's) is no script.
static bool is_elf(const char *path) {
  char magic[4] = {0};
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd == -1) return false;
  ssize_t n = read(fd, magic, sizeof magic);
  close(fd);
  return n == (ssize_t)sizeof magic && memcmp(magic, "\x7f" "ELF", 4) == 0;
}

// A file the kernel will not execute (ENOEXEC: a script with no #! line) runs under /bin/sh, as execvp, and so
// Node's child_process, tini and every shell run it: argv becomes /bin/sh FILE ARGS... Not an ELF binary (another
// architecture's): the shell would read its bytes as commands; it stays ENOEXEC, as bash says of it.
static int spawn_as_script(pid_t *pid, const char *file, char *const argv[], char *const envp[], const int pipes[3]) {
  char path[4096];
  if (found_in_path(file, path, sizeof path) != 0 || is_elf(path)) return ENOEXEC;
  size_t count = 0;
  while (argv[count] != NULL) count++;
  char **shell_argv = calloc(count + 2, sizeof *shell_argv);
  if (shell_argv == NULL) return ENOMEM;
  shell_argv[0] = "/bin/sh";
  shell_argv[1] = path;
  for (size_t i = 1; i < count; i++) shell_argv[i + 1] = argv[i];
  int rc = spawn_in_session(pid, "/bin/sh", shell_argv, envp, 0, pipes);
  free(shell_argv);
  return rc;
}

// What spawnWith's flags ask for.
#define SPAWN_PIPE_STDOUT 1
#define SPAWN_PIPE_STDERR 2
#define SPAWN_NO_SHELL 4

static void close_pipes(int read_ends[3], int write_ends[3]) {
  for (int fd = 1; fd <= 2; fd++) {
    if (read_ends[fd] != -1) close(read_ends[fd]);
    if (write_ends[fd] != -1) close(write_ends[fd]);
    read_ends[fd] = write_ends[fd] = -1;
  }
}

// The command from exactly these bytes (Buffers), which Node's spawn cannot take (src/run/exact-bytes.ts): PATH
// searched as execvp does; a file the kernel will not execute (no #! line) run by /bin/sh, unless flags has
// SPAWN_NO_SHELL (Tekton's and Argo's modes: Go's exec does not, src/run/start-process.ts). With SPAWN_PIPE_STDOUT or
// SPAWN_PIPE_STDERR that descriptor is a pipe (output capture) whose read end is returned, close-on-exec, for the
// event loop to read; the rest of stdio is inherited. [pid or -errno, stdout's read end or -1, stderr's or -1]. The
// exit status is collected with waitStatus(), raw: a death by a real-time signal, which Node's child_process reports
// as exit code 0, is told as what it is.
static napi_value spawn_with(napi_env env, char *file, char **argv, char **envp, int32_t flags) {
  int read_ends[3] = {-1, -1, -1}, write_ends[3] = {-1, -1, -1};
  int rc = 0;
  for (int fd = 1; fd <= 2 && rc == 0; fd++) {
    if (!(flags & (fd == 1 ? SPAWN_PIPE_STDOUT : SPAWN_PIPE_STDERR))) continue;
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) == -1) rc = errno;
    else read_ends[fd] = ends[0], write_ends[fd] = ends[1];
  }
  pid_t pid = 0;
  if (rc == 0) rc = spawn_in_session(&pid, file, argv, envp, 1, write_ends);
  if (rc == ENOEXEC && !(flags & SPAWN_NO_SHELL)) rc = spawn_as_script(&pid, file, argv, envp, write_ends);
  for (int fd = 1; fd <= 2; fd++) {
    if (write_ends[fd] != -1) close(write_ends[fd]);
    write_ends[fd] = -1;
  }
  if (rc != 0) close_pipes(read_ends, write_ends);
  free(file);
  free_strings(argv);
  free_strings(envp);
  napi_value result;
  napi_create_array_with_length(env, 3, &result);
  napi_set_element(env, result, 0, int_value(env, rc == 0 ? (int)pid : -rc));
  napi_set_element(env, result, 1, int_value(env, read_ends[1]));
  napi_set_element(env, result, 2, int_value(env, read_ends[2]));
  return result;
}

// The Buffers of (file, argv, envp) as C strings; false (a TypeError thrown) when one is not a Buffer or holds a NUL.
static bool launch_strings(napi_env env, napi_value args[3], char **file, char ***argv, char ***envp) {
  *file = buffer_string(env, args[0]);
  *argv = buffer_strings(env, args[1]);
  *envp = buffer_strings(env, args[2]);
  if (*file != NULL && *argv != NULL && *envp != NULL && (*argv)[0] != NULL) return true;
  free(*file);
  free_strings(*argv);
  free_strings(*envp);
  napi_throw_type_error(env, NULL, "spawn(file, argv, envp): Buffers without NUL bytes");
  return false;
}

// spawnBytes(file, argv, envp): spawnWith with stdio inherited and the /bin/sh fallback; the pid, or -errno. (The
// first form; kept for a bundle that meets this addon.)
static napi_value spawn_bytes(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value args[3];
  char *file, **argv, **envp;
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || argc < 3) {
    napi_throw_type_error(env, NULL, "spawnBytes(file, argv, envp): Buffers without NUL bytes");
    return NULL;
  }
  if (!launch_strings(env, args, &file, &argv, &envp)) return NULL;
  napi_value result = spawn_with(env, file, argv, envp, 0), pid;
  napi_get_element(env, result, 0, &pid);
  return pid;
}

// spawnWith(file, argv, envp, flags): see spawn_with.
static napi_value spawn_with_flags(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value args[4];
  int32_t flags = 0;
  char *file, **argv, **envp;
  if (napi_get_cb_info(env, info, &argc, args, NULL, NULL) != napi_ok || argc < 4 ||
      napi_get_value_int32(env, args[3], &flags) != napi_ok) {
    napi_throw_type_error(env, NULL, "spawnWith(file, argv, envp, flags): Buffers without NUL bytes, and flags");
    return NULL;
  }
  if (!launch_strings(env, args, &file, &argv, &envp)) return NULL;
  return spawn_with(env, file, argv, envp, flags);
}

// waitStatus(pid): waitpid(pid, WNOHANG) for a child spawnBytes started: -1 while it runs, -2 when it is not (or no
// longer) a child of ours, else the raw wait status (exit code in bits 8-15, or the signal in bits 0-6).
static napi_value wait_status(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t pid = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_int32(env, argv[0], &pid) != napi_ok || pid <= 0) {
    napi_throw_type_error(env, NULL, "waitStatus(pid): pid must be a positive integer");
    return NULL;
  }
  int status = 0, rc;
  do rc = waitpid(pid, &status, WNOHANG);
  while (rc == -1 && errno == EINTR);
  if (rc == -1) return errno == ECHILD ? int_value(env, -2) : throw_errno(env, "waitpid");
  return int_value(env, rc == 0 ? -1 : status & 0xffff);
}

// _exit(code): baton's last act, once everything is written. process.exit() first shuts down Node's platform, joining
// its worker threads, and a V8 worker parked in a concurrent compile waiting for a main-thread GC deadlocks that join
// (nodejs/node#54918, still open; seen here on Node 24 after a 200 MiB capture, baton stuck at exit for good).
static napi_value exit_now(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t code = 1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc >= 1) napi_get_value_int32(env, argv[0], &code);
  _exit(code & 0xff);
}

// trimMemory(): malloc_trim(0), where the C library has it (glibc; a weak reference, so the addon still loads on one
// without it): the pages that start-up freed go back to the kernel, in every arena, not only at the top of the main
// heap (glibc's automatic trim). 1 when some went back, else 0.
extern int malloc_trim(size_t pad) __attribute__((weak));

static napi_value trim_memory(napi_env env, napi_callback_info info) {
  (void)info;
  return int_value(env, malloc_trim != NULL ? malloc_trim(0) : 0);
}

// stopBaselineCompiler(): V8's baseline compiler (Sparkplug) off for the rest of the process (why and when:
// src/process/baseline-compiler.ts). Through v8::V8::SetFlagsFromString(const char*), V8's embedder API, which every
// Node binary exports for C++ addons and which node:v8's setFlagsFromString calls; found by its exported name, so that
// a Node without it only means no change. 1 when the flag was set, 0 when the function was not found.
static napi_value stop_baseline_compiler(napi_env env, napi_callback_info info) {
  (void)info;
  void (*set_flags)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "_ZN2v82V818SetFlagsFromStringEPKc");
  if (set_flags == NULL) return int_value(env, 0);
  set_flags("--no-sparkplug");
  return int_value(env, 1);
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"peekExited", NULL, peek_exited, NULL, NULL, NULL, napi_enumerable, NULL},
      {"reap", NULL, reap, NULL, NULL, NULL, napi_enumerable, NULL},
      {"becomeSubreaper", NULL, become_subreaper, NULL, NULL, NULL, napi_enumerable, NULL},
      {"flock", NULL, flock_fd, NULL, NULL, NULL, napi_enumerable, NULL},
      {"exitNow", NULL, exit_now, NULL, NULL, NULL, napi_enumerable, NULL},
      {"spawnBytes", NULL, spawn_bytes, NULL, NULL, NULL, napi_enumerable, NULL},
      {"spawnWith", NULL, spawn_with_flags, NULL, NULL, NULL, napi_enumerable, NULL},
      {"waitStatus", NULL, wait_status, NULL, NULL, NULL, napi_enumerable, NULL},
      {"trimMemory", NULL, trim_memory, NULL, NULL, NULL, napi_enumerable, NULL},
      {"stopBaselineCompiler", NULL, stop_baseline_compiler, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
  define_wait_functions(env, exports);
  define_signal_relay(env, exports);
  define_liveness_functions(env, exports);
  return exports;
}

NAPI_MODULE(baton_reaper, init)
