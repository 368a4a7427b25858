/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * SmartIO tracepoints: why each request left the scheduler, and each change
 * the concurrency profiler made.
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
TRACE_DEFINE_ENUM(SMARTIO_ADJ_TIGHTEN);
TRACE_DEFINE_ENUM(SMARTIO_ADJ_RELAX);
TRACE_DEFINE_ENUM(SMARTIO_ADJ_PROBE);

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
#define smartio_show_adjust(a)						\
	__print_symbolic(a, { SMARTIO_ADJ_TIGHTEN, "tighten" },	\
			 { SMARTIO_ADJ_RELAX, "relax" },		\
			 { SMARTIO_ADJ_PROBE, "probe" })

TRACE_EVENT(smartio_dispatch,
	    TP_PROTO(dev_t dev, unsigned int class, bool write, unsigned int why,
		     sector_t sector, unsigned int bytes,
		     unsigned int writes_inflight, unsigned int write_cap),
	    TP_ARGS(dev, class, write, why, sector, bytes, writes_inflight,
		    write_cap),
	    TP_STRUCT__entry(__field(dev_t, dev)
			     __field(u8, class)
			     __field(bool, write)
			     __field(u8, why)
			     __field(sector_t, sector)
			     __field(unsigned int, bytes)
			     __field(unsigned int, writes_inflight)
			     __field(unsigned int, write_cap)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->class = class;
			   __entry->write = write;
			   __entry->why = why;
			   __entry->sector = sector;
			   __entry->bytes = bytes;
			   __entry->writes_inflight = writes_inflight;
			   __entry->write_cap = write_cap;),
	    TP_printk("%d,%d %s %s %s sector=%llu bytes=%u writes_inflight=%u write_cap=%u",
		      MAJOR(__entry->dev), MINOR(__entry->dev),
		      smartio_show_class(__entry->class),
		      __entry->write ? "write" : "read",
		      smartio_show_why(__entry->why),
		      (unsigned long long)__entry->sector, __entry->bytes,
		      __entry->writes_inflight, __entry->write_cap)
);

TRACE_EVENT(smartio_adjust,
	    TP_PROTO(dev_t dev, unsigned int what, unsigned int slowdown_pct,
		     unsigned int write_cap, unsigned int write_hold_us),
	    TP_ARGS(dev, what, slowdown_pct, write_cap, write_hold_us),
	    TP_STRUCT__entry(__field(dev_t, dev)
			     __field(u8, what)
			     __field(unsigned int, slowdown_pct)
			     __field(unsigned int, write_cap)
			     __field(unsigned int, write_hold_us)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->what = what;
			   __entry->slowdown_pct = slowdown_pct;
			   __entry->write_cap = write_cap;
			   __entry->write_hold_us = write_hold_us;),
	    TP_printk("%d,%d %s read_slowdown=%u%% write_cap=%u write_hold_us=%u",
		      MAJOR(__entry->dev), MINOR(__entry->dev),
		      smartio_show_adjust(__entry->what), __entry->slowdown_pct,
		      __entry->write_cap, __entry->write_hold_us)
);

#endif /* _SMARTIO_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE smartio_trace
#include <trace/define_trace.h>
