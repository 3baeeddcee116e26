/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cstime: the messages between the shim (libcstime.so, in the measured
 * program) and cstime (the parent).  One connection per message on a
 * SOCK_SEQPACKET Unix socket whose path is in $CSTIME_SOCK; the parent
 * answers every message with one byte once it has handled it, so that the
 * messages of one process are handled in the order the program made them.
 */
#ifndef CSTIME_PROTO_H
#define CSTIME_PROTO_H

#include <stdint.h>

#define CST_MAGIC		0x31545343	/* "CST1" */
#define CST_ENV_SOCK		"CSTIME_SOCK"
#define CST_ENV_DEBUG		"CSTIME_DEBUG"
#define CST_COMM_LEN		16

enum cst_type {
	CST_REG		= 1,	/* a page's fd (SCM_RIGHTS) of thread @tid */
	CST_ERR		= 2,	/* registration failed with errno @err */
	CST_NAME	= 3,	/* thread @handle (pthread_t) is now @comm */
};

enum cst_how {
	CST_HOW_MAIN	= 1,	/* the constructor: the main thread of an image */
	CST_HOW_THREAD	= 2,	/* a thread started by pthread_create() */
	CST_HOW_FORK	= 3,	/* the child of fork() */
};

struct cst_msg {
	uint32_t	magic;
	uint32_t	type;		/* enum cst_type */
	int32_t		err;		/* CST_ERR: errno of prctl() */
	int32_t		tid;		/* gettid() of the sender */
	uint32_t	how;		/* enum cst_how */
	uint32_t	__pad;
	uint64_t	handle;		/* pthread_self(), or the renamed thread */
	char		comm[CST_COMM_LEN];
};

#endif /* CSTIME_PROTO_H */
