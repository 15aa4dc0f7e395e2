// Signal-latency probe: installs a SIGTERM handler, says "ready" on stdout, then waits. The handler reads
// CLOCK_MONOTONIC first and writes it (ns) to argv[1], then exits 0.
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int out_fd = -1;

static void on_term(int sig) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  (void)sig;
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
  if (write(out_fd, buf, n) != n) _exit(1);
  _exit(0);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  out_fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out_fd < 0) return 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_term;
  sigaction(SIGTERM, &sa, NULL);
  if (write(1, "ready\n", 6) != 6) return 1;
  for (;;) pause();
}
