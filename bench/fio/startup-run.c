// SPDX-License-Identifier: GPL-2.0-only
/*
 * startup-run: one cold start-up of a program in a chroot, timed.
 *
 *   startup-run ROOT PROG [ARG...]
 *
 * Drops the page cache (echo 3 > /proc/sys/vm/drop_caches; no sync: the
 * app's files are clean, the writers' dirty pages stay), then forks, chroots
 * into ROOT, execs PROG and waits. Prints "<wall_us> <majflt> <status>" on
 * stdout: wall-clock from just before fork to the child's exit, and the
 * child's major faults.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	struct rusage ru;
	int fd, status = 0, devnull;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: startup-run ROOT PROG [ARG...]\n");
		return 2;
	}
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0 || write(fd, "3\n", 2) != 2) {
		perror("drop_caches");
		return 1;
	}
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	if (pid == 0) {
		devnull = open("/dev/null", O_WRONLY);
		if (chroot(argv[1]) || chdir("/")) {
			perror("chroot");
			_exit(127);
		}
		if (devnull >= 0) {
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		execv(argv[2], argv + 2);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid) {
		perror("fork/wait");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%lld %ld %d\n", (long long)(b.tv_sec - a.tv_sec) * 1000000 +
	       (b.tv_nsec - a.tv_nsec) / 1000, ru.ru_majflt,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}
