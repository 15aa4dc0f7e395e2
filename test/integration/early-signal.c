/* early-signal SIGNAL OFFSET_US EXE PROGRAM [ARG...]: starts PROGRAM, waits until the process runs a file whose path
 * ends with EXE (/proc/PID/exe: a launcher that execs another program has got that far), then OFFSET_US microseconds
 * more, sends SIGNAL, waits for the process and prints how it ended ("exit N" or "signal N"). The offsets count from a
 * point the process has provably reached, not from the fork: on a loaded machine a process may not run for
 * milliseconds after its exec, and a signal then would test the scheduler. The wait is a busy loop, since a sleep
 * would be late by the scheduler's slack. For sea-early-signal.test.ts, which compiles it. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

/* 1 when /proc/PID/exe ends with suffix, 0 when not yet, -1 when the process is gone. */
static int runs(pid_t pid, const char *suffix) {
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 0) return waitpid(pid, NULL, WNOHANG) == 0 ? 0 : -1;
  target[n] = '\0';
  size_t length = strlen(suffix);
  return (size_t)n >= length && strcmp(target + n - length, suffix) == 0;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: early-signal SIGNAL OFFSET_US EXE PROGRAM [ARG...]\n");
    return 2;
  }
  int sig = atoi(argv[1]);
  long long offset = atoll(argv[2]);
  pid_t pid = fork();
  if (pid < 0) return 2;
  if (pid == 0) {
    execv(argv[4], argv + 4);
    _exit(127);
  }
  int state;
  while ((state = runs(pid, argv[3])) == 0) {
  }
  if (state < 0) {
    fprintf(stderr, "early-signal: the process ended before it ran %s\n", argv[3]);
    return 2;
  }
  long long start = now_us();
  while (now_us() - start < offset) {
  }
  kill(pid, sig);
  int status;
  if (waitpid(pid, &status, 0) < 0) return 2;
  if (WIFSIGNALED(status)) printf("signal %d\n", WTERMSIG(status));
  else printf("exit %d\n", WEXITSTATUS(status));
  return 0;
}
