// pid1 DELAY_US -- CMD [ARG...]: runs CMD as PID 1 of a new PID (and mount) namespace with a fresh /proc,
// like `unshare --pid --fork --mount-proc`, and sends it SIGTERM DELAY_US microseconds after its execve
// succeeded (known exactly: a close-on-exec pipe reaches EOF). Prints "<status> <ms from exec to exit>".
// Status is the exit code, or 128+N if PID 1 died of signal N.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc < 4 || strcmp(argv[2], "--")) { fprintf(stderr, "usage: pid1 DELAY_US -- CMD...\n"); return 2; }
  long long delay_ns = atoll(argv[1]) * 1000LL;
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0 || unshare(CLONE_NEWPID | CLONE_NEWNS) < 0) { perror("pid1"); return 1; }
  pid_t pid = fork();
  if (pid < 0) { perror("fork"); return 1; }
  if (pid == 0) {
    close(p[0]);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) { perror("mount"); _exit(1); }
    execvp(argv[3], argv + 3);
    _exit(127);
  }
  close(p[1]);
  char c;
  while (read(p[0], &c, 1) > 0) {}
  long long exec_ns = now_ns();
  if (delay_ns >= 0) {
    long long at = exec_ns + delay_ns;
    struct timespec ts = { at / 1000000000LL, at % 1000000000LL };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) {}
    kill(pid, SIGTERM);
  }
  int status;
  waitpid(pid, &status, 0);
  long long end_ns = now_ns();
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  printf("%d %.3f\n", code, (end_ns - exec_ns) / 1e6);
  return 0;
}
