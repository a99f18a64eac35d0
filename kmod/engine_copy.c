// SPDX-License-Identifier: GPL-2.0
/*
 * nccom engine copy: the routine the engine moves bytes with (COPY
 * descriptors and the reduction bounce buffers), chosen once at load.
 *
 * The kernel's memcpy() is the right choice on hardware, but its variant
 * depends on the kernel and the CPU flags: 6.1 runs "rep movsb" whenever
 * the CPU has ERMS, 6.12 only with FSRM. Under QEMU TCG (where this
 * driver is tested) "rep movsb" is emulated a byte per iteration, and a
 * 6.1 guest's memcpy() measured 10-40x slower than a plain word loop, so
 * the engine path lost to userspace copies by 5-10x. At load the driver
 * therefore times both routines on the same buffers and uses the faster;
 * the copy= parameter forces one and reads back the one in use.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "nccom_private.h"

enum nccom_copy_variant {
	NCCOM_COPY_AUTO,
	NCCOM_COPY_MEMCPY,
	NCCOM_COPY_WORDS,
};

static const char * const nccom_copy_names[] = {
	[NCCOM_COPY_AUTO] = "auto",
	[NCCOM_COPY_MEMCPY] = "memcpy",
	[NCCOM_COPY_WORDS] = "words",
};

/* As asked at load; after nccom_copy_init() the variant in use. */
static int nccom_copy_variant = NCCOM_COPY_AUTO;

/* An unaligned word (the header moved between 6.1 and 6.12). */
struct nccom_uword {
	u64 v;
} __packed;

#define NCCOM_COPY_PROBE_ORDER	4	/* 64 KiB per timed copy */
#define NCCOM_COPY_PROBE_REPS	3

static void nccom_copy_words(void *dst, const void *src, size_t len)
{
	struct nccom_uword *d = dst;
	const struct nccom_uword *s = src;
	u8 *db;
	const u8 *sb;

	while (len >= 32) {
		u64 w0 = s[0].v, w1 = s[1].v, w2 = s[2].v, w3 = s[3].v;

		d[0].v = w0;
		d[1].v = w1;
		d[2].v = w2;
		d[3].v = w3;
		/* Keep the compiler from turning the loop into memcpy(). */
		barrier();
		s += 4;
		d += 4;
		len -= 32;
	}
	while (len >= 8) {
		d->v = s->v;
		barrier();
		s++;
		d++;
		len -= 8;
	}
	db = (u8 *)d;
	sb = (const u8 *)s;
	while (len--)
		*db++ = *sb++;
}

/**
 * nccom_copy() - copy @len bytes from @src to @dst with the chosen routine
 * @dst: destination (kernel address)
 * @src: source (kernel address), not overlapping @dst
 * @len: bytes
 */
void nccom_copy(void *dst, const void *src, size_t len)
{
	if (nccom_copy_variant == NCCOM_COPY_WORDS)
		nccom_copy_words(dst, src, len);
	else
		memcpy(dst, src, len);
}

/*
 * Best of a few page-by-page copies of the probe buffer, in ns. The piece
 * length is read through READ_ONCE() so that the compiler cannot inline a
 * constant-size memcpy() ("rep movsq"): the engine's lengths vary, and the
 * kernel's out-of-line memcpy() is what has to be timed.
 */
static u64 nccom_copy_time(int variant, void *dst, const void *src)
{
	size_t len = PAGE_SIZE << NCCOM_COPY_PROBE_ORDER, piece = PAGE_SIZE;
	u64 best = U64_MAX;
	int rep;

	for (rep = 0; rep < NCCOM_COPY_PROBE_REPS; rep++) {
		u64 t0 = ktime_get_ns(), t;
		size_t off;

		for (off = 0; off < len; off += PAGE_SIZE) {
			if (variant == NCCOM_COPY_WORDS)
				nccom_copy_words(dst + off, src + off,
						 READ_ONCE(piece));
			else
				memcpy(dst + off, src + off, READ_ONCE(piece));
		}
		t = ktime_get_ns() - t0;
		best = min(best, t);
	}
	return best;
}

/**
 * nccom_copy_init() - resolve copy=auto by timing memcpy() and the word loop
 *
 * Called once at load, before the engines start. The word loop is chosen
 * only when it measured at least 10% faster; if the probe buffers cannot
 * be allocated, memcpy() is used.
 */
void nccom_copy_init(void)
{
	struct page *a, *b;
	u64 t_memcpy, t_words;

	if (nccom_copy_variant != NCCOM_COPY_AUTO) {
		pr_info("nccom: engine copy: %s (forced)\n",
			nccom_copy_names[nccom_copy_variant]);
		return;
	}
	nccom_copy_variant = NCCOM_COPY_MEMCPY;
	a = alloc_pages(GFP_KERNEL, NCCOM_COPY_PROBE_ORDER);
	b = alloc_pages(GFP_KERNEL, NCCOM_COPY_PROBE_ORDER);
	if (a && b) {
		memset(page_address(a), 0x5a, PAGE_SIZE << NCCOM_COPY_PROBE_ORDER);
		t_memcpy = nccom_copy_time(NCCOM_COPY_MEMCPY, page_address(b),
					   page_address(a));
		t_words = nccom_copy_time(NCCOM_COPY_WORDS, page_address(b),
					  page_address(a));
		if (t_words * 10 < t_memcpy * 9)
			nccom_copy_variant = NCCOM_COPY_WORDS;
		pr_info("nccom: engine copy: memcpy %llu ns, word loop %llu ns per %lu KiB: %s\n",
			t_memcpy, t_words,
			(PAGE_SIZE << NCCOM_COPY_PROBE_ORDER) >> 10,
			nccom_copy_names[nccom_copy_variant]);
	} else {
		pr_info("nccom: engine copy: memcpy (no memory for the probe)\n");
	}
	if (a)
		__free_pages(a, NCCOM_COPY_PROBE_ORDER);
	if (b)
		__free_pages(b, NCCOM_COPY_PROBE_ORDER);
}

static int nccom_copy_param_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(nccom_copy_names, val);

	if (i < 0)
		return -EINVAL;
	*(int *)kp->arg = i;
	return 0;
}

static int nccom_copy_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", nccom_copy_names[*(int *)kp->arg]);
}

static const struct kernel_param_ops nccom_copy_param_ops = {
	.set = nccom_copy_param_set,
	.get = nccom_copy_param_get,
};

module_param_cb(copy, &nccom_copy_param_ops, &nccom_copy_variant, 0444);
MODULE_PARM_DESC(copy, "Engine copy routine: auto (timed at load, default), memcpy or words; reads back the one in use");
