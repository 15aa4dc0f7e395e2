/* baton's launcher in the standalone folder: a tiny static program that starts the real executable
 * (lib/baton-node, a Node single executable application) through the dynamic loader shipped beside it:
 *
 *   ROOT/baton ARGS...  ->  exec ROOT/lib/ld-linux-x86-64.so.2 --argv0 ROOT/baton --library-path ROOT/lib ROOT/lib/baton-node ARGS...
 *
 * (ld-linux-aarch64.so.1 on arm64: the loader's name is glibc's for the architecture the launcher is compiled for.)
 *
 * Why a launcher and not patchelf --set-interpreter: an ELF interpreter path must be absolute, which would pin the
 * folder to one install location, while `COPY --from`, `baton init DEST` and a shared volume each put it elsewhere.
 * --library-path reaches only the loader, not the environment, so the step's command keeps its own image's libraries.
 * argv0 is the launcher's absolute path: where /proc is missing, Node falls back to it for process.execPath.
 * Linked statically, so it needs no libc from the image. It execs (never forks): baton stays PID 1.
 *
 * The step's environment belongs to its command, not to baton, yet Node acts at start-up on the variables named for
 * it and for libuv (NODE_COMPILE_CACHE makes a folder, NODE_V8_COVERAGE writes files at exit, NODE_DEBUG, NODE_EXTRA_CA_CERTS,
 * NODE_REDIRECT_WARNINGS, NODE_CHANNEL_FD, UV_THREADPOOL_SIZE...). So Node is started without them: each NODE_* and UV_*
 * variable is handed on renamed BATON_KEPT_<name>, and BATON_KEPT=1 says so; baton gives them back their names in the
 * command's environment only (src/process/kept-env.ts). A variable of the step's own whose name starts with BATON_KEPT
 * is renamed the same way, so that the renaming is undone exactly. */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define KEPT "BATON_KEPT"

/* Whether the variable NAME=VALUE is kept from Node: its name starts with NODE_, UV_ or BATON_KEPT. */
static int kept_from_node(const char *entry) {
  return strncmp(entry, "NODE_", 5) == 0 || strncmp(entry, "UV_", 3) == 0 || strncmp(entry, KEPT, strlen(KEPT)) == 0;
}

/* The environment Node starts with: kept variables renamed BATON_KEPT_<entry>, then BATON_KEPT=1 (NULL: no memory). */
static char **node_environment(void) {
  size_t count = 0;
  while (environ[count]) count++;
  char **env = calloc(count + 2, sizeof *env);
  if (!env) return NULL;
  for (size_t i = 0; i < count; i++) {
    if (!kept_from_node(environ[i])) {
      env[i] = environ[i];
      continue;
    }
    size_t size = strlen(KEPT "_") + strlen(environ[i]) + 1;
    if (!(env[i] = malloc(size))) return NULL;
    snprintf(env[i], size, KEPT "_%s", environ[i]);
  }
  env[count] = KEPT "=1";
  return env;
}

#if defined(__x86_64__)
#define LOADER "ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define LOADER "ld-linux-aarch64.so.1"
#else
#error "no glibc loader name known for this architecture"
#endif

/* The launcher's own absolute path: /proc/self/exe where /proc is mounted, else argv[0] (a path, or a name on PATH). */
static int find_self(const char *argv0, char *out) {
  ssize_t n = readlink("/proc/self/exe", out, PATH_MAX - 1);
  if (n > 0) {
    out[n] = '\0';
    return 0;
  }
  if (strchr(argv0, '/')) return realpath(argv0, out) ? 0 : -1;
  const char *path = getenv("PATH");
  if (!path) path = "/usr/local/bin:/usr/bin:/bin";
  while (*path) {
    size_t len = strcspn(path, ":");
    char candidate[PATH_MAX];
    if (len > 0 && len + strlen(argv0) + 2 <= sizeof candidate) {
      memcpy(candidate, path, len);
      candidate[len] = '/';
      strcpy(candidate + len + 1, argv0);
      if (access(candidate, X_OK) == 0 && realpath(candidate, out)) return 0;
    }
    path += len;
    if (*path == ':') path++;
  }
  return -1;
}

/* NOW as JavaScript's toISOString writes it (2026-12-04T20:30:00.123Z). By hand, from the days since 1970 to the
 * Gregorian calendar: glibc's gmtime and strftime would link its time-zone and locale code into this static program
 * (150 KB more for one line of a file written only when baton cannot start). */
static void utc_time(struct timespec now, char *out, size_t size) {
  long long days = now.tv_sec / 86400, seconds = now.tv_sec % 86400;
  /* Eras of 400 years (146097 days) from 0000-03-01, so that a leap day is the last day of its year. */
  long long z = days + 719468, era = z / 146097, doe = z - era * 146097;
  long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
  long long day = doy - (153 * mp + 2) / 5 + 1, month = mp < 10 ? mp + 3 : mp - 9, year = yoe + era * 400 + (month <= 2);
  snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", (int)year, (int)month, (int)day, (int)(seconds / 3600),
           (int)(seconds / 60 % 60), (int)(seconds % 60), (int)(now.tv_nsec / 1000000));
}

/* The step's arguments, for write_post_err. */
static int step_argc;
static char **step_argv;

/* When baton cannot start, POST.err where a post file is named, as the bundle's guard writes it (scripts/bundle-guard.cjs):
 * the steps waiting on it then end instead of waiting for ever, since a baton that never ran made no liveness file
 * whose lock they could see let go. The post file is found as baton finds it when its options fail to parse
 * (src/cli/parse-args.ts findOptionValue, src/cli/tekton-argv.ts findTektonPostFile): the last --post-file or
 * -post_file (--post_file), given as NAME=VALUE or NAME VALUE, before `--`, in step mode (the first argument an option).
 * Written atomically into a folder that exists: O_EXCL and O_NOFOLLOW refuse a name a neighbour planted, never follow it.
 * Never a word about it: the line already printed says what failed. */
static void write_post_err(void) {
  if (step_argc < 2 || step_argv[1][0] != '-') return;
  const char *post = NULL;
  for (int i = 1; i < step_argc && strcmp(step_argv[i], "--") != 0; i++) {
    static const char *const names[] = {"--post-file", "-post_file", "--post_file"};
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
      size_t len = strlen(names[n]);
      if (strncmp(step_argv[i], names[n], len) != 0) continue;
      if (step_argv[i][len] == '=') post = step_argv[i] + len + 1;
      else if (step_argv[i][len] == '\0') post = i + 1 < step_argc ? step_argv[i + 1] : NULL;
    }
  }
  size_t len = post ? strlen(post) : 0;
  if (len == 0 || post[len - 1] == '/' || len + 64 > PATH_MAX) return;
  char final[PATH_MAX], temporary[PATH_MAX], at[96], body[256];
  snprintf(final, sizeof final, "%s.err", post);
  snprintf(temporary, sizeof temporary, "%s.err.%ld.tmp", post, (long)getpid());
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  utc_time(now, at, sizeof at);
  int size = snprintf(body, sizeof body, "{\"exitCode\":127,\"reason\":\"Error\",\"startedAt\":\"%s\",\"finishedAt\":\"%s\"}\n", at, at);
  int fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return;
  int whole = write(fd, body, (size_t)size) == size;
  close(fd);
  if (!whole || rename(temporary, final) != 0) unlink(temporary);
}

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "baton: %s: %s\n", what, detail);
  write_post_err();
  exit(127);
}

/* The signals baton listens to (FORWARDED_SIGNALS in src/process/signals.ts). Until a listener exists, each has its
 * default action, which for most is death: as PID 1 the kernel drops such a signal, but a baton that is not PID 1 (a
 * shared process namespace, `docker run` without --init) died of a SIGUSR1 that came in the first milliseconds, while
 * the loader mapped Node, with no post file. They are blocked here, first, and the mask goes through both execs: a
 * signal that comes meanwhile waits. Node's start then sets the mask itself (PlatformInit: only SIGUSR1 blocked, until
 * its own SIGUSR1 handler exists, whose inspector baton closes, src/process/inspector-guard.ts), so SIGUSR1 is held
 * until Node handles it, and the others are let through with their default action again, as for the bundle, until
 * baton's listeners exist (its first code). The command starts with an empty mask and default dispositions whatever
 * baton's are (posix_spawnattr in src/addon/addon.c). */
static void hold_signals(void) {
  static const int held[] = {SIGTERM, SIGINT,  SIGQUIT, SIGUSR1,   SIGUSR2,  SIGALRM, SIGSTKFLT, SIGCONT, SIGTSTP, SIGTTIN,
                             SIGTTOU, SIGURG, SIGXCPU, SIGVTALRM, SIGWINCH, SIGIO,   SIGPWR,    SIGABRT, SIGHUP};
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) sigaddset(&set, held[i]);
  sigprocmask(SIG_BLOCK, &set, NULL);
}

/* A copy of the folder cut short (a full disk, an interrupted cp) left lib/baton-node without its end: the loader then
 * died of SIGBUS as it touched a page past the end of the file, saying nothing, or said only that it "cannot read file
 * data". The ELF header says where the file's last part, the section header table, ends (and the program header
 * table, for a file without sections): a file shorter than that is cut short. One open, one read, one fstat. */
static void check_whole(const char *program) {
  int fd = open(program, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return; /* missing, unreadable: the exec says so */
  unsigned char header[64];
  struct stat st;
  ssize_t n = pread(fd, header, sizeof header, 0);
  int got_stat = fstat(fd, &st) == 0;
  close(fd);
  if (!got_stat || !S_ISREG(st.st_mode)) return;
  unsigned long long end = sizeof header;
  if (n == (ssize_t)sizeof header && memcmp(header, "\177ELF", 4) == 0 && header[4] == 2 /* 64-bit */ && header[5] == 1 /* LE */) {
    uint64_t phoff, shoff;
    uint16_t phentsize, phnum, shentsize, shnum;
    memcpy(&phoff, header + 0x20, 8);
    memcpy(&shoff, header + 0x28, 8);
    memcpy(&phentsize, header + 0x36, 2);
    memcpy(&phnum, header + 0x38, 2);
    memcpy(&shentsize, header + 0x3a, 2);
    memcpy(&shnum, header + 0x3c, 2);
    if (phoff + (uint64_t)phentsize * phnum > end) end = phoff + (uint64_t)phentsize * phnum;
    if (shoff + (uint64_t)shentsize * shnum > end) end = shoff + (uint64_t)shentsize * shnum;
  } else if (n == (ssize_t)sizeof header) {
    return; /* not an ELF file of this kind: the loader says what it is */
  }
  if ((unsigned long long)st.st_size < end) {
    fprintf(stderr, "baton: %s is cut short (%lld bytes of at least %llu): baton is not installed whole; copy the standalone folder again\n",
            program, (long long)st.st_size, end);
    write_post_err();
    exit(127);
  }
}

int main(int argc, char **argv) {
  hold_signals();
  step_argc = argc;
  step_argv = argv;
  const char *argv0 = argc > 0 && argv[0] ? argv[0] : "baton";
  char self[PATH_MAX];
  if (find_self(argv0, self) != 0) fail("cannot find the standalone folder (no /proc, argv[0] not found)", argv0);
  char root[PATH_MAX];
  strcpy(root, self);
  *strrchr(root, '/') = '\0';

  char loader[PATH_MAX + 32], libdir[PATH_MAX + 32], program[PATH_MAX + 32];
  snprintf(loader, sizeof loader, "%s/lib/" LOADER, root);
  snprintf(libdir, sizeof libdir, "%s/lib", root);
  snprintf(program, sizeof program, "%s/lib/baton-node", root);

  /* ld.so's --library-path is a list split at ':' (and ';'), with no escape: a folder whose path holds one is named
   * through a descriptor instead, /proc/self/fd/N (the same process after the exec). Not close-on-exec: the loader
   * needs it, and so does glibc later, when it loads a library by name (libgcc_s for thread cancellation). */
  if (strpbrk(libdir, ":;")) {
    int fd = open(libdir, O_PATH | O_DIRECTORY);
    if (fd < 0) fail("cannot open the standalone folder's lib/", strerror(errno));
    snprintf(libdir, sizeof libdir, "/proc/self/fd/%d", fd);
    if (access(libdir, X_OK) != 0) fail("the standalone folder's path holds ':' or ';' and /proc is not mounted; move it", root);
  }

  check_whole(program);

  char **args = calloc((size_t)argc + 6, sizeof *args);
  if (!args) fail("out of memory", argv0);
  int i = 0;
  args[i++] = loader;
  args[i++] = "--argv0";
  args[i++] = self;
  args[i++] = "--library-path";
  args[i++] = libdir;
  args[i++] = program;
  for (int k = 1; k < argc; k++) args[i++] = argv[k];
  args[i] = NULL;
  char **env = node_environment();
  if (!env) fail("out of memory", argv0);
  execve(loader, args, env);
  /* Renamed, each kept variable is 11 bytes longer: one within 11 bytes of the kernel's limit for a single string (128
   * KiB), or an environment within as much of its limit for them all, no longer fits (E2BIG: baton did not start, exit
   * 127, no post file, where the step's command would have). Node then starts with them under their own names, as the
   * bundle's does (docs/reference.md, "Node's variables"), and the command still gets each one unchanged. */
  if (errno == E2BIG) execve(loader, args, environ);
  fprintf(stderr, "baton: cannot start %s: %s (the launcher needs the lib/ folder it came with beside it)\n", loader,
          strerror(errno));
  write_post_err();
  return 127;
}
