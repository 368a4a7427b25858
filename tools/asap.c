// SPDX-License-Identifier: GPL-2.0-only
/*
 * mobioctl asap: the "asap" generic netlink family of asap-prefetch.ko
 * (see <linux/asap.h>): switch apps, read counters, list apps.
 *
 *	mobioctl asap switch 1234          the app of pid 1234 comes to the front
 *	mobioctl asap switch /apps/camera  by cgroup v2 path (the one process
 *	                                   in that cgroup)
 *	mobioctl asap stats [PID]          global counters, or one app's
 *	mobioctl [--json] asap apps        tracked apps with their counters
 *	mobioctl asap watch [COUNT]        switches as they happen
 *	mobioctl asap save PID FILE        an app's estimator tables to FILE
 *	mobioctl asap load PID FILE        and back into an app
 *
 * A profile file is text, one record a line ("#" lines are comments):
 *
 *	asap-profile 1                      format version, first
 *	profiled N                          file profile switches done
 *	anon ADDR NR COUNT FLAGS            a run of anonymous pages (ADDR hex)
 *	file DEV INO GEN                    a file (st_dev, st_ino, generation)
 *	run INDEX NR COUNT FLAGS            a run of that file's pages
 *
 * COUNT and FLAGS are those of struct asap_profile_run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/asap.h>

#include "json.h"
#include "mobioctl.h"
#include "stats.h"

struct asap_reply {
	struct mobio_ctx *ctx;
	int count;
	bool list;		/* apps: several objects in one JSON array */
};

static int asap_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	switch (type) {
	case MOBIO_A_PID:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			tb[type] = attr;
		break;
	case MOBIO_A_STATS:
		if (mnl_attr_validate(attr, MNL_TYPE_NESTED) == 0)
			tb[type] = attr;
		break;
	case ASAP_A_COMM:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0 &&
		    mnl_attr_get_payload_len(attr) <= ASAP_COMM_MAX)
			tb[type] = attr;
		break;
	case ASAP_A_FOREGROUND:
		tb[type] = attr;
		break;
	case ASAP_A_TRIGGER:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			tb[type] = attr;
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

static int asap_reply_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ASAP_A_MAX + 1] = { 0 };
	struct asap_reply *r = data;
	bool json = r->ctx->json;

	mnl_attr_parse(nlh, GENL_HDRLEN, asap_attr_cb, tb);
	if (!tb[MOBIO_A_STATS])
		return MNL_CB_OK;
	if (json) {
		json_object_open(NULL);
		if (tb[MOBIO_A_PID])
			json_u64("pid", mnl_attr_get_u32(tb[MOBIO_A_PID]));
		if (tb[ASAP_A_COMM])
			json_string("comm", mnl_attr_get_str(tb[ASAP_A_COMM]));
		if (r->list)
			json_bool("foreground", tb[ASAP_A_FOREGROUND] != NULL);
	} else if (r->list) {
		printf("app %u %s%s\n",
		       tb[MOBIO_A_PID] ? mnl_attr_get_u32(tb[MOBIO_A_PID]) : 0,
		       tb[ASAP_A_COMM] ? mnl_attr_get_str(tb[ASAP_A_COMM]) : "?",
		       tb[ASAP_A_FOREGROUND] ? " foreground" : "");
	}
	mobio_print_stats(tb[MOBIO_A_STATS], json);
	if (json) {
		json_object_close();
		if (!r->list)
			json_end();
	}
	r->count++;
	return MNL_CB_OK;
}

/*
 * The kernel judges a cgroup path's length (its policy says the limit):
 * the request buffer only has to hold twice the limit.
 */
#define ASAP_SWITCH_SNDBUF	(2 * ASAP_CGROUP_PATH_MAX)

static int asap_switch(struct mobio_ctx *ctx, int argc, char **argv)
{
	char buf[ASAP_SWITCH_SNDBUF];
	struct mobio_genl *g;
	struct nlmsghdr *nlh;
	uint32_t pid = 0;

	(void)argc;
	if (argv[0][0] == '/') {
		if (strlen(argv[0]) >= ASAP_SWITCH_SNDBUF - 256)
			return mobio_cmd_usage_error(ctx, "cgroup path longer "
						     "than %d bytes",
						     ASAP_SWITCH_SNDBUF - 257);
	} else if (mobio_parse_u32(ctx, "pid", argv[0], &pid) < 0) {
		return MOBIO_EXIT_USAGE;
	} else if (!pid) {
		return mobio_cmd_usage_error(ctx, "pid 0 is not a process");
	}
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	nlh = mobio_genl_request(g, buf, ASAP_CMD_SWITCH, 0);
	if (pid)
		mnl_attr_put_u32(nlh, MOBIO_A_PID, pid);
	else
		mnl_attr_put_strz(nlh, ASAP_A_CGROUP, argv[0]);
	if (mobio_genl_talk(g, nlh, NULL, NULL) < 0)
		return mobio_cmd_error(ctx);
	mobio_cmd_warning(ctx);
	return MOBIO_EXIT_OK;
}

static int asap_stats(struct mobio_ctx *ctx, int argc, char **argv)
{
	struct asap_reply r = { .ctx = ctx };
	char buf[MOBIO_GENL_SNDBUF];
	struct mobio_genl *g;
	struct nlmsghdr *nlh;
	uint32_t pid = 0;

	if (argc == 1 && mobio_parse_u32(ctx, "pid", argv[0], &pid) < 0)
		return MOBIO_EXIT_USAGE;
	if (argc == 1 && !pid)
		return mobio_cmd_usage_error(ctx, "pid 0 is not a process");
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	nlh = mobio_genl_request(g, buf, ASAP_CMD_GET_STATS, 0);
	if (pid)
		mnl_attr_put_u32(nlh, MOBIO_A_PID, pid);
	if (mobio_genl_talk(g, nlh, asap_reply_cb, &r) < 0)
		return mobio_cmd_error(ctx);
	if (!r.count) {
		errno = EBADMSG;	/* an ack without the counters */
		return mobio_cmd_error(ctx);
	}
	mobio_cmd_warning(ctx);
	return MOBIO_EXIT_OK;
}

static int asap_apps(struct mobio_ctx *ctx, int argc, char **argv)
{
	struct asap_reply r = { .ctx = ctx, .list = true };
	char buf[MOBIO_GENL_SNDBUF];
	struct mobio_genl *g;
	struct nlmsghdr *nlh;
	int ret;

	(void)argc;
	(void)argv;
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	nlh = mobio_genl_request(g, buf, ASAP_CMD_GET_APPS, NLM_F_DUMP);
	if (ctx->json)
		json_array_open(NULL);
	ret = mobio_genl_talk(g, nlh, asap_reply_cb, &r);
	if (ctx->json) {
		json_array_close();
		json_end();
	}
	if (ret < 0)
		return mobio_cmd_error(ctx);
	return MOBIO_EXIT_OK;
}

/* --- watch ---------------------------------------------------------------- */

struct asap_watch {
	struct mobio_ctx *ctx;
	uint32_t left;		/* events still to print; 0: no limit */
};

static const char *const asap_trigger_name[] = {
	[ASAP_TRIGGER_NETLINK] = "netlink",
	[ASAP_TRIGGER_CGROUP] = "cgroup",
	[ASAP_TRIGGER_SIGCONT] = "sigcont",
};

static int asap_event_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *genl = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[ASAP_A_MAX + 1] = { 0 };
	struct asap_watch *w = data;
	const char *trig = "unknown";
	uint32_t t;

	if (genl->cmd != ASAP_CMD_SWITCH)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, GENL_HDRLEN, asap_attr_cb, tb);
	if (!tb[MOBIO_A_PID] || !tb[ASAP_A_TRIGGER])
		return MNL_CB_OK;
	t = mnl_attr_get_u32(tb[ASAP_A_TRIGGER]);
	if (t < sizeof(asap_trigger_name) / sizeof(asap_trigger_name[0]))
		trig = asap_trigger_name[t];
	if (w->ctx->json) {
		json_object_open(NULL);
		json_string("event", "switch");
		json_u64("pid", mnl_attr_get_u32(tb[MOBIO_A_PID]));
		if (tb[ASAP_A_COMM])
			json_string("comm", mnl_attr_get_str(tb[ASAP_A_COMM]));
		json_string("trigger", trig);
		json_object_close();
		json_end();
	} else {
		printf("switch %u %s %s\n", mnl_attr_get_u32(tb[MOBIO_A_PID]),
		       tb[ASAP_A_COMM] ? mnl_attr_get_str(tb[ASAP_A_COMM]) : "?",
		       trig);
	}
	fflush(stdout);
	if (w->left && --w->left == 0)
		return MNL_CB_STOP;
	return MNL_CB_OK;
}

static int asap_watch(struct mobio_ctx *ctx, int argc, char **argv)
{
	struct asap_watch w = { .ctx = ctx };

	return mobio_watch(ctx, argc, argv, asap_event_cb, &w, &w.left);
}

/* --- save / load ---------------------------------------------------------- */

#define ASAP_PROFILE_MAGIC	"asap-profile"
#define ASAP_PROFILE_VERSION	1

struct asap_save {
	FILE *f;
	uint64_t anon_pages;
	uint64_t file_pages;
	uint64_t files;
	uint64_t last_ino;	/* to start a "file" record when it changes */
	uint64_t last_dev;
	uint32_t last_gen;
	bool have_file;
	bool bad;		/* a message the tool could not read */
};

static int asap_prof_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	switch (type) {
	case MOBIO_A_PID:
	case ASAP_A_PROFILED:
	case ASAP_A_FILE_GEN:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			tb[type] = attr;
		break;
	case ASAP_A_FILE_DEV:
	case ASAP_A_FILE_INO:
		if (mnl_attr_validate(attr, MNL_TYPE_U64) == 0)
			tb[type] = attr;
		break;
	case ASAP_A_ANON_RUNS:
	case ASAP_A_FILE_RUNS:
		if (mnl_attr_get_payload_len(attr) %
		    sizeof(struct asap_profile_run) == 0)
			tb[type] = attr;
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

/* Write the runs of @attr as @kw lines; return the pages. */
static uint64_t asap_save_runs(FILE *f, const char *kw,
			       const struct nlattr *attr, bool hex)
{
	const struct asap_profile_run *r = mnl_attr_get_payload(attr);
	size_t n = mnl_attr_get_payload_len(attr) / sizeof(*r), i;
	struct asap_profile_run run;
	uint64_t pages = 0;

	for (i = 0; i < n; i++) {
		memcpy(&run, &r[i], sizeof(run));	/* alignment */
		fprintf(f, hex ? "%s 0x%" PRIx64 " %u %u %u\n" :
				 "%s %" PRIu64 " %u %u %u\n",
			kw, (uint64_t)run.start, run.nr, run.count, run.flags);
		pages += run.nr;
	}
	return pages;
}

static int asap_save_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ASAP_A_MAX + 1] = { 0 };
	struct asap_save *s = data;
	uint64_t dev, ino;
	uint32_t gen;

	mnl_attr_parse(nlh, GENL_HDRLEN, asap_prof_attr_cb, tb);
	if (tb[ASAP_A_PROFILED])
		fprintf(s->f, "profiled %u\n",
			mnl_attr_get_u32(tb[ASAP_A_PROFILED]));
	if (tb[ASAP_A_ANON_RUNS])
		s->anon_pages += asap_save_runs(s->f, "anon",
						tb[ASAP_A_ANON_RUNS], true);
	if (!tb[ASAP_A_FILE_RUNS])
		return MNL_CB_OK;
	if (!tb[ASAP_A_FILE_DEV] || !tb[ASAP_A_FILE_INO] ||
	    !tb[ASAP_A_FILE_GEN]) {
		s->bad = true;
		return MNL_CB_OK;
	}
	dev = mnl_attr_get_u64(tb[ASAP_A_FILE_DEV]);
	ino = mnl_attr_get_u64(tb[ASAP_A_FILE_INO]);
	gen = mnl_attr_get_u32(tb[ASAP_A_FILE_GEN]);
	if (!s->have_file || dev != s->last_dev || ino != s->last_ino ||
	    gen != s->last_gen) {
		fprintf(s->f, "file %" PRIu64 " %" PRIu64 " %u\n", dev, ino,
			gen);
		s->have_file = true;
		s->last_dev = dev;
		s->last_ino = ino;
		s->last_gen = gen;
		s->files++;
	}
	s->file_pages += asap_save_runs(s->f, "run", tb[ASAP_A_FILE_RUNS],
					false);
	return MNL_CB_OK;
}

static int asap_save(struct mobio_ctx *ctx, int argc, char **argv)
{
	struct asap_save s = { 0 };
	char buf[MOBIO_GENL_SNDBUF];
	struct mobio_genl *g;
	struct nlmsghdr *nlh;
	uint32_t pid;
	char *tmp;
	int ret;

	(void)argc;
	if (mobio_parse_u32(ctx, "pid", argv[0], &pid) < 0)
		return MOBIO_EXIT_USAGE;
	if (!pid)
		return mobio_cmd_usage_error(ctx, "pid 0 is not a process");
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	/* Written next to FILE, renamed over it once complete. */
	if (asprintf(&tmp, "%s.tmp", argv[1]) < 0)
		return MOBIO_EXIT_ERROR;
	s.f = fopen(tmp, "w");
	if (!s.f) {
		fprintf(stderr, MOBIO_PROG ": asap save: %s: %s\n", tmp,
			strerror(errno));
		free(tmp);
		return MOBIO_EXIT_ERROR;
	}
	fprintf(s.f, "%s %d\n# pid %u\n", ASAP_PROFILE_MAGIC,
		ASAP_PROFILE_VERSION, pid);
	nlh = mobio_genl_request(g, buf, ASAP_CMD_PROFILE_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, MOBIO_A_PID, pid);
	ret = mobio_genl_talk(g, nlh, asap_save_cb, &s);
	if (ret < 0) {
		ret = mobio_cmd_error(ctx);
		fclose(s.f);
		goto err;
	}
	if (s.bad) {
		fprintf(stderr, MOBIO_PROG ": asap save: a file's runs came without its identity\n");
		fclose(s.f);
		ret = MOBIO_EXIT_ERROR;
		goto err;
	}
	if (fclose(s.f) || rename(tmp, argv[1])) {
		fprintf(stderr, MOBIO_PROG ": asap save: %s: %s\n", argv[1],
			strerror(errno));
		ret = MOBIO_EXIT_ERROR;
		goto err;
	}
	free(tmp);
	if (ctx->json) {
		json_object_open(NULL);
		json_u64("pid", pid);
		json_u64("anon_pages", s.anon_pages);
		json_u64("files", s.files);
		json_u64("file_pages", s.file_pages);
		json_object_close();
		json_end();
	} else {
		printf("saved pid %u: %" PRIu64 " anon pages, %" PRIu64
		       " file pages in %" PRIu64 " files\n", pid, s.anon_pages,
		       s.file_pages, s.files);
	}
	return MOBIO_EXIT_OK;

err:
	unlink(tmp);
	free(tmp);
	return ret;
}

/* A profile being loaded: the message being filled. */
struct asap_load {
	struct mobio_ctx *ctx;
	struct mobio_genl *g;
	uint32_t pid;
	const char *path;
	unsigned int line;
	char buf[2 * MOBIO_GENL_SNDBUF];
	struct asap_profile_run runs[ASAP_PROFILE_RUNS_MAX];
	unsigned int n;		/* runs in @runs */
	bool anon;		/* @runs are anonymous */
	bool file_skip;		/* the current file is not mapped: skip it */
	uint64_t dev, ino;	/* the current file */
	uint32_t gen;
	uint64_t anon_pages, file_pages, files, skipped;
	bool dry;		/* parse only: nothing is sent */
};

/*
 * Send the runs gathered, or @profiled (>= 0), in one PROFILE_SET. A file
 * the app does not map (ENOENT) is skipped. Return 0, or -2 with errno and
 * the kernel's message.
 */
static int asap_load_send(struct asap_load *l, int profiled)
{
	struct nlmsghdr *nlh;
	uint64_t pages = 0;
	unsigned int i;

	if ((!l->n && profiled < 0) || l->dry) {
		l->n = 0;
		return 0;
	}
	for (i = 0; i < l->n; i++)
		pages += l->runs[i].nr;
	nlh = mobio_genl_request(l->g, l->buf, ASAP_CMD_PROFILE_SET, 0);
	mnl_attr_put_u32(nlh, MOBIO_A_PID, l->pid);
	if (profiled >= 0)
		mnl_attr_put_u32(nlh, ASAP_A_PROFILED, (uint32_t)profiled);
	if (l->n && !l->anon) {
		mnl_attr_put_u64(nlh, ASAP_A_FILE_DEV, l->dev);
		mnl_attr_put_u64(nlh, ASAP_A_FILE_INO, l->ino);
		mnl_attr_put_u32(nlh, ASAP_A_FILE_GEN, l->gen);
	}
	if (l->n)
		mnl_attr_put(nlh, l->anon ? ASAP_A_ANON_RUNS : ASAP_A_FILE_RUNS,
			     l->n * sizeof(l->runs[0]), l->runs);
	l->n = 0;
	if (mobio_genl_talk(l->g, nlh, NULL, NULL) == 0) {
		if (l->anon)
			l->anon_pages += pages;
		else
			l->file_pages += pages;
		return 0;
	}
	if (errno == ENOENT && !l->anon && profiled < 0) {
		fprintf(stderr, MOBIO_PROG ": asap load: file dev %" PRIu64
			" ino %" PRIu64 " skipped: %s\n", l->dev, l->ino,
			l->g->ext_msg[0] ? l->g->ext_msg : strerror(ENOENT));
		l->file_skip = true;
		l->skipped++;
		return 0;
	}
	return -2;
}

/* Parse a number of at most @max; -1 when it is not one. */
static int asap_load_num(const char *tok, uint64_t max, uint64_t *val)
{
	char *end;

	if (!tok || !*tok || *tok == '-')
		return -1;
	errno = 0;
	*val = strtoull(tok, &end, 0);
	return errno || *end || *val > max ? -1 : 0;
}

static int asap_load_error(struct asap_load *l, const char *what)
{
	fprintf(stderr, MOBIO_PROG ": asap load: %s:%u: %s\n", l->path,
		l->line, what);
	return -1;
}

/*
 * One line of the profile, in @line (its newline removed). Return 0, -1
 * after printing a parse error, -2 for a kernel error (errno set).
 */
static int asap_load_line(struct asap_load *l, char *line, bool *have_magic)
{
	uint64_t v[4];
	char *tok[7], *save = NULL;
	bool anon;
	int n = 0;

	/* Up to 6 tokens: one more than a record has, to refuse extras. */
	for (tok[0] = strtok_r(line, " \t\r", &save); tok[n] && n < 6;)
		tok[++n] = strtok_r(NULL, " \t\r", &save);
	if (!n || tok[0][0] == '#')
		return 0;
	if (!*have_magic) {
		if (n != 2 || strcmp(tok[0], ASAP_PROFILE_MAGIC) ||
		    asap_load_num(tok[1], UINT32_MAX, &v[0]))
			return asap_load_error(l, "not an asap profile (no '" ASAP_PROFILE_MAGIC " 1' line first)");
		if (v[0] != ASAP_PROFILE_VERSION)
			return asap_load_error(l, "unknown profile version");
		*have_magic = true;
		return 0;
	}
	if (!strcmp(tok[0], "profiled")) {
		if (n != 2 || asap_load_num(tok[1], 255, &v[0]))
			return asap_load_error(l, "expected 'profiled N', N 0..255");
		return asap_load_send(l, (int)v[0]);
	}
	if (!strcmp(tok[0], "file")) {
		if (n != 4 || asap_load_num(tok[1], UINT64_MAX, &v[0]) ||
		    asap_load_num(tok[2], UINT64_MAX, &v[1]) ||
		    asap_load_num(tok[3], UINT32_MAX, &v[2]))
			return asap_load_error(l, "expected 'file DEV INO GEN'");
		if (asap_load_send(l, -1))
			return -2;
		l->anon = false;
		l->file_skip = false;
		l->dev = v[0];
		l->ino = v[1];
		l->gen = (uint32_t)v[2];
		l->files++;
		return 0;
	}
	anon = !strcmp(tok[0], "anon");
	if (!anon && strcmp(tok[0], "run"))
		return asap_load_error(l, "unknown record (expected profiled, anon, file or run)");
	if (n != 5 || asap_load_num(tok[1], UINT64_MAX, &v[0]) ||
	    asap_load_num(tok[2], UINT32_MAX, &v[1]) ||
	    asap_load_num(tok[3], 255, &v[2]) ||
	    asap_load_num(tok[4], 255, &v[3]))
		return asap_load_error(l, "expected 'anon|run START NR COUNT FLAGS'");
	if (!anon && !l->files)
		return asap_load_error(l, "a 'run' before any 'file'");
	if (l->n && (anon != l->anon || l->n == ASAP_PROFILE_RUNS_MAX) &&
	    asap_load_send(l, -1))
		return -2;
	l->anon = anon;
	if (!anon && l->file_skip)
		return 0;
	l->runs[l->n].start = v[0];
	l->runs[l->n].nr = (uint32_t)v[1];
	l->runs[l->n].count = (uint8_t)v[2];
	l->runs[l->n].flags = (uint8_t)v[3];
	l->runs[l->n].reserved = 0;
	l->n++;
	return 0;
}

/*
 * One pass over the profile in @f: parse only (l->dry) or send. Return 0,
 * -1 after printing a parse error, -2 for a kernel error.
 */
static int asap_load_pass(struct asap_load *l, FILE *f)
{
	bool have_magic = false;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int r = 0;

	rewind(f);
	l->line = 0;
	l->n = 0;
	l->files = 0;
	while (!r && (len = getline(&line, &cap, f)) >= 0) {
		l->line++;
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (strlen(line) != (size_t)len)
			r = asap_load_error(l, "a NUL byte in the line");
		else
			r = asap_load_line(l, line, &have_magic);
	}
	free(line);
	if (r)
		return r;
	if (ferror(f)) {
		fprintf(stderr, MOBIO_PROG ": asap load: %s: %s\n", l->path,
			strerror(errno));
		return -1;
	}
	if (!have_magic)
		return asap_load_error(l, "empty profile");
	return asap_load_send(l, -1);
}

static int asap_load(struct mobio_ctx *ctx, int argc, char **argv)
{
	struct asap_load *l;
	int ret = MOBIO_EXIT_ERROR, r;
	FILE *f;

	(void)argc;
	l = calloc(1, sizeof(*l));
	if (!l)
		return MOBIO_EXIT_ERROR;
	l->ctx = ctx;
	l->path = argv[1];
	if (mobio_parse_u32(ctx, "pid", argv[0], &l->pid) < 0) {
		free(l);
		return MOBIO_EXIT_USAGE;
	}
	if (!l->pid) {
		free(l);
		return mobio_cmd_usage_error(ctx, "pid 0 is not a process");
	}
	f = fopen(argv[1], "r");
	if (!f) {
		fprintf(stderr, MOBIO_PROG ": asap load: %s: %s\n", argv[1],
			strerror(errno));
		free(l);
		return MOBIO_EXIT_ERROR;
	}
	/* The whole file is checked before anything is sent. */
	l->dry = true;
	if (asap_load_pass(l, f))
		goto out;
	l->dry = false;
	l->g = mobio_family(ctx);
	if (!l->g)
		goto out;
	r = asap_load_pass(l, f);
	if (r == -2) {
		ret = mobio_cmd_error(ctx);
		goto out;
	}
	if (r)
		goto out;
	if (ctx->json) {
		json_object_open(NULL);
		json_u64("pid", l->pid);
		json_u64("anon_pages", l->anon_pages);
		json_u64("files", l->files - l->skipped);
		json_u64("files_skipped", l->skipped);
		json_u64("file_pages", l->file_pages);
		json_object_close();
		json_end();
	} else {
		printf("loaded pid %u: %" PRIu64 " anon pages, %" PRIu64
		       " file pages in %" PRIu64 " files (%" PRIu64
		       " skipped: not mapped)\n", l->pid, l->anon_pages,
		       l->file_pages, l->files - l->skipped, l->skipped);
	}
	ret = MOBIO_EXIT_OK;
out:
	fclose(f);
	free(l);
	return ret;
}

static const struct mobio_cmd asap_cmds[] = {
	{
		.name = "switch", .args = "PID|CGROUP",
		.summary = "bring an app to the foreground (prepage it, learn "
			   "its footprint)",
		.help =
"PID is a process; its thread group is the app. CGROUP is a cgroup v2 path\n"
"from the root (\"/apps/camera\") holding exactly one process, which is\n"
"switched to (an app is one address space: a cgroup of several processes\n"
"is refused with EOPNOTSUPP). The app in the foreground before leaves it:\n"
"its prepaging is cancelled and its switch window learned from.\n"
"Needs CAP_SYS_ADMIN.\n",
		.min_args = 1, .max_args = 1, .run = asap_switch,
	},
	{
		.name = "stats", .args = "[PID]",
		.summary = "print the global counters, or one app's, as "
			   "'name value' lines",
		.help =
"A counter's unit is its name's suffix (_ns, _bytes, _pages, _pct), else a\n"
"count; see <linux/asap.h>. With --json: one object.\n",
		.min_args = 0, .max_args = 1, .run = asap_stats,
	},
	{
		.name = "apps", .args = "",
		.summary = "list the tracked apps with their counters",
		.help =
"One 'app PID COMM [foreground]' line, then its counters, per app.\n"
"With --json: an array of objects {\"pid\", \"comm\", \"foreground\", counters}.\n",
		.min_args = 0, .max_args = 0, .run = asap_apps,
	},
	{
		.name = "watch", .args = "[COUNT]",
		.summary = "print switches as they happen (COUNT of them, or "
			   "until killed)",
		.help =
"One 'switch PID COMM TRIGGER' line per switch; TRIGGER is netlink, cgroup\n"
"or sigcont; PID is in the initial pid namespace. Needs CAP_SYS_ADMIN.\n"
"With --json: one object per line, {\"event\": \"switch\", \"pid\", \"comm\",\n"
"\"trigger\"}.\n",
		.min_args = 0, .max_args = 1, .run = asap_watch,
	},
	{
		.name = "save", .args = "PID FILE",
		.summary = "save an app's estimator tables (its profile) to FILE",
		.help =
"FILE is text (see tools/asap.c): the file profile's progress, runs of\n"
"anonymous pages by address, and per mapped file (device, inode number,\n"
"generation) runs of its pages. Save while the app is in the background:\n"
"the tables change when it is switched to. Needs CAP_SYS_ADMIN.\n"
"With --json: one object {\"pid\", \"anon_pages\", \"files\", \"file_pages\"}.\n",
		.min_args = 2, .max_args = 2, .run = asap_save,
	},
	{
		.name = "load", .args = "PID FILE",
		.summary = "load a saved profile into an app (after a reboot, a "
			   "restart)",
		.help =
"The app of PID is tracked from now on; it must not be in its switch\n"
"window. Anonymous runs are loaded by address (the app must lay out its\n"
"memory as when it was saved); a file is matched among the app's mappings\n"
"by device, inode number and generation: a file replaced since the save is\n"
"not matched and is skipped with a message. Loaded pages replace the\n"
"entries of the same pages; the module's entry caps apply.\n"
"Needs CAP_SYS_ADMIN. With --json: one object with the counts.\n",
		.min_args = 2, .max_args = 2, .run = asap_load,
	},
};

const struct mobio_object mobio_asap_object = {
	.name = "asap",
	.family = ASAP_GENL_NAME,
	.module = "asap-prefetch",
	.summary = "ASAP: app-switch footprint learning and prepaging",
	.cmds = asap_cmds,
	.nr_cmds = (int)(sizeof(asap_cmds) / sizeof(asap_cmds[0])),
};
