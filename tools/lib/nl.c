// SPDX-License-Identifier: MIT
/*
 * nl.c - the generic netlink plumbing of ccomctl and ccomd over libnl-3
 * (nl.h): resolving the
 * nccom family (with a clear message when the module is not loaded),
 * requests and dumps whose replies are parsed into attribute tables for the
 * object files, the kernel's extack message on errors, and the events group.
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

#include "nl.h"

/* State of one request while libnl runs its callbacks. */
struct nl_req {
	struct ctl_nl *nl;
	ctl_nl_cb cb;
	void *arg;
	int maxattr;
	int err;		/* -errno from the kernel's NLMSG_ERROR, or from @cb */
	int done;
	char extack[256];
};

const char *ctl_event_name(uint32_t type)
{
	switch (type) {
	case NCCOM_NL_EVENT_QUEUE_ERROR:
		return "queue-error";
	case NCCOM_NL_EVENT_SEM_TIMEOUT:
		return "sem-timeout";
	case NCCOM_NL_EVENT_CLIENT_DIED:
		return "client-died";
	default:
		return "unknown";
	}
}

uint64_t ctl_nla_u64(struct nlattr *a)
{
	return nla_len(a) >= 8 ? nla_get_u64(a) : nla_get_u32(a);
}

static int nl_errno_exit(int err)
{
	switch (err) {
	case -EPERM:
	case -EACCES:
		return CTL_EPERM;
	case -ENOENT:
	case -ENODEV:
		return CTL_ENOENT;
	case -EOPNOTSUPP:
		return CTL_ENODRV;
	case -EINVAL:
	case -ERANGE:
		return CTL_EUSAGE;	/* the kernel rejected the request */
	default:
		return CTL_EIO;
	}
}

int ctl_nl_open(struct ctl_nl *nl)
{
	int err, one = 1;

	if (nl->sk)
		return CTL_OK;
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		fprintf(stderr, "ccomctl: out of memory for a netlink socket\n");
		return CTL_EIO;
	}
	err = genl_connect(nl->sk);
	if (err) {
		fprintf(stderr, "ccomctl: cannot open a generic netlink socket: %s\n", nl_geterror(err));
		goto err_free;
	}
	/* Ask for the kernel's explanation of a rejected request (extack). */
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	nl->family = genl_ctrl_resolve(nl->sk, NCCOM_GENL_NAME);
	if (nl->family < 0) {
		if (nl->quiet)
			goto err_free;
		if (access("/sys/module/nccom", F_OK) == 0)
			fprintf(stderr,
				"ccomctl: the nccom module is loaded but has no \"%s\" netlink family; it is older than this ccomctl (reload a current nccom.ko)\n",
				NCCOM_GENL_NAME);
		else
			fprintf(stderr,
				"ccomctl: the nccom driver is not loaded (no \"%s\" netlink family); load it with `modprobe nccom` or `insmod nccom.ko`\n",
				NCCOM_GENL_NAME);
		goto err_free;
	}
	return CTL_OK;

err_free:
	nl_socket_free(nl->sk);
	nl->sk = NULL;
	return CTL_ENODRV;
}

void ctl_nl_close(struct ctl_nl *nl)
{
	if (nl->sk)
		nl_socket_free(nl->sk);
	nl->sk = NULL;
}

struct nl_msg *ctl_nl_msg(struct ctl_nl *nl, uint8_t cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, flags, cmd,
			 NCCOM_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static int nl_valid_cb(struct nl_msg *msg, void *arg)
{
	struct nl_req *r = arg;
	struct nlattr *tb[64] = { NULL };
	int err;

	if (r->maxattr >= (int)(sizeof(tb) / sizeof(tb[0])))
		return NL_STOP;
	err = genlmsg_parse(nlmsg_hdr(msg), 0, tb, r->maxattr, NULL);
	if (err < 0) {
		r->err = -EPROTO;
		return NL_STOP;
	}
	err = r->cb(r->nl, tb, r->arg);
	if (err) {
		r->err = err;
		return NL_STOP;
	}
	return NL_OK;
}

/* The kernel's extended ack: the NLMSGERR_ATTR_MSG string after the error. */
static void nl_extack(struct nl_req *r, struct nlmsghdr *nlh, struct nlmsgerr *e)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct nlattr *attrs;
	int len;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	len = sizeof(*e);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		len += e->msg.nlmsg_len - NLMSG_HDRLEN;
	if ((int)nlh->nlmsg_len < NLMSG_HDRLEN + len)
		return;
	attrs = (struct nlattr *)((char *)e + NLMSG_ALIGN(len));
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, attrs, nlh->nlmsg_len - NLMSG_HDRLEN - NLMSG_ALIGN(len),
		      NULL))
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(r->extack, sizeof(r->extack), "%s", nla_get_string(tb[NLMSGERR_ATTR_MSG]));
}

static int nl_error_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nl_req *r = arg;
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);

	(void)nla;
	r->err = e->error;
	r->done = 1;
	nl_extack(r, nlh, e);
	return NL_STOP;
}

static int nl_finish_cb(struct nl_msg *msg, void *arg)
{
	struct nl_req *r = arg;

	(void)msg;
	r->done = 1;
	return NL_STOP;
}

static int nl_report(struct nl_req *r, const char *what)
{
	if (!r->err)
		return CTL_OK;
	if (r->nl->quiet)
		return nl_errno_exit(r->err);
	if (r->err == -EPERM)
		fprintf(stderr, "ccomctl: %s: operation not permitted (needs CAP_NET_ADMIN)%s%s\n",
			what, r->extack[0] ? ": " : "", r->extack);
	else if (r->err == -EOPNOTSUPP)
		fprintf(stderr, "ccomctl: %s: not supported by the loaded nccom driver\n", what);
	else
		fprintf(stderr, "ccomctl: %s: %s%s%s\n", what, strerror(-r->err),
			r->extack[0] ? ": " : "", r->extack);
	return nl_errno_exit(r->err);
}

int ctl_nl_request(struct ctl_nl *nl, struct nl_msg *msg, int maxattr, ctl_nl_cb cb, void *arg)
{
	struct nl_req r = { .nl = nl, .cb = cb, .arg = arg, .maxattr = maxattr };
	struct nl_cb *nlcb;
	int err;

	nlcb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!nlcb) {
		nlmsg_free(msg);
		return CTL_EIO;
	}
	nl_cb_set(nlcb, NL_CB_VALID, NL_CB_CUSTOM, nl_valid_cb, &r);
	nl_cb_set(nlcb, NL_CB_FINISH, NL_CB_CUSTOM, nl_finish_cb, &r);
	nl_cb_set(nlcb, NL_CB_ACK, NL_CB_CUSTOM, nl_finish_cb, &r);
	nl_cb_err(nlcb, NL_CB_CUSTOM, nl_error_cb, &r);
	nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_ACK;
	err = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	if (err < 0) {
		nl_cb_put(nlcb);
		fprintf(stderr, "ccomctl: netlink send failed: %s\n", nl_geterror(err));
		return CTL_EIO;
	}
	while (!r.done && !r.err) {
		err = nl_recvmsgs(nl->sk, nlcb);
		if (err < 0 && !r.err) {
			fprintf(stderr, "ccomctl: netlink receive failed: %s\n", nl_geterror(err));
			nl_cb_put(nlcb);
			return CTL_EIO;
		}
	}
	nl_cb_put(nlcb);
	return nl_report(&r, "request");
}

int ctl_nl_dump(struct ctl_nl *nl, uint8_t cmd, int maxattr, ctl_nl_cb cb, void *arg)
{
	struct nl_msg *msg;
	int rc;

	rc = ctl_nl_open(nl);
	if (rc)
		return rc;
	msg = ctl_nl_msg(nl, cmd, NLM_F_DUMP);
	if (!msg)
		return CTL_EIO;
	return ctl_nl_request(nl, msg, maxattr, cb, arg);
}

int ctl_nl_monitor(struct ctl_nl *nl, int maxattr, ctl_nl_cb cb, void *arg)
{
	struct nl_req r = { .nl = nl, .cb = cb, .arg = arg, .maxattr = maxattr };
	int grp, err, rc;

	rc = ctl_nl_open(nl);
	if (rc)
		return rc;
	grp = genl_ctrl_resolve_grp(nl->sk, NCCOM_GENL_NAME, NCCOM_NL_MCGRP_EVENTS);
	if (grp < 0) {
		fprintf(stderr, "ccomctl: the nccom family has no \"%s\" group: %s\n",
			NCCOM_NL_MCGRP_EVENTS, nl_geterror(grp));
		return CTL_ENODRV;
	}
	nl_socket_disable_seq_check(nl->sk);
	err = nl_socket_add_membership(nl->sk, grp);
	if (err) {
		fprintf(stderr, "ccomctl: cannot join the nccom events group: %s (needs CAP_NET_ADMIN)\n",
			nl_geterror(err));
		return err == -NLE_PERM ? CTL_EPERM : CTL_EIO;
	}
	nl_socket_modify_cb(nl->sk, NL_CB_VALID, NL_CB_CUSTOM, nl_valid_cb, &r);
	while (!r.err) {
		err = nl_recvmsgs_default(nl->sk);
		if (err < 0 && err != -NLE_INTR && err != -NLE_AGAIN) {
			fprintf(stderr, "ccomctl: netlink receive failed: %s\n", nl_geterror(err));
			return CTL_EIO;
		}
		if (nl->flush)
			fflush(nl->flush);
	}
	return r.err > 0 ? CTL_OK : nl_errno_exit(r.err);
}
