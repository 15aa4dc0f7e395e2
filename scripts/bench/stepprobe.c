// A chain step's command: stamps CLOCK_MONOTONIC (ns) into argv[1] first thing (it started), then into argv[2] just
// before it exits (its last instruction but the write and _exit), so the bench can time step N's exit -> step N+1's
// start. With argv[3], it sleeps that many milliseconds in between (a command that takes a while, as real steps do).
// Static, like stamp.c: no dynamic loader before the first clock read.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int stamp(const char *path) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  return fd >= 0 && write(fd, buf, n) == n && close(fd) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  if (stamp(argv[1])) return 1;
  if (argc > 3) {
    long ms = strtol(argv[3], NULL, 10);
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&pause, &pause) != 0) {
    }
  }
  _exit(stamp(argv[2]));
}
