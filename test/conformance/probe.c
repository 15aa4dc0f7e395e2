/*
 * The command of every conformance scenario: it does what its arguments say, in order, and reports what it saw, so
 * that a run under a real peer and a run under baton can be compared on what the command itself observed.
 *
 *   probe [ACTION...]
 *     report          append one JSON line to $PROBE_OUT: argv, environment, working folder, umask, signal
 *                     dispositions (SigIgn, SigCgt) and mask (SigBlk), the open descriptors and where they lead, pid
 *     out TEXT        write TEXT and a newline to stdout (err TEXT: to stderr)
 *     file PATH TEXT  write TEXT to PATH (created 0644, truncated)
 *     sleep MS        sleep MS milliseconds (interrupted by a caught signal: it goes on sleeping what is left)
 *     catch MS        catch every catchable signal for MS milliseconds; each one is appended to $PROBE_OUT as
 *                     {"signal":N,"ms":T} (T: since the probe started), then the probe goes on
 *     listen READY STOP  catch every catchable signal, each appended to $PROBE_OUT the moment it arrives (by the
 *                     handler, so that a test can wait for it and a later SIGKILL loses none), create READY once
 *                     the handlers are in place, and go on once STOP exists
 *     ready PATH      create PATH (empty), to tell a test the probe has reached this point
 *     trap            catch every catchable signal from now on, recording each one as `catch` does
 *     await MS        sleep until a signal other than SIGURG has been caught since `trap`, or MS milliseconds have
 *                     passed
 *     caught          append the signals caught since `trap` to $PROBE_OUT as `catch` does; dispositions back to default
 *     clock           append {"clock":T} to $PROBE_OUT, T: the wall clock (CLOCK_REALTIME) in milliseconds, so that a
 *                     test can tell how long after this point the probe ended (killed by a signal it cannot catch)
 *     kill SIG        send itself signal SIG (a number) with its default disposition
 *     stop            ignore the words after it (data the command was given, such as a `$(steps...)` value)
 *     exit N          exit with N
 *     exec PROG ARG...  set every signal's disposition to its default and unblock them all, then execute PROG with
 *                     the rest (so that what runs starts as a container's PID 1 does, whatever started the test:
 *                     GNU make's posix_spawn leaves signal 32 ignored, and glibc's sigaction refuses to reset 32
 *                     and 33, hence the raw system call)
 *   Without an exit action the probe exits 0.
 *
 * Plain C and static (the tests build it with `cc -static`), so that it runs in a busybox-only root as well.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;
static struct timespec started;
static volatile sig_atomic_t caught[65];
static volatile sig_atomic_t caught_order[1024];
static volatile sig_atomic_t caught_ms[1024];
static volatile sig_atomic_t n_caught;
static int live_fd = -1;

static long since_start_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - started.tv_sec) * 1000 + (now.tv_nsec - started.tv_nsec) / 1000000;
}

/* A JSON string: every byte below 0x20, the quote and the backslash escaped; other bytes as they are. */
static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

/* The value of a "Name:\tvalue" line of /proc/self/status. */
static void status_field(const char *name, char *value, size_t size) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[512];
  size_t n = strlen(name);
  value[0] = 0;
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, name, n) == 0 && line[n] == ':') {
      char *v = line + n + 1;
      while (*v == '\t' || *v == ' ') v++;
      v[strcspn(v, "\n")] = 0;
      snprintf(value, size, "%s", v);
      break;
    }
  }
  fclose(f);
}

static FILE *out_file(void) {
  const char *path = getenv("PROBE_OUT");
  if (!path) return NULL;
  return fopen(path, "a");
}

static void report(int argc, char **argv) {
  FILE *f = out_file();
  char value[4200], cwd[4096], link[4096], path[64];
  if (!f) return;
  fputs("{\"argv\":[", f);
  for (int i = 0; i < argc; i++) {
    if (i) fputc(',', f);
    json_string(f, argv[i]);
  }
  fputs("],\"env\":[", f);
  for (char **e = environ; *e; e++) {
    if (e != environ) fputc(',', f);
    json_string(f, *e);
  }
  fputs("],\"cwd\":", f);
  json_string(f, getcwd(cwd, sizeof cwd) ? cwd : "");
  const char *fields[] = {"Umask", "SigBlk", "SigIgn", "SigCgt", "NoNewPrivs"};
  for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
    status_field(fields[i], value, sizeof value);
    fprintf(f, ",\"%s\":", fields[i]);
    json_string(f, value);
  }
  fprintf(f, ",\"pid\":%d,\"ppid\":%d,\"pgid\":%d,\"sid\":%d,\"fds\":{", (int)getpid(), (int)getppid(), (int)getpgrp(), (int)getsid(0));
  DIR *d = opendir("/proc/self/fd");
  int dfd = d ? dirfd(d) : -1, first = 1;
  int outfd = fileno(f);
  struct dirent *ent;
  while (d && (ent = readdir(d))) {
    if (ent->d_name[0] == '.') continue;
    int fd = atoi(ent->d_name);
    if (fd == dfd || fd == outfd) continue;
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, link, sizeof link - 1);
    link[n < 0 ? 0 : n] = 0;
    int flags = fcntl(fd, F_GETFL);
    snprintf(value, sizeof value, "%s %s", link, (flags & O_ACCMODE) == O_RDONLY ? "r" : (flags & O_ACCMODE) == O_WRONLY ? "w" : "rw");
    fprintf(f, "%s\"%d\":", first ? "" : ",", fd);
    json_string(f, value);
    first = 0;
  }
  if (d) closedir(d);
  fputs("}}\n", f);
  fclose(f);
}

/* Appends {"signal":N,"ms":T} to live_fd with write(2) alone: called from a signal handler. */
static void write_live(int sig) {
  char line[64], digits[24];
  size_t n = 0;
  long values[2] = {sig, since_start_ms()};
  const char *parts[3] = {"{\"signal\":", ",\"ms\":", "}\n"};
  for (int k = 0; k < 3; k++) {
    for (const char *p = parts[k]; *p; p++) line[n++] = *p;
    if (k == 2) break;
    long v = values[k];
    int d = 0;
    do { digits[d++] = (char)('0' + v % 10); v /= 10; } while (v > 0);
    while (d > 0) line[n++] = digits[--d];
  }
  ssize_t w = write(live_fd, line, n);
  (void)w;
}

static void on_signal(int sig) {
  if (live_fd >= 0) {
    int saved = errno;
    write_live(sig);
    errno = saved;
    return;
  }
  if (sig > 0 && sig < 65) caught[sig]++;
  if (n_caught < 1024) {
    caught_order[n_caught] = sig;
    caught_ms[n_caught] = (sig_atomic_t)since_start_ms();
    n_caught++;
  }
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) == -1 && errno == EINTR) {}
}

static void set_dispositions(void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  for (int sig = 1; sig < 65; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    sigaction(sig, &sa, NULL);
  }
}

/* Whether a signal other than SIGURG has been caught: Go's runtime sends SIGURG to its own threads to preempt them, and
 * a Go wrapper that forwards every signal (Tekton's entrypoint) passes some on at random moments. */
static int caught_other_than_urg(void) {
  for (int i = 0; i < n_caught; i++) if (caught_order[i] != SIGURG) return 1;
  return 0;
}

/* Sleeps until a signal (not SIGURG) has been caught or `ms` have passed: a signal interrupts nanosleep (no
 * SA_RESTART). */
static void await_signal(long ms) {
  long deadline = since_start_ms() + ms;
  for (long left = ms; !caught_other_than_urg() && left > 0; left = deadline - since_start_ms()) {
    struct timespec t = {left / 1000, (left % 1000) * 1000000L};
    nanosleep(&t, NULL);
  }
}

static void write_caught(void);

static void catch_for(long ms) {
  set_dispositions(on_signal);
  n_caught = 0;
  sleep_ms(ms);
  write_caught();
}

static void write_caught(void) {
  set_dispositions(SIG_DFL);
  FILE *f = out_file();
  if (!f) return;
  for (int i = 0; i < n_caught; i++) fprintf(f, "{\"signal\":%d,\"ms\":%d}\n", (int)caught_order[i], (int)caught_ms[i]);
  fclose(f);
}

static void listen_until(const char *ready, const char *stop) {
  const char *path = getenv("PROBE_OUT");
  if (path) live_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig = 1; sig < 65; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    sigaction(sig, &sa, NULL);
  }
  close(open(ready, O_WRONLY | O_CREAT, 0644));
  while (access(stop, F_OK) != 0) sleep_ms(5);
  sa.sa_handler = SIG_DFL;
  for (int sig = 1; sig < 65; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    sigaction(sig, &sa, NULL);
  }
  if (live_fd >= 0) close(live_fd);
  live_fd = -1;
}

/* The kernel's struct sigaction for rt_sigaction(2): handler, flags, restorer, mask (8 bytes for 64 signals). */
struct kernel_sigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)(void);
  unsigned long mask;
};

static int exec_clean(char **argv) {
  struct kernel_sigaction dfl = {SIG_DFL, 0, NULL, 0};
  for (int sig = 1; sig < 65; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof dfl.mask);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  execvp(argv[0], argv);
  fprintf(stderr, "probe: exec %s: %s\n", argv[0], strerror(errno));
  return 127;
}

int main(int argc, char **argv) {
  clock_gettime(CLOCK_MONOTONIC, &started);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : "";
    if (strcmp(a, "report") == 0) report(argc, argv);
    else if (strcmp(a, "out") == 0) { printf("%s\n", v); fflush(stdout); i++; }
    else if (strcmp(a, "err") == 0) { fprintf(stderr, "%s\n", v); i++; }
    else if (strcmp(a, "file") == 0 && i + 2 < argc) {
      int fd = open(v, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) { ssize_t w = write(fd, argv[i + 2], strlen(argv[i + 2])); (void)w; close(fd); }
      i += 2;
    }
    else if (strcmp(a, "sleep") == 0) { sleep_ms(atol(v)); i++; }
    else if (strcmp(a, "catch") == 0) { catch_for(atol(v)); i++; }
    else if (strcmp(a, "listen") == 0 && i + 2 < argc) { listen_until(v, argv[i + 2]); i += 2; }
    else if (strcmp(a, "ready") == 0) { close(open(v, O_WRONLY | O_CREAT, 0644)); i++; }
    else if (strcmp(a, "kill") == 0) {
      int sig = atoi(v);
      signal(sig, SIG_DFL);
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, sig);
      sigprocmask(SIG_UNBLOCK, &set, NULL);
      kill(getpid(), sig);
      i++;
    }
    else if (strcmp(a, "trap") == 0) { n_caught = 0; set_dispositions(on_signal); }
    else if (strcmp(a, "await") == 0) { await_signal(atol(v)); i++; }
    else if (strcmp(a, "caught") == 0) write_caught();
    else if (strcmp(a, "clock") == 0) {
      struct timespec now;
      clock_gettime(CLOCK_REALTIME, &now);
      FILE *f = out_file();
      if (f) { fprintf(f, "{\"clock\":%lld}\n", (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000); fclose(f); }
    }
    else if (strcmp(a, "stop") == 0) break;
    else if (strcmp(a, "exit") == 0) return atoi(v);
    else if (strcmp(a, "exec") == 0 && i + 1 < argc) return exec_clean(argv + i + 1);
    else { fprintf(stderr, "probe: unknown action %s\n", a); return 99; }
  }
  return 0;
}
