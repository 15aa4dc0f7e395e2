// maxrss CMD [ARG...]: runs CMD and prints its lifetime peak RSS in KiB (wait4's ru_maxrss) on stderr.
// Used for `node -e ""`, which has no command of its own during which a probe could look.
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
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
