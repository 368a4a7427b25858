// SPDX-License-Identifier: GPL-2.0-only
/*
 * capdrop: run a command as root without some capabilities, to show which
 * capability a kernel interface checks.
 *
 *	capdrop CAP[,CAP...] CMD [ARGS...]
 *
 * CAP is sys_admin, net_admin or dac_override (the ones the tests need).
 * Each is dropped from the bounding set (prctl(PR_CAPBSET_DROP)), so the
 * exec of CMD as root gets every capability but those. Exit: CMD's, or
 * 2 on usage errors, 1 when a drop or the exec failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static int cap_of(const char *name)
{
	if (!strcmp(name, "sys_admin"))
		return CAP_SYS_ADMIN;
	if (!strcmp(name, "net_admin"))
		return CAP_NET_ADMIN;
	if (!strcmp(name, "dac_override"))
		return CAP_DAC_OVERRIDE;
	return -1;
}

int main(int argc, char **argv)
{
	char caps[256], *name, *save;
	int cap;

	if (argc < 3 || strlen(argv[1]) >= sizeof(caps)) {
		fprintf(stderr, "usage: capdrop CAP[,CAP...] CMD [ARGS...]\n");
		return 2;
	}
	strcpy(caps, argv[1]);
	for (name = strtok_r(caps, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		cap = cap_of(name);
		if (cap < 0) {
			fprintf(stderr, "capdrop: unknown capability '%s'\n",
				name);
			return 2;
		}
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)) {
			perror("capdrop: PR_CAPBSET_DROP");
			return 1;
		}
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "capdrop: %s: %s\n", argv[2], strerror(errno));
	return 1;
}
