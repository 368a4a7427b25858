/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * SmartIO tracepoints: why each request left the scheduler, and what the
 * controller saw and chose at the end of each window.
 *
 *	echo 1 > /sys/kernel/tracing/events/smartio/enable
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM smartio

#if !defined(_SMARTIO_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SMARTIO_TRACE_H

#include <linux/blkdev.h>
#include <linux/tracepoint.h>

/* The enums are the scheduler's (smartio-iosched.c), included before this. */
TRACE_DEFINE_ENUM(SMARTIO_RT);
TRACE_DEFINE_ENUM(SMARTIO_BE);
TRACE_DEFINE_ENUM(SMARTIO_IDLE);
TRACE_DEFINE_ENUM(SMARTIO_WHY_HEAD);
TRACE_DEFINE_ENUM(SMARTIO_WHY_EXPIRED);
TRACE_DEFINE_ENUM(SMARTIO_WHY_READ);
TRACE_DEFINE_ENUM(SMARTIO_WHY_WRITE);
TRACE_DEFINE_ENUM(SMARTIO_WHY_WRITE_ALONE);
TRACE_DEFINE_ENUM(SMARTIO_WHY_FG_READ);
TRACE_DEFINE_ENUM(SMARTIO_WHY_IDLE);
TRACE_DEFINE_ENUM(SMARTIO_WHY_IDLE_GUARD);

#define smartio_show_class(c)						\
	__print_symbolic(c, { SMARTIO_RT, "rt" }, { SMARTIO_BE, "be" },	\
			 { SMARTIO_IDLE, "idle" })
#define smartio_show_why(w)						\
	__print_symbolic(w, { SMARTIO_WHY_HEAD, "head" },		\
			 { SMARTIO_WHY_EXPIRED, "expired" },		\
			 { SMARTIO_WHY_FG_READ, "fg-read" },		\
			 { SMARTIO_WHY_READ, "read-first" },		\
			 { SMARTIO_WHY_WRITE, "write-beside-reads" },	\
			 { SMARTIO_WHY_WRITE_ALONE, "write-alone" },	\
			 { SMARTIO_WHY_IDLE, "idle-quiet" },		\
			 { SMARTIO_WHY_IDLE_GUARD, "idle-guard" })

TRACE_EVENT(smartio_dispatch,
	    TP_PROTO(dev_t dev, unsigned int class, bool write, unsigned int why,
		     sector_t sector, unsigned int bytes,
		     unsigned int writes_inflight,
		     unsigned int write_rate_kbps),
	    TP_ARGS(dev, class, write, why, sector, bytes, writes_inflight,
		    write_rate_kbps),
	    TP_STRUCT__entry(__field(dev_t, dev)
			     __field(u8, class)
			     __field(bool, write)
			     __field(u8, why)
			     __field(sector_t, sector)
			     __field(unsigned int, bytes)
			     __field(unsigned int, writes_inflight)
			     __field(unsigned int, write_rate_kbps)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->class = class;
			   __entry->write = write;
			   __entry->why = why;
			   __entry->sector = sector;
			   __entry->bytes = bytes;
			   __entry->writes_inflight = writes_inflight;
			   __entry->write_rate_kbps = write_rate_kbps;),
	    TP_printk("%d,%d %s %s %s sector=%llu bytes=%u writes_inflight=%u write_rate_kbps=%u",
		      MAJOR(__entry->dev), MINOR(__entry->dev),
		      smartio_show_class(__entry->class),
		      __entry->write ? "write" : "read",
		      smartio_show_why(__entry->why),
		      (unsigned long long)__entry->sector, __entry->bytes,
		      __entry->writes_inflight, __entry->write_rate_kbps)
);

TRACE_EVENT(smartio_control,
	    TP_PROTO(dev_t dev, u64 read_pct_us, u64 slowdown_pct,
		     u64 target_pct, u64 target_us, u64 write_rate_kbps),
	    TP_ARGS(dev, read_pct_us, slowdown_pct, target_pct, target_us,
		    write_rate_kbps),
	    TP_STRUCT__entry(__field(dev_t, dev)
			     __field(u64, read_pct_us)
			     __field(u64, slowdown_pct)
			     __field(u64, target_pct)
			     __field(u64, target_us)
			     __field(u64, write_rate_kbps)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->read_pct_us = read_pct_us;
			   __entry->slowdown_pct = slowdown_pct;
			   __entry->target_pct = target_pct;
			   __entry->target_us = target_us;
			   __entry->write_rate_kbps = write_rate_kbps;),
	    TP_printk("%d,%d read_lat_us=%llu slowdown_pct=%llu target_pct=%llu target_us=%llu write_rate_kbps=%llu",
		      MAJOR(__entry->dev), MINOR(__entry->dev),
		      __entry->read_pct_us, __entry->slowdown_pct,
		      __entry->target_pct, __entry->target_us,
		      __entry->write_rate_kbps)
);

#endif /* _SMARTIO_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE smartio_trace
#include <trace/define_trace.h>
