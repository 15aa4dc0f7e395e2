// maxrss CMD [ARG...]: runs CMD and prints its lifetime peak RSS in KiB (wait4's ru_maxrss) and the CPU time it used,
// all threads, in microseconds (ru_utime + ru_stime, whose sum is the scheduler's exact runtime) on stderr.
// Used for `node -e ""`, which has no command of its own during which a probe could look, and by wake-cpu.mjs.
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  pid_t pid = fork();
  if (pid == 0) { execvp(argv[1], argv + 1); _exit(127); }
  int status; struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) return 1;
  fprintf(stderr, "maxrss %ld\n", ru.ru_maxrss);
  fprintf(stderr, "cpu_us %ld\n", (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
