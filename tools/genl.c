// SPDX-License-Identifier: GPL-2.0-only
/*
 * Generic netlink client for the mobio families (see genl.h).
 *
 * Errors come back as NLMSG_ERROR (doit, or a dump that failed to start) or
 * as a negative int in NLMSG_DONE (a dump that failed midway). With
 * NETLINK_EXT_ACK set, both may carry NLMSGERR_ATTR_MSG, the string the
 * kernel gave with NL_SET_ERR_MSG; it is kept verbatim for the error line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <linux/mobio.h>

#include "genl.h"

/* What one mobio_genl_talk() or mobio_genl_listen() runs replies through. */
struct mobio_genl_talk {
	struct mobio_genl *g;
	mnl_cb_t cb;
	void *data;
};

/* --- Replies -------------------------------------------------------------- */

static int mobio_genl_ext_attr_cb(const struct nlattr *attr, void *data)
{
	struct mobio_genl *g = data;

	switch (mnl_attr_get_type(attr)) {
	case NLMSGERR_ATTR_MSG: {
		size_t len = mnl_attr_get_payload_len(attr);

		if (len >= sizeof(g->ext_msg))
			len = sizeof(g->ext_msg) - 1;
		memcpy(g->ext_msg, mnl_attr_get_payload(attr), len);
		g->ext_msg[len] = '\0';
		/* The kernel NUL-terminates it; drop a trailing newline too. */
		len = strlen(g->ext_msg);
		while (len && g->ext_msg[len - 1] == '\n')
			g->ext_msg[--len] = '\0';
		break;
	}
	case NLMSGERR_ATTR_MISS_TYPE:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			g->ext_miss_type = (int)mnl_attr_get_u32(attr);
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

/* Keep the extack TLVs that start @offset bytes into @nlh's payload. */
static void mobio_genl_parse_ext(struct mobio_genl *g,
				 const struct nlmsghdr *nlh, size_t offset)
{
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (mnl_nlmsg_size(offset) > nlh->nlmsg_len)
		return;
	mnl_attr_parse(nlh, (unsigned int)offset, mobio_genl_ext_attr_cb, g);
}

static int mobio_genl_cb_error(const struct nlmsghdr *nlh, void *data)
{
	struct mobio_genl_talk *t = data;
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	size_t offset = sizeof(*err);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	/* Without NETLINK_CAP_ACK honoured, the request's payload comes back. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED) &&
	    err->msg.nlmsg_len >= sizeof(struct nlmsghdr))
		offset += NLMSG_ALIGN(err->msg.nlmsg_len) -
			  sizeof(struct nlmsghdr);
	mobio_genl_parse_ext(t->g, nlh, offset);
	if (err->error == 0)
		return MNL_CB_STOP;	/* the ack */
	errno = err->error < 0 ? -err->error : err->error;
	return MNL_CB_ERROR;
}

static int mobio_genl_cb_done(const struct nlmsghdr *nlh, void *data)
{
	struct mobio_genl_talk *t = data;
	int err;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(err)))
		return MNL_CB_STOP;
	memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
	mobio_genl_parse_ext(t->g, nlh, sizeof(err));
	if (err >= 0)
		return MNL_CB_STOP;
	errno = -err;
	return MNL_CB_ERROR;
}

static int mobio_genl_cb_noop(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

static int mobio_genl_cb_overrun(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	errno = ENOSPC;
	return MNL_CB_ERROR;
}

/* Data messages: the family's own, passed on to the caller's callback. */
static int mobio_genl_cb_data(const struct nlmsghdr *nlh, void *data)
{
	struct mobio_genl_talk *t = data;

	if (nlh->nlmsg_type != t->g->family_id || !t->cb)
		return MNL_CB_OK;
	if (nlh->nlmsg_len < mnl_nlmsg_size(GENL_HDRLEN)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	return t->cb(nlh, t->data);
}

/*
 * libmnl calls no default for a control type inside this array's length;
 * not const only because mnl_cb_run2() takes it so.
 */
static mnl_cb_t mobio_genl_cb_ctl[NLMSG_MIN_TYPE] = {
	[NLMSG_NOOP]	= mobio_genl_cb_noop,
	[NLMSG_ERROR]	= mobio_genl_cb_error,
	[NLMSG_DONE]	= mobio_genl_cb_done,
	[NLMSG_OVERRUN]	= mobio_genl_cb_overrun,
};

/* Receive and run replies to @seq (0: any) until a callback stops. */
static int mobio_genl_run(struct mobio_genl *g, uint32_t seq, uint32_t portid,
			  struct mobio_genl_talk *t)
{
	ssize_t n;
	int ret;

	for (;;) {
		n = mnl_socket_recvfrom(g->nl, g->rcvbuf, MOBIO_GENL_RCVBUF);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		ret = mnl_cb_run2(g->rcvbuf, (size_t)n, seq, portid,
				  mobio_genl_cb_data, t, mobio_genl_cb_ctl,
				  NLMSG_MIN_TYPE);
		if (ret == MNL_CB_STOP)
			return 0;
		if (ret < 0)
			return -1;
	}
}

/* --- Requests ------------------------------------------------------------- */

struct nlmsghdr *mobio_genl_request(struct mobio_genl *g, void *buf,
				    uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *genl;

	nlh->nlmsg_type = g->family_id;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	if (!(flags & NLM_F_DUMP))
		nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++g->seq;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = g->family_id == GENL_ID_CTRL ? 1 : MOBIO_GENL_VERSION;
	return nlh;
}

int mobio_genl_talk(struct mobio_genl *g, struct nlmsghdr *nlh, mnl_cb_t cb,
		    void *data)
{
	struct mobio_genl_talk t = { .g = g, .cb = cb, .data = data };

	g->ext_msg[0] = '\0';
	g->ext_miss_type = -1;
	if (mnl_socket_sendto(g->nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	return mobio_genl_run(g, nlh->nlmsg_seq, g->portid, &t);
}

/* --- Resolving the family ------------------------------------------------- */

static int mobio_genl_group_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (type == CTRL_ATTR_MCAST_GRP_NAME &&
	    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
		tb[type] = attr;
	else if (type == CTRL_ATTR_MCAST_GRP_ID &&
		 mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
		tb[type] = attr;
	return MNL_CB_OK;
}

static void mobio_genl_parse_groups(struct mobio_genl *g,
				    const struct nlattr *groups)
{
	const struct nlattr *grp;

	mnl_attr_for_each_nested(grp, groups) {
		const struct nlattr *tb[CTRL_ATTR_MCAST_GRP_MAX + 1] = { 0 };

		mnl_attr_parse_nested(grp, mobio_genl_group_cb, tb);
		if (tb[CTRL_ATTR_MCAST_GRP_NAME] && tb[CTRL_ATTR_MCAST_GRP_ID] &&
		    strcmp(mnl_attr_get_str(tb[CTRL_ATTR_MCAST_GRP_NAME]),
			   MOBIO_GENL_MCGRP_EVENTS) == 0)
			g->events_group =
				mnl_attr_get_u32(tb[CTRL_ATTR_MCAST_GRP_ID]);
	}
}

static int mobio_genl_family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct mobio_genl *g = data;
	const struct nlattr *attr;
	bool have_id = false;

	mnl_attr_for_each(attr, nlh, GENL_HDRLEN) {
		switch (mnl_attr_get_type(attr)) {
		case CTRL_ATTR_FAMILY_ID:
			if (mnl_attr_validate(attr, MNL_TYPE_U16) == 0) {
				g->family_id = mnl_attr_get_u16(attr);
				have_id = true;
			}
			break;
		case CTRL_ATTR_VERSION:
			if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
				g->version = mnl_attr_get_u32(attr);
			break;
		case CTRL_ATTR_MCAST_GROUPS:
			mobio_genl_parse_groups(g, attr);
			break;
		default:
			break;
		}
	}
	if (!have_id) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	g->resolved = true;
	return MNL_CB_OK;
}

int mobio_genl_open(struct mobio_genl *g, const char *family)
{
	char buf[MOBIO_GENL_SNDBUF];
	struct nlmsghdr *nlh;
	int one = 1, err;

	memset(g, 0, sizeof(*g));
	g->family = family;
	g->seq = (uint32_t)time(NULL);
	g->rcvbuf = malloc(MOBIO_GENL_RCVBUF);
	if (!g->rcvbuf)
		return -1;
	g->nl = mnl_socket_open(NETLINK_GENERIC);
	if (!g->nl)
		goto err_free;
	if (mnl_socket_bind(g->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto err_close;
	g->portid = mnl_socket_get_portid(g->nl);
	/* Kernels before 4.12 lack these; errors then come without text. */
	mnl_socket_setsockopt(g->nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(g->nl, NETLINK_CAP_ACK, &one, sizeof(one));

	/* Until the reply names the family, replies come from nlctrl. */
	g->family_id = GENL_ID_CTRL;
	nlh = mobio_genl_request(g, buf, CTRL_CMD_GETFAMILY, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, family);
	if (mobio_genl_talk(g, nlh, mobio_genl_family_cb, g) < 0)
		goto err_close;		/* ENOENT: no such family */
	if (!g->resolved) {	/* no reply, only the ack */
		errno = ENOENT;
		goto err_close;
	}
	if (g->version != MOBIO_GENL_VERSION) {
		errno = EPROTO;
		goto err_close;
	}
	return 0;

err_close:
	err = errno;
	mnl_socket_close(g->nl);
	g->nl = NULL;
	errno = err;
err_free:
	err = errno;
	free(g->rcvbuf);
	g->rcvbuf = NULL;
	errno = err;
	return -1;
}

void mobio_genl_close(struct mobio_genl *g)
{
	if (g->nl)
		mnl_socket_close(g->nl);
	free(g->rcvbuf);
	g->nl = NULL;
	g->rcvbuf = NULL;
}

/* --- Events --------------------------------------------------------------- */

int mobio_genl_join_events(struct mobio_genl *g)
{
	int group = (int)g->events_group;

	if (!g->events_group) {
		errno = ENOENT;
		return -1;
	}
	return mnl_socket_setsockopt(g->nl, NETLINK_ADD_MEMBERSHIP, &group,
				     sizeof(group));
}

int mobio_genl_listen(struct mobio_genl *g, mnl_cb_t cb, void *data)
{
	struct mobio_genl_talk t = { .g = g, .cb = cb, .data = data };

	/* Multicast carries seq 0 and the kernel's portid 0: check neither. */
	return mobio_genl_run(g, 0, 0, &t);
}
