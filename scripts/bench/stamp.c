// "Command started" probe: reads CLOCK_MONOTONIC before anything else, then writes it (ns) to argv[1].
// Static, so no dynamic loader runs before the clock is read. The bench compares it with
// process.hrtime.bigint(), which is the same clock in every process on Linux.
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  if (argc < 2) return 2;
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, buf, n) != n) return 1;
  return 0;
}
