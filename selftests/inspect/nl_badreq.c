// SPDX-License-Identifier: MIT
/*
 * Description: malformed and unprivileged requests to the nccom generic
 * netlink family must fail with the right errno and an extended-ack
 * explanation (and no kernel warning: the VM runner checks dmesg).
 * As root: missing, wrong-length, out-of-range, unknown and unsupported
 * attributes, an oversized string, an unknown command, comm-get's
 * filters and lookups.  As any other user
 * (CAP_NET_ADMIN absent): queue-reset and stats-reset fail with EPERM and
 * joining the events group is refused.
 *
 * Exit: 0 pass, 1 fail, 77 when the family is absent.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <linux/nccom_genl.h>

static struct nl_sock *sk;
static int family, failures;

/* Send @msg and return the kernel's errno (0 = success); the extack text goes to @ext. */
static int request(struct nl_msg *msg, char *ext, size_t len)
{
	struct sockaddr_nl peer;
	unsigned char *buf = NULL;
	struct nlmsghdr *nlh;
	int n, err = 1;

	ext[0] = '\0';
	nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_ACK;
	if (nl_send_auto(sk, msg) < 0) {
		nlmsg_free(msg);
		return -EIO;
	}
	nlmsg_free(msg);
	while (err == 1 && (n = nl_recv(sk, &peer, &buf, NULL)) > 0) {
		for (nlh = (struct nlmsghdr *)buf; nlmsg_ok(nlh, n); nlh = nlmsg_next(nlh, &n)) {
			struct nlmsgerr *e = nlmsg_data(nlh);
			struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
			int off;

			if (nlh->nlmsg_type == NLMSG_DONE)
				err = 0;
			if (nlh->nlmsg_type != NLMSG_ERROR)
				continue;
			err = e->error;
			off = sizeof(*e);
			if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
				off += e->msg.nlmsg_len - NLMSG_HDRLEN;
			if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
			    !nla_parse(tb, NLMSGERR_ATTR_MAX,
				       (struct nlattr *)((char *)e + NLMSG_ALIGN(off)),
				       nlh->nlmsg_len - NLMSG_HDRLEN - NLMSG_ALIGN(off), NULL)) {
				if (tb[NLMSGERR_ATTR_MSG])
					snprintf(ext, len, "%s", nla_get_string(tb[NLMSGERR_ATTR_MSG]));
				else if (tb[NLMSGERR_ATTR_MISS_TYPE])
					snprintf(ext, len, "missing attribute %u",
						 nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]));
				else if (tb[NLMSGERR_ATTR_OFFS])
					snprintf(ext, len, "bad attribute at offset %u",
						 nla_get_u32(tb[NLMSGERR_ATTR_OFFS]));
			}
			break;
		}
		free(buf);
		buf = NULL;
	}
	return err == 1 ? -EIO : err;
}

static struct nl_msg *msg_new(uint8_t cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, cmd, NCCOM_GENL_VERSION);
	return msg;
}

/* Expect errno @want and a non-empty extack (if @need_ext). */
static void expect(const char *name, struct nl_msg *msg, int want, int need_ext)
{
	char ext[256];
	int err = request(msg, ext, sizeof(ext));

	if (err == want && (!need_ext || ext[0])) {
		printf("ok      %s: %s (%s)\n", name, strerror(-err), ext);
		return;
	}
	printf("FAIL    %s: got %d (%s) extack \"%s\", want %d%s\n", name, err,
	       strerror(err < 0 ? -err : 0), ext, want, need_ext ? " with an extack" : "");
	failures++;
}

static void root_cases(void)
{
	char big[100];
	struct nl_msg *m;
	uint64_t v64 = 0;

	expect("dev-get without index", msg_new(NCCOM_NL_CMD_DEV_GET, 0), -EINVAL, 1);
	m = msg_new(NCCOM_NL_CMD_DEV_GET, 0);
	nla_put(m, NCCOM_NL_A_DEV_INDEX, sizeof(v64), &v64);
	expect("dev-get index of 8 bytes", m, -EINVAL, 1);
	m = msg_new(NCCOM_NL_CMD_DEV_GET, 0);
	nla_put_u32(m, NCCOM_NL_A_DEV_INDEX, 99);
	expect("dev-get index out of range", m, -ERANGE, 1);
	m = msg_new(NCCOM_NL_CMD_DEV_GET, 0);
	nla_put_u32(m, NCCOM_NL_A_DEV_MAX + 5, 0);
	expect("unknown attribute type", m, -EINVAL, 1);
	m = msg_new(NCCOM_NL_CMD_DEV_GET, 0);
	nla_put_u32(m, NCCOM_NL_A_DEV_NENGINES, 1);
	expect("reply-only attribute in a request", m, -EINVAL, 1);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	m = msg_new(NCCOM_NL_CMD_CLIENT_GET, NLM_F_DUMP);
	nla_put_string(m, NCCOM_NL_A_CLIENT_COMM, big);
	expect("oversized comm string", m, -EINVAL, 1);
	m = msg_new(NCCOM_NL_CMD_CLIENT_GET, 0);
	nla_put_u32(m, NCCOM_NL_A_CLIENT_ID, 0x7ffffff0);
	expect("client-get of a missing client", m, -ENOENT, 1);
	m = msg_new(NCCOM_NL_CMD_QUEUE_GET, 0);
	nla_put_u32(m, NCCOM_NL_A_QUEUE_CLIENT_ID, 1);
	expect("queue-get without handle", m, -EINVAL, 1);
	m = msg_new(NCCOM_NL_CMD_COMM_GET, NLM_F_DUMP);
	nla_put_u32(m, NCCOM_NL_A_COMM_HASH, 1);
	expect("comm-get hash of 4 bytes", m, -EINVAL, 1);
	m = msg_new(NCCOM_NL_CMD_COMM_GET, NLM_F_DUMP);
	nla_put_u32(m, NCCOM_NL_A_COMM_CLIENT_ID, 0);
	expect("comm-get client-id 0", m, -ERANGE, 1);
	m = msg_new(NCCOM_NL_CMD_COMM_GET, NLM_F_DUMP);
	nla_put_string(m, NCCOM_NL_A_COMM_ERROR_MSG, "x");
	expect("comm-get with a reply-only attribute", m, -EINVAL, 1);
	m = msg_new(NCCOM_NL_CMD_COMM_GET, 0);
	nla_put_u32(m, NCCOM_NL_A_COMM_CLIENT_ID, 1);
	expect("comm-get without handle", m, -EINVAL, 1);
	m = msg_new(NCCOM_NL_CMD_COMM_GET, 0);
	nla_put_u32(m, NCCOM_NL_A_COMM_CLIENT_ID, 0x7ffffff0);
	nla_put_u32(m, NCCOM_NL_A_COMM_HANDLE, 1);
	expect("comm-get of a missing client", m, -ENOENT, 1);
	expect("unknown command", msg_new(NCCOM_NL_CMD_MAX + 7, 0), -EOPNOTSUPP, 0);
	m = msg_new(NCCOM_NL_CMD_STATS_RESET, 0);
	nla_put_u32(m, NCCOM_NL_A_STATS_DEV_INDEX, 0);
	expect("stats-reset as root", m, 0, 0);
}

static void user_cases(void)
{
	struct nl_sock *gsk;
	struct nl_msg *m;
	int grp, err;

	m = msg_new(NCCOM_NL_CMD_STATS_RESET, 0);
	expect("stats-reset unprivileged", m, -EPERM, 0);
	m = msg_new(NCCOM_NL_CMD_QUEUE_RESET, 0);
	nla_put_u32(m, NCCOM_NL_A_QUEUE_CLIENT_ID, 1);
	nla_put_u32(m, NCCOM_NL_A_QUEUE_HANDLE, 1);
	expect("queue-reset unprivileged", m, -EPERM, 0);
	/* A fresh socket: the raw receives above bypassed libnl's sequence checks. */
	gsk = nl_socket_alloc();
	if (!gsk || genl_connect(gsk)) {
		printf("FAIL    cannot open a second netlink socket\n");
		failures++;
		return;
	}
	grp = genl_ctrl_resolve_grp(gsk, NCCOM_GENL_NAME, NCCOM_NL_MCGRP_EVENTS);
	err = grp < 0 ? grp : nl_socket_add_membership(gsk, grp);
	nl_socket_free(gsk);
	if (err == -NLE_PERM) {
		printf("ok      events group refused to an unprivileged user\n");
	} else {
		printf("FAIL    events group join: %s, want a permission error\n", nl_geterror(err));
		failures++;
	}
}

int main(void)
{
	int one = 1;

	sk = nl_socket_alloc();
	if (!sk || genl_connect(sk))
		return 1;
	/* Without NETLINK_EXT_ACK the kernel sends no explanation. */
	if (setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)))
		return 1;
	family = genl_ctrl_resolve(sk, NCCOM_GENL_NAME);
	if (family < 0) {
		printf("skip: no %s family\n", NCCOM_GENL_NAME);
		return 77;
	}
	if (geteuid() == 0)
		root_cases();
	else
		user_cases();
	nl_socket_free(sk);
	return failures ? 1 : 0;
}
