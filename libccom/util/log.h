/* SPDX-License-Identifier: MIT */
/*
 * log.h - libccom logging: CCOM_DEBUG=WARN|INFO|TRACE, CCOM_DEBUG_SUBSYS,
 * CCOM_DEBUG_FILE (%h host, %p pid).  ccom_warn always prints file:line.
 */
#ifndef CCOM_UTIL_LOG_H
#define CCOM_UTIL_LOG_H

#include <stdarg.h>

enum ccom_log_level {
	CCOM_LOG_NONE = 0,
	CCOM_LOG_WARN = 1,
	CCOM_LOG_INFO = 2,
	CCOM_LOG_TRACE = 3,
};

/*
 * Subsystems, selectable with CCOM_DEBUG_SUBSYS=INIT,BOOT,... (or ^X to
 * exclude).  SHM and PROXY have no lines and are not selectable (log.c).
 */
enum ccom_subsys {
	CCOM_SUBSYS_INIT = 1u << 0,
	CCOM_SUBSYS_BOOT = 1u << 1,
	CCOM_SUBSYS_NET = 1u << 2,
	CCOM_SUBSYS_SHM = 1u << 3,
	CCOM_SUBSYS_COLL = 1u << 4,
	CCOM_SUBSYS_TUNE = 1u << 5,
	CCOM_SUBSYS_TOPO = 1u << 6,
	CCOM_SUBSYS_PROXY = 1u << 7,
	CCOM_SUBSYS_KDEV = 1u << 8,
	CCOM_SUBSYS_ENV = 1u << 9,
	CCOM_SUBSYS_ALL = ~0u,
};

void ccom_log(enum ccom_log_level level, unsigned int subsys, const char *file, int line,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* True if a message at @level for @subsys would be printed (to skip costly formatting). */
int ccom_log_enabled(enum ccom_log_level level, unsigned int subsys);
/* Rank printed in the line prefix of the calling thread's messages (-1: none). */
void ccom_log_set_rank(int rank);

#define ccom_warn(fmt, ...) \
	ccom_log(CCOM_LOG_WARN, CCOM_SUBSYS_ALL, __FILE__, __LINE__, fmt, ##__VA_ARGS__)
#define ccom_info(subsys, fmt, ...) \
	ccom_log(CCOM_LOG_INFO, subsys, __FILE__, __LINE__, fmt, ##__VA_ARGS__)
#define ccom_trace(subsys, fmt, ...) \
	ccom_log(CCOM_LOG_TRACE, subsys, __FILE__, __LINE__, fmt, ##__VA_ARGS__)

#endif
