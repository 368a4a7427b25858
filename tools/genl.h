/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Generic netlink client for the mobio families, over libmnl: resolve a
 * family by name, send one request and run the replies through a callback
 * until the ack (doit) or NLMSG_DONE (dump), keep the kernel's extack
 * message for the error line, and listen to a multicast group.
 */
#ifndef MOBIO_TOOLS_GENL_H
#define MOBIO_TOOLS_GENL_H

#include <stdbool.h>
#include <stdint.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>	/* GENL_HDRLEN: offset for mnl_attr_parse() */

/* Receive buffer, bytes: a dump skb is at most 32 KiB. */
#define MOBIO_GENL_RCVBUF	(32 * 1024)
/* Request buffer, bytes: requests carry a few small attributes. */
#define MOBIO_GENL_SNDBUF	4096
/* Longest extack message kept, bytes with the NUL. */
#define MOBIO_GENL_MSG_MAX	256

/* One socket talking to one family. */
struct mobio_genl {
	struct mnl_socket *nl;
	uint32_t portid;
	uint32_t seq;			/* of the last request sent */

	/* the family, from CTRL_CMD_GETFAMILY */
	const char *family;
	uint16_t family_id;
	bool resolved;			/* family_id is the family's */
	uint32_t version;		/* the kernel's, CTRL_ATTR_VERSION */
	uint32_t events_group;		/* MOBIO_GENL_MCGRP_EVENTS id, 0 if none */

	/* the last reply's extack, for error and warning lines */
	char ext_msg[MOBIO_GENL_MSG_MAX];	/* "" if none */
	int ext_miss_type;		/* NLMSGERR_ATTR_MISS_TYPE or -1 */

	char *rcvbuf;			/* MOBIO_GENL_RCVBUF bytes */
};

/*
 * Open a socket with NETLINK_EXT_ACK and NETLINK_CAP_ACK and resolve
 * @family. Return 0, or -1 with errno: ENOENT when the family is not
 * registered (module not loaded), EPROTO when its version is not
 * MOBIO_GENL_VERSION, or what the socket calls said.
 */
int mobio_genl_open(struct mobio_genl *g, const char *family);
void mobio_genl_close(struct mobio_genl *g);

/*
 * Start a request for command @cmd in @buf (MOBIO_GENL_SNDBUF bytes):
 * nlmsghdr with NLM_F_REQUEST | @flags and a fresh sequence number, then
 * the genlmsghdr. Add attributes with mnl_attr_put_*().
 */
struct nlmsghdr *mobio_genl_request(struct mobio_genl *g, void *buf,
				    uint8_t cmd, uint16_t flags);

/*
 * Send @nlh and run every reply message of the family through @cb (may be
 * NULL) until the ack or NLMSG_DONE. A doit request should carry NLM_F_ACK
 * (mobio_genl_request() adds it unless @flags has NLM_F_DUMP). Return 0,
 * or -1 with errno (the kernel's error for an NLMSG_ERROR reply) and the
 * extack message, if any, in g->ext_msg.
 */
int mobio_genl_talk(struct mobio_genl *g, struct nlmsghdr *nlh, mnl_cb_t cb,
		    void *data);

/* Join the family's "events" group; -1 with errno ENOENT if it has none. */
int mobio_genl_join_events(struct mobio_genl *g);

/*
 * Receive multicast messages and run each through @cb until it returns
 * MNL_CB_STOP (0) or an error happens (-1 with errno).
 */
int mobio_genl_listen(struct mobio_genl *g, mnl_cb_t cb, void *data);

#endif /* MOBIO_TOOLS_GENL_H */
