// SPDX-License-Identifier: GPL-2.0
/*
 * stream.c - each CPU's stream: the stream coder over the kernel's ring buffer.
 *
 * Each CPU keeps one stream coder (trace-format/coder/coder.h), which codes
 * what the handlers record into pt_rec records; this file is its sink. The
 * ring buffer is allocated non-overwriting: a full buffer refuses a write,
 * the coder counts it, and its next successful write is preceded by
 * LOSS(OVERRUN, count). Callers run with interrupts off (handlers and the
 * flush IPI), so the state of a CPU is only ever touched by that CPU, never
 * half-written under another writer; an NMI that finds the flush IPI at
 * work records nothing and counts a drop. A CPU going offline writes what
 * it keeps back first.
 * See docs/runtime.md for the owner and path-register rules.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/hardirq.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/ring_buffer.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <asm/text-patching.h>

#include "compat.h"
#include "pathtrace.h"

struct pt_cpu {
	struct pt_coder coder;
	struct ring_buffer_event *ev;	/* the event reserved for the coder */
	bool busy;		/* a flush IPI is working on this state */
	u64 busy_dropped;	/* records an NMI lost meanwhile, not yet in dropped */
};

/*
 * Allocated at load: with the ENTER code tables a CPU's state is over 26 KB,
 * more than the static per-CPU area the kernel keeps for modules (8 KB);
 * alloc_percpu() takes at most PCPU_MIN_UNIT_SIZE (checked at build).
 */
static struct pt_cpu __percpu *pt_cpus;
static struct trace_buffer *pt_buffer;

/* Handlers do nothing unless this is set; see main.c for arm and disarm. */
bool pt_armed;

static struct pt_cpu *pt_this_cpu(void)
{
	return this_cpu_ptr(pt_cpus);
}

/*
 * The coder's sink: an event of the ring buffer. How much of its page is
 * left after it tells the coder how large its next SEGMENTS may grow: the
 * ring buffer's data pages are whole pages and events are never split.
 */
static void *pt_sink_reserve(struct pt_coder *c, u16 type, unsigned int len)
{
	struct pt_cpu *cs = container_of(c, struct pt_cpu, coder);
	struct trace_buffer *b = READ_ONCE(pt_buffer);
	unsigned long end;
	void *data;

	if (unlikely(!b))
		return NULL;
	cs->ev = ring_buffer_lock_reserve(b, len);
	if (unlikely(!cs->ev))
		return NULL;
	data = ring_buffer_event_data(cs->ev);
	end = offset_in_page(data) + len;
	c->page_left = end < PAGE_SIZE ? PAGE_SIZE - end : 0;
	return data;
}

static void pt_sink_commit(struct pt_coder *c, void *rec)
{
	struct pt_cpu *cs = container_of(c, struct pt_cpu, coder);

	pt_rb_unlock_commit(pt_buffer, cs->ev);
	cs->ev = NULL;
}

static const struct pt_coder_sink pt_ring_sink = {
	.reserve = pt_sink_reserve,
	.commit = pt_sink_commit,
};

/*
 * The owner of the code that hit the probe. An int3-based probe's handler
 * runs inside the int3 exception, which the kernel enters as an NMI
 * (irqentry_nmi_enter: one NMI and one hardirq level); those levels are the
 * probe's own, not the probed code's, so they are taken off first. A probe
 * came through int3 when its first byte is still INT3: an optimized probe
 * is a jmp there and an ftrace-based one never traps. A uprobe's handler
 * (p NULL) runs on the task's way back to user mode, in task context,
 * interrupts on (kernel/events/uprobes.c: uprobe_notify_resume from
 * exit_to_user_mode_loop): the owner is the task.
 */
static u64 pt_current_owner(struct kprobe *p, unsigned int cpu)
{
	unsigned long pc = preempt_count();
	unsigned long nmi = (pc & NMI_MASK) >> NMI_SHIFT;
	unsigned long hard = (pc & HARDIRQ_MASK) >> HARDIRQ_SHIFT;

	if (nmi && hard && p && !(p->flags & KPROBE_FLAG_FTRACE) &&
	    READ_ONCE(*(u8 *)p->addr) == INT3_INSN_OPCODE) {
		nmi--;
		hard--;
	}
	if (nmi)
		return PT_OWNER(PT_OWNER_NMI, cpu);
	if (hard)
		return PT_OWNER(PT_OWNER_HARDIRQ, cpu);
	if (pc & SOFTIRQ_OFFSET)
		return PT_OWNER(PT_OWNER_SOFTIRQ, cpu);
	if (is_idle_task(current))
		return PT_OWNER(PT_OWNER_IDLE, cpu);
	return PT_OWNER(PT_OWNER_TASK, task_pid_nr(current));
}

/*
 * The owner a handler runs for, and for a task its se.nr_migrations
 * (*gen; 0 for others): a task that left this CPU and came back is not the
 * same run of that owner here.
 */
static __always_inline u64 pt_owner_gen(struct kprobe *p, unsigned int cpu, u64 *gen)
{
	u64 owner = pt_current_owner(p, cpu);

	*gen = PT_OWNER_KIND(owner) == PT_OWNER_TASK ?
	       READ_ONCE(current->se.nr_migrations) : 0;
	return owner;
}

/* pt_owner_gen, to handlers outside this file. */
u64 pt_stream_owner(struct kprobe *p, unsigned int cpu, u64 *gen)
{
	return pt_owner_gen(p, cpu, gen);
}

/*
 * Only an NMI can run a handler while this CPU's flush IPI holds the
 * state: what it would record or count is lost, and counted as a buffer
 * drop. Returns true then; interrupts are off.
 */
static __always_inline bool pt_busy(struct pt_cpu *cs)
{
	if (unlikely(READ_ONCE(cs->busy))) {
		pt_coder_forget(&cs->coder);
		cs->busy_dropped++;
		cs->coder.counts.dropped++;
		return true;
	}
	if (unlikely(cs->busy_dropped)) {
		cs->coder.dropped += cs->busy_dropped;
		cs->busy_dropped = 0;
	}
	return false;
}

/* pt_busy for this CPU's stream, to handlers outside this file. */
bool pt_stream_busy(void)
{
	return pt_busy(pt_this_cpu());
}

/*
 * This CPU's coder for @owner (@gen; pt_stream_owner), interrupts off, once
 * the caller has found the stream not busy (pt_stream_busy) or holds it
 * (stage.c): a new segment is open when the owner differs from the one
 * that wrote last on this CPU. A task that left this CPU and came back
 * with no other owner writing here in between must still open a new
 * segment, or its records would join the old one and sort before what it
 * wrote elsewhere meanwhile.
 */
struct pt_coder *pt_stream_coder(u64 owner, u64 gen)
{
	struct pt_coder *c = &pt_this_cpu()->coder;

	if (unlikely(!pt_coder_owns(c, owner, gen)))
		pt_coder_open(c, owner, gen, ktime_get_mono_fast_ns());
	return c;
}

/*
 * Holds this CPU's stream as the flush IPI does (interrupts off): an NMI
 * meanwhile records and counts nothing, and says so as a drop.
 */
void pt_stream_hold(void)
{
	WRITE_ONCE(pt_this_cpu()->busy, true);
	barrier();
}

void pt_stream_release(void)
{
	barrier();
	WRITE_ONCE(pt_this_cpu()->busy, false);
}

/*
 * Writes one record (counters, path counts, LOSS(MISSED)) on this CPU's
 * stream, held (pt_stream_hold). Returns false if the full buffer refused
 * it (counted as a drop of f's) or there is none.
 */
bool pt_stream_write(struct pt_func *f, u16 type, u32 arg, const void *body,
		     unsigned int len)
{
	if (!READ_ONCE(pt_buffer))
		return false;
	return pt_coder_write(&pt_this_cpu()->coder, &this_cpu_ptr(f->pcpu)->coder,
			      type, arg, body, len);
}

/* Flush IPI: what this CPU's coder keeps back, and the drops to report. */
static void pt_flush_cpu(void *unused)
{
	struct pt_cpu *cs;
	unsigned long flags;

	local_irq_save(flags);
	cs = pt_this_cpu();
	cs->coder.dropped += cs->busy_dropped;
	cs->busy_dropped = 0;
	pt_stream_hold();
	if (pt_buffer)
		pt_coder_flush(&cs->coder);
	pt_stream_release();
	local_irq_restore(flags);
}

void pt_stream_flush_all(void)
{
	on_each_cpu(pt_flush_cpu, NULL, 1);
}

static void pt_reset_cpu(void *unused)
{
	struct pt_cpu *cs;
	unsigned long flags;

	local_irq_save(flags);
	cs = pt_this_cpu();
	cs->coder.sink = &pt_ring_sink;
	cs->coder.cpu = smp_processor_id();
	cs->coder.bits_words = PT_CODER_BITS_WORDS;
	cs->coder.ebits_words = PT_CODER_EBITS_WORDS;
	cs->coder.page_size = PAGE_SIZE;
	cs->coder.pack_max_bits = PT_CODER_PACK_MAX_BITS;
	pt_coder_reset(&cs->coder);
	cs->busy_dropped = 0;
	local_irq_restore(flags);
}

/* Before arming: empty buffers and fresh per-CPU state (nothing in flight). */
void pt_stream_reset(void)
{
	if (pt_buffer)
		ring_buffer_reset(pt_buffer);
	on_each_cpu(pt_reset_cpu, NULL, 1);
}

/*
 * True when some online CPU's buffer holds half its size or more unread:
 * what makes the device readable to the recorder's poll() (main.c). Under
 * pt_ctl_mutex or while armed: the buffer is reallocated only under the
 * mutex while disarmed.
 */
bool pt_stream_half_full(void)
{
	unsigned int cpu;

	if (!pt_buffer)
		return false;
	for_each_online_cpu(cpu)
		if (ring_buffer_bytes_cpu(pt_buffer, cpu) * 2 >= ring_buffer_size(pt_buffer, cpu))
			return true;
	return false;
}

/* True when @cpu's buffer holds nothing to read (or there is none). */
bool pt_stream_cpu_empty(unsigned int cpu)
{
	return !pt_buffer || ring_buffer_empty_cpu(pt_buffer, cpu);
}

bool pt_stream_ready(void)
{
	return pt_buffer != NULL;
}

/* (Re)allocates the ring buffer; only while disarmed. Returns 0 or -ENOMEM. */
int pt_stream_alloc(unsigned long bytes_per_cpu)
{
	struct trace_buffer *b, *old;

	b = ring_buffer_alloc(bytes_per_cpu, 0);
	if (!b)
		return -ENOMEM;
	/* not under a CPU going offline, which may be flushing into the old one */
	cpus_read_lock();
	old = pt_buffer;
	WRITE_ONCE(pt_buffer, b);
	cpus_read_unlock();
	if (old)
		ring_buffer_free(old);
	pt_stream_reset();
	return 0;
}

/*
 * Copies one page of @cpu's buffer, in ring_buffer_read_page() layout, to
 * @ubuf. *out_len is 0 when there is nothing to read. Returns 0, -EINVAL
 * (bad cpu, short buffer), -ENODATA (no buffer yet), -ENOMEM or -EFAULT.
 */
int pt_stream_read_page(unsigned int cpu, void __user *ubuf, u32 buf_len,
			u32 *out_len)
{
	void *page;
	int ret;

	*out_len = 0;
	if (cpu >= nr_cpu_ids || !cpu_possible(cpu) || buf_len < PAGE_SIZE)
		return -EINVAL;
	if (!pt_buffer)
		return -ENODATA;
	/*
	 * Drops still pending on a stopped CPU (its buffer was full when the
	 * stop flushed it) get their LOSS record now that there is room: at
	 * the end of that CPU's stream, where they happened.
	 */
	if (ring_buffer_empty_cpu(pt_buffer, cpu) && !READ_ONCE(pt_armed) &&
	    READ_ONCE(per_cpu_ptr(pt_cpus, cpu)->coder.dropped) && cpu_online(cpu))
		smp_call_function_single(cpu, pt_flush_cpu, NULL, 1);
	if (ring_buffer_empty_cpu(pt_buffer, cpu))
		return 0;
	page = pt_rb_alloc_read_page(pt_buffer, cpu);
	if (IS_ERR(page))
		return PTR_ERR(page);
	/*
	 * While tracing, only pages the writer has left (full ones): a page
	 * read under the writer is copied out half empty and the rest of it
	 * is wasted in the file. After stop, what is left.
	 */
	ret = pt_rb_read_page(pt_buffer, &page, PAGE_SIZE, cpu,
			      READ_ONCE(pt_armed));
	if (ret >= 0) {
		if (copy_to_user(ubuf, pt_rb_read_page_data(page), PAGE_SIZE))
			ret = -EFAULT;
		else
			*out_len = PAGE_SIZE;
	}
	pt_rb_free_read_page(pt_buffer, cpu, page);
	return ret == -EFAULT ? ret : 0;
}

void pt_stream_totals(u64 *records, u64 *dropped)
{
	unsigned int cpu;

	*records = 0;
	*dropped = 0;
	for_each_possible_cpu(cpu) {
		struct pt_cpu *cs = per_cpu_ptr(pt_cpus, cpu);

		*records += READ_ONCE(cs->coder.counts.records);
		*dropped += READ_ONCE(cs->coder.counts.dropped);
	}
}

/*
 * A CPU going offline (run on it, interrupts on): what it keeps back (bits,
 * ENTER codes, segments, drops to report) is written now, as at stop. The
 * stop's flush reaches only online CPUs: without this, a CPU offline at
 * stop took a piece out of the middle of its tasks' streams.
 */
static int pt_cpu_offline(unsigned int cpu)
{
	if (READ_ONCE(pt_buffer))
		pt_flush_cpu(NULL);
	return 0;
}

static enum cpuhp_state pt_cpuhp_state;

/* Returns 0, -ENOMEM (the per-CPU states) or the error of the hotplug state. */
int pt_stream_init(void)
{
	int err;

	BUILD_BUG_ON(sizeof(struct pt_cpu) > PCPU_MIN_UNIT_SIZE);
	pt_cpus = alloc_percpu(struct pt_cpu);
	if (!pt_cpus)
		return -ENOMEM;
	on_each_cpu(pt_reset_cpu, NULL, 1);
	err = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "pathtrace:online", NULL,
					pt_cpu_offline);
	if (err < 0) {
		free_percpu(pt_cpus);
		pt_cpus = NULL;
		return err;
	}
	pt_cpuhp_state = err;
	return 0;
}

void pt_stream_exit(void)
{
	cpuhp_remove_state_nocalls(pt_cpuhp_state);
	if (pt_buffer)
		ring_buffer_free(pt_buffer);
	pt_buffer = NULL;
	free_percpu(pt_cpus);
	pt_cpus = NULL;
}
