// SPDX-License-Identifier: GPL-2.0-only
/*
 * genl-fuzz: send random and malformed requests to one generic netlink
 * family, to show that its policies and handlers reject what they must and
 * never splat.
 *
 *	genl-fuzz [-x CMD]... [-u UID] FAMILY [COUNT [SEED]]
 *
 * COUNT requests (default 10000) go to FAMILY (resolved by name through
 * nlctrl), generated from SEED (default: time and pid; always printed, so a
 * run can be repeated). Each request is a nlmsghdr and genlmsghdr of the
 * family with random commands (valid and invalid), flags (NLM_F_DUMP, ACK,
 * ECHO, junk bits), version and reserved bytes, then attributes of known
 * and random types: u8/u16/u32/u64 values and wrong-size payloads, empty,
 * terminated and unterminated strings, nests (good, empty, overlong, deep,
 * with garbage), attributes shorter than their header, attribute lengths
 * past the message's end, and message lengths that lie.
 *
 * -x CMD never sends command CMD (e.g. a flush that writes the whole pool
 * to disk), -u UID sends as that uid (no CAP_SYS_ADMIN).
 *
 * Replies are read without blocking after every request and counted:
 * NLMSG_ERROR with an error (errors), NLMSG_ERROR with 0 (acks), data
 * messages (replies). The last line is "sent N, errors M, acks K". Exit 0
 * if all COUNT requests were sent, 1 otherwise, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <grp.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <linux/mobio.h>

#define FZ_DEFAULT_COUNT	10000
#define FZ_MSG_MAX		(16 * 1024)	/* bytes, a request's buffer */
#define FZ_RCVBUF		(64 * 1024)	/* bytes, one recv */
#define FZ_NEST_DEPTH		4
#define FZ_MAX_EXCLUDED		32
/* Attribute numbers worth hitting most: the common ones and a family's. */
#define FZ_ATTR_HOT_MAX		(MOBIO_A_FAMILY_BASE + 16)
/* Command numbers worth hitting most: GET_STATS and the family's. */
#define FZ_CMD_HOT_MAX		(MOBIO_CMD_FAMILY_BASE + 8)

struct fz {
	uint64_t rng;
	struct mnl_socket *nl;
	uint16_t family_id;
	uint32_t seq;
	uint8_t excluded[FZ_MAX_EXCLUDED];
	int nr_excluded;

	/* counters */
	uint64_t sent, send_failed;
	uint64_t errors, acks, replies, dumps_done, overruns;
};

/* --- Randomness (xorshift64*) ----------------------------------------------- */

static uint64_t fz_rand(struct fz *f)
{
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return f->rng * 0x2545f4914f6cdd1dULL;
}

static uint32_t fz_below(struct fz *f, uint32_t n)
{
	return n ? (uint32_t)(fz_rand(f) % n) : 0;
}

/* True with probability @pct percent. */
static bool fz_chance(struct fz *f, uint32_t pct)
{
	return fz_below(f, 100) < pct;
}

/* A value a parser may trip on: 0, 1, all ones, sign bits, or random. */
static uint64_t fz_edge_value(struct fz *f)
{
	static const uint64_t edges[] = {
		0, 1, 2, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff,
		0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL,
		0x7fffffffffffffffULL, 0x8000000000000000ULL, UINT64_MAX,
		4096, 1ULL << 40, (1ULL << 40) + 1,
	};

	if (fz_chance(f, 50))
		return edges[fz_below(f, sizeof(edges) / sizeof(edges[0]))];
	return fz_rand(f);
}

/* --- Building requests ---------------------------------------------------- */

/* Room left in the request buffer after @nlh's current end. */
static size_t fz_room(const struct nlmsghdr *nlh)
{
	return FZ_MSG_MAX - nlh->nlmsg_len;
}

/* Append a raw attribute: header with @nla_len as given, then @len bytes. */
static bool fz_put_raw(struct nlmsghdr *nlh, uint16_t type, uint16_t nla_len,
		       const void *data, size_t len)
{
	struct nlattr *attr = mnl_nlmsg_get_payload_tail(nlh);

	if (fz_room(nlh) < MNL_ALIGN(sizeof(*attr) + len))
		return false;
	attr->nla_type = type;
	attr->nla_len = nla_len;
	memcpy((char *)attr + sizeof(*attr), data, len);
	memset((char *)attr + sizeof(*attr) + len, 0,
	       MNL_ALIGN(sizeof(*attr) + len) - sizeof(*attr) - len);
	nlh->nlmsg_len += MNL_ALIGN(sizeof(*attr) + len);
	return true;
}

static bool fz_put(struct nlmsghdr *nlh, uint16_t type, const void *data,
		   size_t len)
{
	return fz_put_raw(nlh, type, (uint16_t)(sizeof(struct nlattr) + len),
			  data, len);
}

static uint16_t fz_attr_type(struct fz *f)
{
	uint16_t type;

	if (fz_chance(f, 60))
		type = (uint16_t)fz_below(f, FZ_ATTR_HOT_MAX + 1);
	else if (fz_chance(f, 50))
		type = (uint16_t)fz_below(f, 128);
	else
		type = (uint16_t)fz_rand(f);
	if (fz_chance(f, 10))
		type ^= NLA_F_NESTED;
	if (fz_chance(f, 3))
		type ^= NLA_F_NET_BYTEORDER;
	return type;
}

static void fz_put_attr(struct fz *f, struct nlmsghdr *nlh, int depth);

/* A nest of 0-5 attributes; sometimes its length lies. */
static void fz_put_nest(struct fz *f, struct nlmsghdr *nlh, uint16_t type,
			int depth)
{
	struct nlattr *nest;
	int i, n = (int)fz_below(f, 6);

	if (fz_room(nlh) < 256)
		return;
	nest = mnl_attr_nest_start(nlh, type);
	for (i = 0; i < n; i++)
		fz_put_attr(f, nlh, depth + 1);
	mnl_attr_nest_end(nlh, nest);
	if (fz_chance(f, 8))	/* claims more than it holds */
		nest->nla_len += (uint16_t)(1 + fz_below(f, 64));
	else if (fz_chance(f, 8) && nest->nla_len > sizeof(*nest))
		nest->nla_len -= (uint16_t)(1 + fz_below(f, nest->nla_len -
						   sizeof(*nest)));
}

#define FZ_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Payload sizes no integer attribute has, bytes. */
static const size_t fz_odd_sizes[] = { 0, 3, 5, 6, 7, 9, 12, 16 };
/* String payload sizes around MOBIO_STAT_NAME_MAX and beyond, bytes. */
static const size_t fz_str_sizes[] = { 0, 1, 8, 31, 32, 33, 255, 400 };

/* One attribute of a random kind. */
static void fz_put_attr(struct fz *f, struct nlmsghdr *nlh, int depth)
{
	uint16_t type = fz_attr_type(f);
	uint8_t junk[512];
	uint64_t v = fz_edge_value(f);
	size_t len, i;

	switch (fz_below(f, 14)) {
	case 0:		/* u8 */
		fz_put(nlh, type, &v, 1);
		break;
	case 1:		/* u16 */
		fz_put(nlh, type, &v, 2);
		break;
	case 2:		/* u32, the commonest type */
	case 3:
		fz_put(nlh, type, &v, 4);
		break;
	case 4:		/* u64 */
		fz_put(nlh, type, &v, 8);
		break;
	case 5:		/* wrong sizes for any integer */
		len = fz_odd_sizes[fz_below(f, FZ_ARRAY_SIZE(fz_odd_sizes))];
		for (i = 0; i < len; i++)
			junk[i] = (uint8_t)fz_rand(f);
		fz_put(nlh, type, junk, len);
		break;
	case 6:		/* strings: empty, just NUL, terminated, long */
		len = fz_str_sizes[fz_below(f, FZ_ARRAY_SIZE(fz_str_sizes))];
		for (i = 0; i < len; i++)
			junk[i] = (uint8_t)('a' + fz_below(f, 26));
		if (len)
			junk[len - 1] = '\0';
		fz_put(nlh, type, junk, len);
		break;
	case 7:		/* unterminated string, maybe with a NUL inside */
		len = 1 + fz_below(f, 64);
		for (i = 0; i < len; i++)
			junk[i] = (uint8_t)(' ' + fz_below(f, 95));
		if (len > 2 && fz_chance(f, 30))
			junk[fz_below(f, (uint32_t)len - 1)] = '\0';
		fz_put(nlh, type, junk, len);
		break;
	case 8:		/* a nest, if not too deep */
	case 9:
		if (depth < FZ_NEST_DEPTH)
			fz_put_nest(f, nlh, type | (fz_chance(f, 50) ?
						    NLA_F_NESTED : 0), depth);
		else
			fz_put(nlh, type, &v, 4);
		break;
	case 10:	/* header shorter than a header */
		fz_put_raw(nlh, type, (uint16_t)fz_below(f, 4), &v, 4);
		break;
	case 11:	/* length past what follows (may run off the message) */
		fz_put_raw(nlh, type, (uint16_t)(8 + fz_below(f, 2048)), &v, 4);
		break;
	case 12:	/* the largest length */
		fz_put_raw(nlh, type, 0xffff, &v, 8);
		break;
	default:	/* random bytes, random length */
		len = fz_below(f, sizeof(junk));
		for (i = 0; i < len; i++)
			junk[i] = (uint8_t)fz_rand(f);
		fz_put(nlh, type, junk, len);
		break;
	}
}

static bool fz_excluded(const struct fz *f, uint8_t cmd)
{
	int i;

	for (i = 0; i < f->nr_excluded; i++)
		if (f->excluded[i] == cmd)
			return true;
	return false;
}

static uint8_t fz_cmd(struct fz *f)
{
	uint8_t cmd;

	do {
		if (fz_chance(f, 70))
			cmd = (uint8_t)(fz_chance(f, 20) ? MOBIO_CMD_GET_STATS :
				MOBIO_CMD_FAMILY_BASE +
				fz_below(f, FZ_CMD_HOT_MAX -
					 MOBIO_CMD_FAMILY_BASE + 1));
		else
			cmd = (uint8_t)fz_rand(f);
	} while (fz_excluded(f, cmd));
	return cmd;
}

/* Build one request in @buf; return the bytes to send. */
static size_t fz_build(struct fz *f, void *buf)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *genl;
	size_t send_len;
	int i, n;

	nlh->nlmsg_type = f->family_id;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	if (fz_chance(f, 60))
		nlh->nlmsg_flags |= NLM_F_ACK;
	if (fz_chance(f, 30))
		nlh->nlmsg_flags |= NLM_F_DUMP;
	if (fz_chance(f, 5))
		nlh->nlmsg_flags |= NLM_F_ECHO;
	if (fz_chance(f, 5))
		nlh->nlmsg_flags |= (uint16_t)(fz_rand(f) & 0xfff0);
	nlh->nlmsg_seq = ++f->seq;

	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = fz_cmd(f);
	genl->version = fz_chance(f, 90) ? MOBIO_GENL_VERSION :
					   (uint8_t)fz_rand(f);
	genl->reserved = fz_chance(f, 95) ? 0 : (uint16_t)fz_rand(f);

	n = fz_chance(f, 10) ? 0 : 1 + (int)fz_below(f, 8);
	for (i = 0; i < n && fz_room(nlh) > 1024; i++)
		fz_put_attr(f, nlh, 0);

	send_len = nlh->nlmsg_len;
	switch (fz_below(f, 20)) {
	case 0:		/* genlmsghdr cut short */
		nlh->nlmsg_len = (uint32_t)(NLMSG_HDRLEN + fz_below(f, 4));
		send_len = nlh->nlmsg_len;
		break;
	case 1:		/* nlmsg_len shorter than the attributes */
		if (nlh->nlmsg_len > NLMSG_HDRLEN + GENL_HDRLEN)
			nlh->nlmsg_len -= fz_below(f, nlh->nlmsg_len -
						   NLMSG_HDRLEN - GENL_HDRLEN);
		send_len = nlh->nlmsg_len;
		break;
	case 2:		/* nlmsg_len longer than what is sent */
		nlh->nlmsg_len += 1 + fz_below(f, 4096);
		break;
	case 3:		/* fewer bytes sent than the header claims (not 0:
			 * netlink refuses an empty send before parsing) */
		send_len = 1 + fz_below(f, (uint32_t)send_len - 1);
		break;
	default:
		break;
	}
	return send_len;
}

/* --- Replies ---------------------------------------------------------------- */

static void fz_count(struct fz *f, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	int n = (int)len;

	for (; mnl_nlmsg_ok(nlh, n); nlh = mnl_nlmsg_next(nlh, &n)) {
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);

			if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err)))
				continue;
			if (err->error)
				f->errors++;
			else
				f->acks++;
		} else if (nlh->nlmsg_type == NLMSG_DONE) {
			f->dumps_done++;
		} else if (nlh->nlmsg_type >= NLMSG_MIN_TYPE) {
			f->replies++;
		}
	}
}

/* Read whatever is queued, without blocking; wait up to @ms for the first. */
static void fz_drain(struct fz *f, void *buf, int ms)
{
	int fd = mnl_socket_get_fd(f->nl);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (ms && poll(&pfd, 1, ms) <= 0)
		return;
	for (;;) {
		n = recv(fd, buf, FZ_RCVBUF, MSG_DONTWAIT);
		if (n > 0) {
			fz_count(f, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == ENOBUFS) {	/* replies dropped */
			f->overruns++;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return;		/* EAGAIN, or nothing more */
	}
}

/* --- Setup ------------------------------------------------------------------ */

static int fz_family_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *attr;
	uint16_t *id = data;

	mnl_attr_for_each(attr, nlh, GENL_HDRLEN)
		if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID &&
		    mnl_attr_validate(attr, MNL_TYPE_U16) == 0)
			*id = mnl_attr_get_u16(attr);
	return MNL_CB_OK;
}

static int fz_resolve(struct fz *f, const char *family)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *genl;
	uint32_t portid = mnl_socket_get_portid(f->nl);
	ssize_t n;
	int ret;

	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++f->seq;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = CTRL_CMD_GETFAMILY;
	genl->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, family);
	if (mnl_socket_sendto(f->nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	do {
		n = mnl_socket_recvfrom(f->nl, buf, sizeof(buf));
		if (n < 0)
			return -1;
		ret = mnl_cb_run(buf, (size_t)n, f->seq, portid, fz_family_cb,
				 &f->family_id);
	} while (ret > 0);
	if (ret < 0)
		return -1;
	if (!f->family_id) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

static int fz_drop_to(const char *arg)
{
	char *end;
	unsigned long id;

	errno = 0;
	id = strtoul(arg, &end, 0);
	if (!*arg || *end || errno || id > UINT32_MAX)
		return -1;
	if ((setgroups(0, NULL) < 0 && errno != EPERM) ||
	    setresgid((gid_t)id, (gid_t)id, (gid_t)id) < 0 ||
	    setresuid((uid_t)id, (uid_t)id, (uid_t)id) < 0) {
		perror("genl-fuzz: dropping to the uid");
		exit(1);
	}
	return 0;
}

static void fz_usage(FILE *out)
{
	fprintf(out,
		"Usage: genl-fuzz [-x CMD]... [-u UID] FAMILY [COUNT [SEED]]\n"
		"  COUNT  requests to send (default %d)\n"
		"  SEED   random seed (default: time and pid; printed)\n"
		"  -x CMD never send command CMD (repeatable)\n"
		"  -u UID send as uid and gid UID (no CAP_SYS_ADMIN)\n",
		FZ_DEFAULT_COUNT);
}

int main(int argc, char **argv)
{
	struct fz f = { 0 };
	unsigned long long count = FZ_DEFAULT_COUNT, seed;
	const char *family;
	char *buf, *rbuf;
	int one = 1, size = 4 * 1024 * 1024, opt;
	unsigned long x;

	seed = (unsigned long long)time(NULL) ^
	       ((unsigned long long)getpid() << 32);
	while ((opt = getopt(argc, argv, "hx:u:")) != -1) {
		switch (opt) {
		case 'x':
			x = strtoul(optarg, NULL, 0);
			if (x > 255 || f.nr_excluded == FZ_MAX_EXCLUDED) {
				fz_usage(stderr);
				return 2;
			}
			f.excluded[f.nr_excluded++] = (uint8_t)x;
			break;
		case 'u':
			if (fz_drop_to(optarg) < 0) {
				fz_usage(stderr);
				return 2;
			}
			break;
		case 'h':
			fz_usage(stdout);
			return 0;
		default:
			fz_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc || argc - optind > 3) {
		fz_usage(stderr);
		return 2;
	}
	family = argv[optind];
	if ((optind + 1 < argc &&
	     sscanf(argv[optind + 1], "%llu", &count) != 1) ||
	    (optind + 2 < argc && sscanf(argv[optind + 2], "%llu", &seed) != 1)) {
		fz_usage(stderr);
		return 2;
	}
	f.rng = seed ? seed : 1;	/* xorshift never leaves 0 */

	buf = malloc(FZ_MSG_MAX);
	rbuf = malloc(FZ_RCVBUF);
	f.nl = mnl_socket_open(NETLINK_GENERIC);
	if (!buf || !rbuf || !f.nl ||
	    mnl_socket_bind(f.nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("genl-fuzz: netlink socket");
		return 1;
	}
	mnl_socket_setsockopt(f.nl, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(mnl_socket_get_fd(f.nl), SOL_SOCKET, SO_RCVBUF, &size,
		   sizeof(size));
	if (fz_resolve(&f, family) < 0) {
		fprintf(stderr, "genl-fuzz: family '%s': %s\n", family,
			strerror(errno));
		return 1;
	}
	printf("genl-fuzz: family %s id %u, %llu requests, seed %llu\n",
	       family, f.family_id, count, seed);
	fflush(stdout);

	while (f.sent < count) {
		size_t len = fz_build(&f, buf);

		if (send(mnl_socket_get_fd(f.nl), buf, len, MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN || errno == ENOBUFS) {
				fz_drain(&f, rbuf, 10);
				continue;	/* the same count, a new one */
			}
			f.send_failed++;
			if (f.send_failed > count) {
				perror("genl-fuzz: send");
				break;
			}
			continue;
		}
		f.sent++;
		fz_drain(&f, rbuf, 0);
	}
	/* Late replies: dumps continue as they are read. */
	fz_drain(&f, rbuf, 200);

	printf("replies %" PRIu64 ", dumps done %" PRIu64 ", receive overruns "
	       "%" PRIu64 ", send failures %" PRIu64 "\n", f.replies,
	       f.dumps_done, f.overruns, f.send_failed);
	printf("sent %" PRIu64 ", errors %" PRIu64 ", acks %" PRIu64 "\n",
	       f.sent, f.errors, f.acks);
	mnl_socket_close(f.nl);
	free(buf);
	free(rbuf);
	return f.sent == count ? 0 : 1;
}
