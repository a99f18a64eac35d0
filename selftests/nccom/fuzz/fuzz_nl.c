// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the netlink half of the nccom fuzzer: random generic netlink
 * messages to the "nccom" family over a raw NETLINK_GENERIC socket (every
 * command and unknown ones, do and dump, mutated attributes: wrong types and
 * lengths, unknown attribute numbers, nested garbage, oversized and
 * unterminated strings, truncated headers), dumps abandoned half read by
 * closing the socket, as root and as the unprivileged uid.
 *
 * Oracles: every reply parses (lengths inside the message); an error is a
 * negative errno from the documented netlink set; an unprivileged worker
 * never sees a client of another uid (NCCOM_NL_A_CLIENT_UID) and its
 * queue-reset / stats-reset requests fail with EPERM.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/nccom_genl.h>

#include "fuzz.h"

#define NLBUF 16384

struct nlw {
	struct fz_rng r;
	int sock;
	uint16_t family;
	uint32_t seq;
	uint8_t tx[4096];
	uint8_t rx[NLBUF];
};

static int nl_open(void)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK };
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);

	if (s < 0)
		return -1;
	if (bind(s, (struct sockaddr *)&a, sizeof(a))) {
		close(s);
		return -1;
	}
	return s;
}

static void put_attr(uint8_t *buf, size_t *off, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr *na = (struct nlattr *)(buf + *off);

	na->nla_type = type;
	na->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy(buf + *off + NLA_HDRLEN, data, len);
	*off += NLA_ALIGN(na->nla_len);
}

/* Resolves the family id with CTRL_CMD_GETFAMILY. */
static int nl_family(struct nlw *w)
{
	struct nlmsghdr *h = (struct nlmsghdr *)w->tx;
	struct genlmsghdr *g = NLMSG_DATA(h);
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN;
	ssize_t n;
	struct nlattr *na;
	int left;

	memset(w->tx, 0, 256);
	h->nlmsg_type = GENL_ID_CTRL;
	h->nlmsg_flags = NLM_F_REQUEST;
	h->nlmsg_seq = ++w->seq;
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	put_attr(w->tx, &off, CTRL_ATTR_FAMILY_NAME, NCCOM_GENL_NAME, sizeof(NCCOM_GENL_NAME));
	h->nlmsg_len = off;
	if (send(w->sock, w->tx, off, 0) != (ssize_t)off)
		return -1;
	n = recv(w->sock, w->rx, sizeof(w->rx), 0);
	h = (struct nlmsghdr *)w->rx;
	if (n < (ssize_t)NLMSG_HDRLEN || h->nlmsg_type == NLMSG_ERROR)
		return -1;
	na = (struct nlattr *)((uint8_t *)NLMSG_DATA(h) + GENL_HDRLEN);
	left = h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	while (left >= NLA_HDRLEN && na->nla_len >= NLA_HDRLEN && na->nla_len <= left) {
		if ((na->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID) {
			memcpy(&w->family, (uint8_t *)na + NLA_HDRLEN, 2);
			return 0;
		}
		left -= NLA_ALIGN(na->nla_len);
		na = (struct nlattr *)((uint8_t *)na + NLA_ALIGN(na->nla_len));
	}
	return -1;
}

/* Attribute maxima per command, for "almost valid" attributes. */
static int nl_maxattr(int cmd)
{
	switch (cmd) {
	case NCCOM_NL_CMD_DEV_GET: return NCCOM_NL_A_DEV_MAX;
	case NCCOM_NL_CMD_CLIENT_GET: return NCCOM_NL_A_CLIENT_MAX;
	case NCCOM_NL_CMD_QUEUE_GET: case NCCOM_NL_CMD_QUEUE_RESET: return NCCOM_NL_A_QUEUE_MAX;
	case NCCOM_NL_CMD_SEM_GET: return NCCOM_NL_A_SEM_MAX;
	case NCCOM_NL_CMD_STATS_GET: case NCCOM_NL_CMD_STATS_RESET: return NCCOM_NL_A_STATS_MAX;
	case NCCOM_NL_CMD_COMM_GET: return NCCOM_NL_A_COMM_MAX;
	default: return 16;
	}
}

/* Checks one reply message's attributes; returns false if malformed. */
static bool nl_check_reply(struct nlw *w, struct nlmsghdr *h, int cmd)
{
	struct genlmsghdr *g = NLMSG_DATA(h);
	struct nlattr *na;
	int left;

	if (h->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) {
		fz_finding("netlink cmd %d: reply of %u bytes, shorter than its headers", cmd,
			   h->nlmsg_len);
		return false;
	}
	na = (struct nlattr *)((uint8_t *)g + GENL_HDRLEN);
	left = h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	while (left >= NLA_HDRLEN) {
		if (na->nla_len < NLA_HDRLEN || na->nla_len > left) {
			fz_finding("netlink cmd %d: attribute %u of length %u with %d bytes left",
				   cmd, na->nla_type, na->nla_len, left);
			return false;
		}
		/* Isolation: an unprivileged requester sees only its own uid's clients. */
		if (g->cmd == NCCOM_NL_CMD_CLIENT_GET && geteuid() != 0 &&
		    (na->nla_type & NLA_TYPE_MASK) == NCCOM_NL_A_CLIENT_UID &&
		    na->nla_len >= NLA_HDRLEN + 4) {
			uint32_t uid;

			memcpy(&uid, (uint8_t *)na + NLA_HDRLEN, 4);
			fz_add(&fz_sh->isolation, 1);
			if (uid != geteuid())
				fz_finding("netlink client dump as uid %u shows a client of uid %u",
					   geteuid(), uid);
		}
		left -= NLA_ALIGN(na->nla_len);
		na = (struct nlattr *)((uint8_t *)na + NLA_ALIGN(na->nla_len));
	}
	(void)w;
	return true;
}

static bool nl_documented(int e)
{
	switch (e) {
	case 0: case EINVAL: case ENOENT: case EPERM: case EOPNOTSUPP: case ERANGE:
	case EMSGSIZE: case ENOMEM: case EBUSY: case E2BIG: case ENODEV: case ENOBUFS:
	case EAGAIN:
		return true;
	}
	return false;
}

/*
 * Reads replies until NLMSG_DONE / an error (or gives up after ~50 ms, or
 * after @maxmsgs messages, leaving the dump half read; @want_done: a dump
 * or an ACK ends the answer, else the first reply does). Returns the final
 * errno (0 = success), or -1 if abandoned.
 */
static int nl_read(struct nlw *w, int cmd, int maxmsgs, bool want_done)
{
	struct pollfd p = { .fd = w->sock, .events = POLLIN };
	int msgs = 0;

	for (;;) {
		ssize_t n;
		struct nlmsghdr *h;
		int left;

		if (poll(&p, 1, 50) <= 0)
			return -1;
		n = recv(w->sock, w->rx, sizeof(w->rx), MSG_DONTWAIT);
		if (n < 0)
			return errno == ENOBUFS ? ENOBUFS : -1;
		h = (struct nlmsghdr *)w->rx;
		left = n;
		while (NLMSG_OK(h, left)) {
			/*
			 * Only answers to this request: a truncated request's
			 * tail is parsed by the kernel as further messages whose
			 * answers must not be taken for this one's (that gave
			 * false "expected EPERM" findings).
			 */
			if (h->nlmsg_seq != w->seq) {
				h = NLMSG_NEXT(h, left);
				continue;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				return -e->error;
			}
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == w->family && !nl_check_reply(w, h, cmd))
				return -1;
			if (h->nlmsg_type == w->family && !want_done)
				return 0;	/* a do reply without ACK: nothing follows */
			h = NLMSG_NEXT(h, left);
		}
		if (++msgs >= maxmsgs)
			return -1;
	}
}

static void nl_one(struct nlw *w)
{
	struct nlmsghdr *h = (struct nlmsghdr *)w->tx;
	struct genlmsghdr *g = NLMSG_DATA(h);
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN, len;
	int cmd, nattr, i, maxattr, err, maxmsgs = 1000;
	bool dump, ack, perm_check = false;
	uint8_t payload[300];

	memset(w->tx, 0, sizeof(w->tx));
	cmd = fz_chance(&w->r, 90) ? 1 + fz_rnd(&w->r, NCCOM_NL_CMD_MAX) : fz_rnd(&w->r, 256);
	dump = fz_chance(&w->r, 50);
	ack = fz_chance(&w->r, 70);
	h->nlmsg_type = w->family;
	h->nlmsg_flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : 0) | (ack ? NLM_F_ACK : 0);
	h->nlmsg_seq = ++w->seq;
	g->cmd = cmd;
	g->version = fz_chance(&w->r, 90) ? NCCOM_GENL_VERSION : fz_rnd(&w->r, 256);
	maxattr = nl_maxattr(cmd);
	nattr = fz_rnd(&w->r, 5);
	for (i = 0; i < nattr && off < sizeof(w->tx) - 400; i++) {
		uint16_t type = fz_chance(&w->r, 85) ? 1 + fz_rnd(&w->r, maxattr) :
						       fz_rnd(&w->r, 0x10000);
		uint32_t v32;
		uint64_t v64;

		switch (fz_rnd(&w->r, 7)) {
		case 0:	/* a plausible u32: ids, handles, dev index */
			v32 = fz_chance(&w->r, 70) ? fz_rnd(&w->r, 8) : (uint32_t)fz_next(&w->r);
			put_attr(w->tx, &off, type, &v32, 4);
			break;
		case 1:
			v64 = fz_next(&w->r);
			put_attr(w->tx, &off, type, &v64, 8);
			break;
		case 2:	/* wrong length */
			len = fz_rnd(&w->r, 12);
			memset(payload, (int)fz_rnd(&w->r, 256), len);
			put_attr(w->tx, &off, type, payload, len);
			break;
		case 3: {	/* nested garbage */
			size_t start = off, inner;
			struct nlattr *na = (struct nlattr *)(w->tx + off);

			off += NLA_HDRLEN;
			inner = fz_rnd(&w->r, 4);
			while (inner--) {
				v32 = (uint32_t)fz_next(&w->r);
				put_attr(w->tx, &off, fz_rnd(&w->r, 20), &v32, fz_rnd(&w->r, 5));
			}
			na->nla_type = type | NLA_F_NESTED;
			na->nla_len = off - start;
			break;
		}
		case 4: {	/* strings: oversized, unterminated, empty */
			len = fz_chance(&w->r, 50) ? 16 + fz_rnd(&w->r, 200) : fz_rnd(&w->r, 16);
			for (size_t k = 0; k < len; k++)
				payload[k] = 'a' + fz_rnd(&w->r, 26);
			if (fz_chance(&w->r, 50) && len)
				payload[len - 1] = 0;
			put_attr(w->tx, &off, type, payload, len);
			break;
		}
		case 5: {	/* a length field that lies */
			struct nlattr *na = (struct nlattr *)(w->tx + off);

			v32 = (uint32_t)fz_next(&w->r);
			put_attr(w->tx, &off, type, &v32, 4);
			na->nla_len = fz_rnd(&w->r, 600);
			break;
		}
		default:	/* a flag */
			put_attr(w->tx, &off, type, NULL, 0);
			break;
		}
	}
	h->nlmsg_len = off;
	switch (fz_rnd(&w->r, 20)) {
	case 0:	/* truncated: the length cuts into the headers or the attributes */
		h->nlmsg_len = fz_rnd(&w->r, off + 1);
		break;
	case 1:	/* claims more than sent */
		h->nlmsg_len = off + 4 * (1 + fz_rnd(&w->r, 64));
		break;
	default:
		break;
	}
	/* Well-formed admin requests without CAP_NET_ADMIN must fail with EPERM. */
	if (geteuid() != 0 && !dump && h->nlmsg_len == off && g->version == NCCOM_GENL_VERSION &&
	    (cmd == NCCOM_NL_CMD_QUEUE_RESET || cmd == NCCOM_NL_CMD_STATS_RESET))
		perm_check = true;
	if (dump && fz_chance(&w->r, 15))
		maxmsgs = 1;	/* abandon the dump after one read */
	fz_sh->w[fz_slot].cur_op = 100 + cmd;
	if (send(w->sock, w->tx, off, 0) < 0) {
		fz_count(&fz_sh->nl_cov[cmd <= NCCOM_NL_CMD_MAX ? cmd : FZ_NNL - 1][fz_errslot(-1, errno)]);
		return;
	}
	fz_add(&fz_sh->nl_msgs, 1);
	err = nl_read(w, cmd, maxmsgs, dump || ack);
	if (err >= 0)
		fz_count(&fz_sh->nl_cov[cmd <= NCCOM_NL_CMD_MAX ? cmd : FZ_NNL - 1][fz_errslot(err ? -1 : 0, err)]);
	if (err > 0 && !nl_documented(err))
		fz_finding("netlink cmd %d (%s): undocumented error %s", cmd, dump ? "dump" : "do",
			   strerror(err));
	if (perm_check && err >= 0 && err != EPERM)
		fz_finding("netlink cmd %d as uid %u: %s, expected EPERM", cmd, geteuid(),
			   err ? strerror(err) : "success");
	if (err < 0 || fz_chance(&w->r, 5)) {
		/* Abandoned (half-read dump, or no answer): close mid-flight, reopen. */
		close(w->sock);
		w->sock = nl_open();
	}
}

int fz_nl_worker(uint64_t seed, uint64_t iters)
{
	static struct nlw w;
	uint64_t i;

	w.r.s = seed;
	w.sock = nl_open();
	if (w.sock < 0 || nl_family(&w)) {
		fz_finding("netlink: cannot resolve the %s family: %s", NCCOM_GENL_NAME,
			   strerror(errno));
		return 3;
	}
	for (i = 0; i < iters; i++) {
		fz_add(&fz_sh->ops, 1);
		fz_sh->w[fz_slot].ops = i;
		if (w.sock < 0)
			w.sock = nl_open();
		if (w.sock < 0) {
			fz_finding("netlink: socket: %s", strerror(errno));
			return 3;
		}
		nl_one(&w);
	}
	close(w.sock);
	return 0;
}
