// Argo's emissary's reaping, for the bench's reference (row 9): starts the command, then reaps as Argo's
// osspecific.Wait does (workflow/executor/osspecific/signal_darwin.go, which Linux uses too): wait4(-1, WNOHANG) in a
// loop that sleeps one second between tries, then writes the exit code in place, as its deferred os.WriteFile does.
//   argoreap EXITCODE-FILE COMMAND ARGS...
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  pid_t pid = fork();
  if (pid < 0) return 64;
  if (pid == 0) {
    setpgid(0, 0);
    execvp(argv[2], argv + 2);
    _exit(127);
  }
  int code = 64;
  for (;;) {
    int status;
    pid_t reaped = waitpid(-1, &status, WNOHANG);
    if (reaped < 0) break;
    if (reaped == pid && (WIFEXITED(status) || WIFSIGNALED(status))) {
      code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    sleep(1);
  }
  char text[16];
  int n = snprintf(text, sizeof text, "%d", code);
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, text, n) != n) return 64;
  close(fd);
  return code;
}
