// SPDX-License-Identifier: GPL-2.0-only
/*
 * genl-fuzz: send random, malformed and well-formed requests to one generic
 * netlink family, to show that its policies and handlers reject what they
 * must, serve what they should and never splat.
 *
 *	genl-fuzz [-x CMD]... [-a ATTRS]... [-w PCT] [-u UID] FAMILY
 *		  [COUNT [SEED]]
 *
 * COUNT requests (default 10000) go to FAMILY (resolved by name through
 * nlctrl, which also lists its commands and whether each is a do or a
 * dump), generated from SEED (default: time and pid; always printed, so a
 * run can be repeated).
 *
 * PCT percent of the requests (default 50) are well formed: a command of
 * the family with the flags it takes (NLM_F_DUMP for a dump), the right
 * version and, in 85% of them, the attributes of one -a group (each kept
 * with 90% probability, sometimes one of another group added); one in six
 * of them then gets one flaw (a value changed, a length cut, a type
 * changed or flagged nested, an attribute added, a wrong version). -a
 * ATTRS names attributes the family knows with values that mean something
 * now (a disk, a pid, a region's uid and magic), as a comma-separated list
 * of NUM:TYPE:VALUE, TYPE one of u8 u16 u32 u64 (decimal or 0x-hex), str
 * (sent with its NUL), flag (no VALUE) or hex (bytes as hex digits); e.g.
 * -a 4:u32:1000,32:u32:0x201. Without them well-formed requests carry no
 * attribute.
 *
 * The others are random: a nlmsghdr and genlmsghdr of the family with
 * random commands (valid and invalid), flags (NLM_F_DUMP, ACK, ECHO, junk
 * bits), version and reserved bytes, then attributes of known and random
 * types: u8/u16/u32/u64 values and wrong-size payloads, empty, terminated
 * and unterminated strings, nests (good, empty, overlong, deep, with
 * garbage), attributes shorter than their header, attribute lengths past
 * the message's end, message lengths that lie, and now and then one of the
 * -a attributes as given.
 *
 * -x CMD never sends command CMD (e.g. a flush that writes the whole pool
 * to disk), -u UID sends as that uid (no CAP_SYS_ADMIN).
 *
 * Replies are read without blocking after every request (nothing waits
 * for an answer) and matched to their request by sequence number. For
 * each command of the family, and for all other commands together, one
 * line says what came back:
 *
 *	cmd 17 dump: sent N formed N ok N failed N silent N data N (EPERM N, ...)
 *
 * ok: requests answered with data, an ack or the end of a dump and no
 * error; failed: answered with an error (the errnos follow); silent: no
 * answer (no ACK asked, a lying length netlink drops, a reply lost to a
 * receive overrun); data: reply messages. The last line is
 * "sent N, errors M, acks K". Exit 0 if all COUNT requests were sent, 1
 * otherwise, 2 on usage errors.
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
#define FZ_DEFAULT_FORMED_PCT	50
#define FZ_MSG_MAX		(16 * 1024)	/* bytes, a request's buffer */
#define FZ_RCVBUF		(64 * 1024)	/* bytes, one recv */
#define FZ_NEST_DEPTH		4
#define FZ_MAX_EXCLUDED		32
#define FZ_MAX_OPS		64	/* commands of one family */
#define FZ_MAX_GROUPS		32	/* -a options */
#define FZ_GROUP_ATTRS		8	/* attributes in one -a */
#define FZ_HINT_MAX		512	/* bytes, one -a attribute's payload */
#define FZ_ERRNO_MAX		150	/* errnos counted one by one */
/* Attribute numbers worth hitting most: the common ones and a family's. */
#define FZ_ATTR_HOT_MAX		(MOBIO_A_FAMILY_BASE + 16)
/* Command numbers worth hitting most: GET_STATS and the family's. */
#define FZ_CMD_HOT_MAX		(MOBIO_CMD_FAMILY_BASE + 8)

/* One attribute of an -a group: sent as given. */
struct fz_hint {
	uint16_t type;
	uint16_t len;
	uint8_t data[FZ_HINT_MAX];
};

/* The attributes of one -a option: sent together. */
struct fz_group {
	struct fz_hint attrs[FZ_GROUP_ATTRS];
	int n;
};

/* A command of the family, as nlctrl lists it. */
struct fz_op {
	uint8_t cmd;
	uint32_t flags;		/* GENL_CMD_CAP_* */
};

/* What came back for one request, by sequence number. */
#define FZ_ANS_DATA	0x01
#define FZ_ANS_ACK	0x02
#define FZ_ANS_DONE	0x04
#define FZ_ANS_ERROR	0x08
struct fz_req {
	uint8_t cmd;
	uint8_t sent : 1, formed : 1;
	uint8_t answers;	/* FZ_ANS_* */
	uint16_t err;		/* the first error's errno */
	uint32_t data;		/* reply messages */
};

/* The outcome of one command's requests (or of every unknown command's). */
struct fz_cmd_stats {
	uint64_t sent, formed, ok, failed, silent, data;
	uint64_t err[FZ_ERRNO_MAX + 1];		/* the last: larger errnos */
};

struct fz {
	uint64_t rng;
	struct mnl_socket *nl;
	uint16_t family_id;
	uint32_t seq;
	uint8_t excluded[FZ_MAX_EXCLUDED];
	int nr_excluded;
	struct fz_op ops[FZ_MAX_OPS];
	int nr_ops;
	struct fz_group groups[FZ_MAX_GROUPS];
	int nr_groups;
	uint32_t formed_pct;

	/* requests by sequence number, [0, nr_reqs) */
	struct fz_req *reqs;
	uint32_t nr_reqs;

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

/* One attribute of one -a group, at random. */
static const struct fz_hint *fz_any_hint(struct fz *f)
{
	const struct fz_group *g = &f->groups[fz_below(f, f->nr_groups)];

	return &g->attrs[fz_below(f, g->n)];
}

static bool fz_put_hint(struct nlmsghdr *nlh, const struct fz_hint *h)
{
	return fz_put(nlh, h->type, h->data, h->len);
}

/* One attribute of a random kind. */
static void fz_put_attr(struct fz *f, struct nlmsghdr *nlh, int depth)
{
	uint16_t type;
	uint8_t junk[512];
	uint64_t v;
	size_t len, i;

	/* A value that means something, among the garbage. */
	if (f->nr_groups && fz_chance(f, 8)) {
		fz_put_hint(nlh, fz_any_hint(f));
		return;
	}
	type = fz_attr_type(f);
	v = fz_edge_value(f);
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

/* A random request in @buf; return the bytes to send. */
static size_t fz_build_random(struct fz *f, void *buf)
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

/* A command of the family that is not excluded; NULL if none is left. */
static const struct fz_op *fz_pick_op(struct fz *f)
{
	const struct fz_op *op;
	int tries;

	if (!f->nr_ops)
		return NULL;
	for (tries = 0; tries < 64; tries++) {
		op = &f->ops[fz_below(f, f->nr_ops)];
		if (!fz_excluded(f, op->cmd))
			return op;
	}
	return NULL;
}

/* One flaw in a well-formed request (@first: its first attribute). */
static void fz_spoil(struct fz *f, struct nlmsghdr *nlh, struct nlattr *first)
{
	struct genlmsghdr *genl = mnl_nlmsg_get_payload(nlh);
	struct nlattr *end = mnl_nlmsg_get_payload_tail(nlh), *attr;
	uint64_t v;
	int n = 0, pick;

	for (attr = first; attr < end; attr = (void *)((char *)attr +
					 MNL_ALIGN(attr->nla_len)))
		n++;
	pick = n ? (int)fz_below(f, n) : -1;
	for (attr = first; pick > 0; pick--)
		attr = (void *)((char *)attr + MNL_ALIGN(attr->nla_len));

	switch (n ? fz_below(f, 6) : 4 + fz_below(f, 2)) {
	case 0:		/* another value of the same size */
		v = fz_edge_value(f);
		memcpy((char *)attr + sizeof(*attr), &v,
		       attr->nla_len - sizeof(*attr) < sizeof(v) ?
		       attr->nla_len - sizeof(*attr) : sizeof(v));
		break;
	case 1:		/* a length cut short (the padding stays) */
		if (attr->nla_len > sizeof(*attr))
			attr->nla_len -= (uint16_t)(1 + fz_below(f,
					attr->nla_len - sizeof(*attr)));
		break;
	case 2:		/* a type flagged nested or byte-ordered */
		attr->nla_type ^= fz_chance(f, 50) ? NLA_F_NESTED :
						     NLA_F_NET_BYTEORDER;
		break;
	case 3:		/* another type */
		attr->nla_type = fz_attr_type(f);
		break;
	case 4:		/* one attribute more */
		fz_put_attr(f, nlh, 0);
		break;
	default:	/* a version the family does not speak */
		genl->version = (uint8_t)(MOBIO_GENL_VERSION + 1 +
					  fz_below(f, 255));
		break;
	}
}

/*
 * A well-formed request in @buf: a command of the family with its flags,
 * the attributes of one -a group; now and then one flaw. Return the bytes
 * to send, 0 if the family has no command left to send.
 */
static size_t fz_build_formed(struct fz *f, void *buf)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	const struct fz_op *op = fz_pick_op(f);
	const struct fz_group *g;
	struct genlmsghdr *genl;
	struct nlattr *first;
	bool dump;
	int i;

	if (!op)
		return 0;
	if (!(op->flags & GENL_CMD_CAP_DO))
		dump = true;
	else if (!(op->flags & GENL_CMD_CAP_DUMP))
		dump = false;
	else
		dump = fz_chance(f, 50);
	nlh->nlmsg_type = f->family_id;
	nlh->nlmsg_flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : 0);
	if (fz_chance(f, 60))
		nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++f->seq;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = op->cmd;
	genl->version = MOBIO_GENL_VERSION;
	first = mnl_nlmsg_get_payload_tail(nlh);

	if (f->nr_groups && fz_chance(f, 85)) {
		g = &f->groups[fz_below(f, f->nr_groups)];
		for (i = 0; i < g->n; i++)
			if (fz_chance(f, 90))
				fz_put_hint(nlh, &g->attrs[i]);
		if (fz_chance(f, 15))	/* and one of another group */
			fz_put_hint(nlh, fz_any_hint(f));
	}
	if (fz_chance(f, 17))
		fz_spoil(f, nlh, first);
	return nlh->nlmsg_len;
}

/* Build one request in @buf; return the bytes to send. */
static size_t fz_build(struct fz *f, void *buf, bool *formed)
{
	size_t len;

	*formed = fz_chance(f, f->formed_pct);
	if (*formed) {
		len = fz_build_formed(f, buf);
		if (len)
			return len;
		*formed = false;
	}
	return fz_build_random(f, buf);
}

/* --- Replies ---------------------------------------------------------------- */

/* The request of sequence number @seq, NULL if none was sent with it. */
static struct fz_req *fz_req_of(struct fz *f, uint32_t seq)
{
	if (seq >= f->nr_reqs || !f->reqs[seq].sent)
		return NULL;
	return &f->reqs[seq];
}

static void fz_answer(struct fz_req *req, uint8_t what, int err)
{
	if (!req)
		return;
	if (err && !(req->answers & FZ_ANS_ERROR))
		req->err = (uint16_t)(-err > 0xffff ? 0xffff : -err);
	req->answers |= what | (err ? FZ_ANS_ERROR : 0);
}

static void fz_count(struct fz *f, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	int n = (int)len, err;

	for (; mnl_nlmsg_ok(nlh, n); nlh = mnl_nlmsg_next(nlh, &n)) {
		struct fz_req *req = fz_req_of(f, nlh->nlmsg_seq);

		if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

			if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
				continue;
			if (e->error)
				f->errors++;
			else
				f->acks++;
			fz_answer(req, e->error ? 0 : FZ_ANS_ACK, e->error);
		} else if (nlh->nlmsg_type == NLMSG_DONE) {
			f->dumps_done++;
			err = 0;
			if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(err)))
				memcpy(&err, mnl_nlmsg_get_payload(nlh),
				       sizeof(err));
			if (err > 0)	/* not an errno */
				err = 0;
			fz_answer(req, FZ_ANS_DONE, err);
		} else if (nlh->nlmsg_type >= NLMSG_MIN_TYPE) {
			f->replies++;
			fz_answer(req, FZ_ANS_DATA, 0);
			if (req)
				req->data++;
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

/* One CTRL_ATTR_OP nest: a command and its GENL_CMD_CAP_* flags. */
static void fz_family_op(struct fz *f, const struct nlattr *nest)
{
	const struct nlattr *attr;
	struct fz_op op = { 0 };
	bool have_id = false;

	mnl_attr_for_each_nested(attr, nest) {
		if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
			continue;
		if (mnl_attr_get_type(attr) == CTRL_ATTR_OP_ID) {
			op.cmd = (uint8_t)mnl_attr_get_u32(attr);
			have_id = true;
		} else if (mnl_attr_get_type(attr) == CTRL_ATTR_OP_FLAGS) {
			op.flags = mnl_attr_get_u32(attr);
		}
	}
	if (have_id && f->nr_ops < FZ_MAX_OPS)
		f->ops[f->nr_ops++] = op;
}

static int fz_family_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *attr, *op;
	struct fz *f = data;

	mnl_attr_for_each(attr, nlh, GENL_HDRLEN) {
		if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID &&
		    mnl_attr_validate(attr, MNL_TYPE_U16) == 0)
			f->family_id = mnl_attr_get_u16(attr);
		if (mnl_attr_get_type(attr) == CTRL_ATTR_OPS &&
		    mnl_attr_validate(attr, MNL_TYPE_NESTED) == 0)
			mnl_attr_for_each_nested(op, attr)
				fz_family_op(f, op);
	}
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
				 f);
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

/* A number of at most @max, decimal or 0x-hex; false if it is not one. */
static bool fz_parse_u64(const char *arg, uint64_t max, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(arg, &end, 0);
	return *arg && *arg != '-' && !*end && !errno && *v <= max;
}

/* One NUM:TYPE[:VALUE] of an -a option into @h. */
static bool fz_parse_hint(char *spec, struct fz_hint *h)
{
	char *type = strchr(spec, ':'), *val = NULL;
	uint64_t num, v;
	size_t i, len;

	if (!type)
		return false;
	*type++ = '\0';
	val = strchr(type, ':');
	if (val)
		*val++ = '\0';
	if (!fz_parse_u64(spec, UINT16_MAX, &num))
		return false;
	h->type = (uint16_t)num;
	if (!strcmp(type, "flag")) {
		h->len = 0;
		return !val;
	}
	if (!val)
		return false;
	if (!strcmp(type, "str")) {
		len = strlen(val) + 1;
		if (len > FZ_HINT_MAX)
			return false;
		memcpy(h->data, val, len);
		h->len = (uint16_t)len;
		return true;
	}
	if (!strcmp(type, "hex")) {
		len = strlen(val);
		if (len % 2 || len / 2 > FZ_HINT_MAX)
			return false;
		for (i = 0; i < len / 2; i++) {
			unsigned int byte;

			if (sscanf(val + 2 * i, "%2x", &byte) != 1)
				return false;
			h->data[i] = (uint8_t)byte;
		}
		h->len = (uint16_t)(len / 2);
		return true;
	}
	if (!strcmp(type, "u8"))
		h->len = 1;
	else if (!strcmp(type, "u16"))
		h->len = 2;
	else if (!strcmp(type, "u32"))
		h->len = 4;
	else if (!strcmp(type, "u64"))
		h->len = 8;
	else
		return false;
	if (!fz_parse_u64(val, h->len == 8 ? UINT64_MAX :
			  (1ULL << (8 * h->len)) - 1, &v))
		return false;
	/* little-endian hosts: netlink integers are in host order */
	memcpy(h->data, &v, h->len);
	return true;
}

/* An -a option: comma-separated NUM:TYPE[:VALUE]. */
static bool fz_parse_group(struct fz *f, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	struct fz_group *g;

	if (!copy || f->nr_groups == FZ_MAX_GROUPS) {
		free(copy);
		return false;
	}
	g = &f->groups[f->nr_groups];
	g->n = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (g->n == FZ_GROUP_ATTRS ||
		    !fz_parse_hint(tok, &g->attrs[g->n])) {
			free(copy);
			return false;
		}
		g->n++;
	}
	free(copy);
	if (!g->n)
		return false;
	f->nr_groups++;
	return true;
}

/* A new request of sequence number @seq, or NULL without memory. */
static struct fz_req *fz_req_new(struct fz *f, uint32_t seq)
{
	struct fz_req *reqs;
	uint32_t n;

	if (seq >= f->nr_reqs) {
		n = f->nr_reqs ? f->nr_reqs : 4096;
		while (n <= seq)
			n *= 2;
		reqs = realloc(f->reqs, n * sizeof(*reqs));
		if (!reqs)
			return NULL;
		memset(reqs + f->nr_reqs, 0,
		       (n - f->nr_reqs) * sizeof(*reqs));
		f->reqs = reqs;
		f->nr_reqs = n;
	}
	return &f->reqs[seq];
}

static void fz_tally(struct fz_cmd_stats *st, const struct fz_req *req)
{
	st->sent++;
	st->formed += req->formed;
	st->data += req->data;
	if (req->answers & FZ_ANS_ERROR) {
		st->failed++;
		st->err[req->err < FZ_ERRNO_MAX ? req->err : FZ_ERRNO_MAX]++;
	} else if (req->answers) {
		st->ok++;
	} else {
		st->silent++;
	}
}

static void fz_print_stats(const char *what, const struct fz_cmd_stats *st)
{
	const char *sep = " (";
	int e;

	printf("%s: sent %" PRIu64 " formed %" PRIu64 " ok %" PRIu64
	       " failed %" PRIu64 " silent %" PRIu64 " data %" PRIu64,
	       what, st->sent, st->formed, st->ok, st->failed, st->silent,
	       st->data);
	for (e = 1; e <= FZ_ERRNO_MAX; e++) {
		if (!st->err[e])
			continue;
		if (e == FZ_ERRNO_MAX)
			printf("%sother %" PRIu64, sep, st->err[e]);
		else if (strerrorname_np(e))
			printf("%s%s %" PRIu64, sep, strerrorname_np(e),
			       st->err[e]);
		else
			printf("%serrno%d %" PRIu64, sep, e, st->err[e]);
		sep = ", ";
	}
	printf("%s\n", strcmp(sep, ", ") ? "" : ")");
}

/* One line per command of the family, one for every other command. */
static void fz_report(const struct fz *f)
{
	struct fz_cmd_stats *st, other = { 0 };
	char what[64];
	uint32_t seq;
	int i;

	st = calloc((size_t)f->nr_ops + 1, sizeof(*st));
	if (!st)
		return;
	for (seq = 0; seq < f->nr_reqs; seq++) {
		const struct fz_req *req = &f->reqs[seq];

		if (!req->sent)
			continue;
		for (i = 0; i < f->nr_ops; i++)
			if (f->ops[i].cmd == req->cmd)
				break;
		fz_tally(i < f->nr_ops ? &st[i] : &other, req);
	}
	for (i = 0; i < f->nr_ops; i++) {
		snprintf(what, sizeof(what), "cmd %u %s%s%s", f->ops[i].cmd,
			 f->ops[i].flags & GENL_CMD_CAP_DO ? "do" : "",
			 (f->ops[i].flags & GENL_CMD_CAP_DO) &&
			 (f->ops[i].flags & GENL_CMD_CAP_DUMP) ? "," : "",
			 f->ops[i].flags & GENL_CMD_CAP_DUMP ? "dump" : "");
		fz_print_stats(what, &st[i]);
	}
	fz_print_stats("cmd other", &other);
	free(st);
}

static void fz_usage(FILE *out)
{
	fprintf(out,
		"Usage: genl-fuzz [-x CMD]... [-a ATTRS]... [-w PCT] [-u UID] FAMILY\n"
		"                 [COUNT [SEED]]\n"
		"  COUNT    requests to send (default %d)\n"
		"  SEED     random seed (default: time and pid; printed)\n"
		"  -x CMD   never send command CMD (repeatable)\n"
		"  -a ATTRS attributes well-formed requests carry together, as\n"
		"           NUM:TYPE:VALUE[,...]; TYPE u8 u16 u32 u64 str hex, or\n"
		"           NUM:flag (repeatable: one group per -a)\n"
		"  -w PCT   percent of requests that are well formed (default %d)\n"
		"  -u UID   send as uid and gid UID (no CAP_SYS_ADMIN)\n",
		FZ_DEFAULT_COUNT, FZ_DEFAULT_FORMED_PCT);
}

int main(int argc, char **argv)
{
	struct fz f = { 0 };
	unsigned long long count = FZ_DEFAULT_COUNT, seed;
	const char *family;
	char *buf, *rbuf;
	int one = 1, size = 4 * 1024 * 1024, opt;
	struct fz_req *req;
	uint64_t v;
	bool formed;

	seed = (unsigned long long)time(NULL) ^
	       ((unsigned long long)getpid() << 32);
	f.formed_pct = FZ_DEFAULT_FORMED_PCT;
	while ((opt = getopt(argc, argv, "hx:a:w:u:")) != -1) {
		switch (opt) {
		case 'x':
			if (!fz_parse_u64(optarg, 255, &v) ||
			    f.nr_excluded == FZ_MAX_EXCLUDED) {
				fz_usage(stderr);
				return 2;
			}
			f.excluded[f.nr_excluded++] = (uint8_t)v;
			break;
		case 'a':
			if (!fz_parse_group(&f, optarg)) {
				fprintf(stderr, "genl-fuzz: bad -a '%s'\n",
					optarg);
				fz_usage(stderr);
				return 2;
			}
			break;
		case 'w':
			if (!fz_parse_u64(optarg, 100, &v)) {
				fz_usage(stderr);
				return 2;
			}
			f.formed_pct = (uint32_t)v;
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
	    (optind + 2 < argc && sscanf(argv[optind + 2], "%llu", &seed) != 1) ||
	    count > UINT32_MAX / 2) {
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
	printf("genl-fuzz: family %s id %u, %d commands, %d attribute groups, "
	       "%u%% well formed, %llu requests, seed %llu\n",
	       family, f.family_id, f.nr_ops, f.nr_groups, f.formed_pct,
	       count, seed);
	fflush(stdout);

	while (f.sent < count) {
		size_t len = fz_build(&f, buf, &formed);
		const struct genlmsghdr *genl = mnl_nlmsg_get_payload(
					(struct nlmsghdr *)buf);

		req = fz_req_new(&f, f.seq);
		if (!req) {
			perror("genl-fuzz: request table");
			break;
		}
		/* Mark it before the send: the answer is queued during it. */
		req->cmd = genl->cmd;
		req->formed = formed;
		req->sent = 1;
		if (send(mnl_socket_get_fd(f.nl), buf, len, MSG_DONTWAIT) < 0) {
			req->sent = 0;
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

	fz_report(&f);
	printf("replies %" PRIu64 ", dumps done %" PRIu64 ", receive overruns "
	       "%" PRIu64 ", send failures %" PRIu64 "\n", f.replies,
	       f.dumps_done, f.overruns, f.send_failed);
	printf("sent %" PRIu64 ", errors %" PRIu64 ", acks %" PRIu64 "\n",
	       f.sent, f.errors, f.acks);
	mnl_socket_close(f.nl);
	free(f.reqs);
	free(buf);
	free(rbuf);
	return f.sent == count ? 0 : 1;
}
