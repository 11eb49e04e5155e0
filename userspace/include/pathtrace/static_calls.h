/* SPDX-License-Identifier: GPL-2.0 */
/*
 * static_calls - the kernel's static-call sites (.static_call_sites), which
 * kprobes refuse: register_kprobe's check_kprobe_address_safe (6.1) fails
 * with -EINVAL when static_call_text_reserved(addr, addr) says a site's
 * 5-byte call instruction covers addr. At run time such a site holds a
 * direct call, a 5-byte nop (NULL target) or `xor %eax,%eax` with prefixes
 * (__static_call_return0), so the code alone does not tell: the table does.
 *
 * Table entry (x86-64, 6.1): { s32 addr; s32 key; }, both relative to the
 * field's own address; the site is at &entry.addr + addr.
 *
 * Sources: the live vmlinux table between __start_static_call_sites and
 * __stop_static_call_sites (read from kcore, with each site's key), and a
 * relocatable object's .static_call_sites section (its relocations name
 * the sites, no keys), in elfobj's
 * addresses ((section index << 32) + offset). A live module's own sites
 * are not read here (they would come from its .ko, relocated to its loaded
 * sections, as ksyms_live does for its other tables).
 */
#ifndef PATHTRACE_STATIC_CALLS_H
#define PATHTRACE_STATIC_CALLS_H

#include <stdint.h>

#include <pathtrace/cfg.h>
#include <pathtrace/ksyms.h>

#define STATIC_CALL_INSN_LEN 5

/* A site's key field's flag bits (include/linux/static_call_types.h). */
#define STATIC_CALL_SITE_TAIL 1u
#define STATIC_CALL_SITE_INIT 2u
#define STATIC_CALL_SITE_FLAGS 3u

struct static_calls {
	uint64_t *site;		/* sorted, no duplicates */
	uint32_t n;
	/*
	 * Per site (NULL when the source does not say): its struct
	 * static_call_key's address | STATIC_CALL_SITE_* flags, as the live
	 * table holds it after static_call_init (vmlinux's fields point at keys).
	 */
	uint64_t *key;
};

/*
 * The live vmlinux sites. Returns 0 (n = 0 when ks has no
 * __start_static_call_sites: a kernel without static calls); -PT_EFORMAT
 * when the bounds are inverted or unaligned; what kcore_read returns;
 * -PT_ENOMEM.
 */
int static_calls_live(const struct ksyms *ks, const struct kcore *kc, struct static_calls *out);

/*
 * The sites of the relocatable ELF object at path, from the relocations of
 * its .static_call_sites section. Returns 0 (n = 0 without that section);
 * -PT_EIO when path cannot be read; -PT_EFORMAT when it is not a 64-bit
 * relocatable ELF or a relocation is not the PC32 kind a site needs;
 * -PT_ENOMEM.
 */
int static_calls_elf(const char *path, struct static_calls *out);

void static_calls_free(struct static_calls *sc);

/*
 * Adds n sites and sorts them in; their keys (key[i]) are kept when both
 * sc (or an empty sc) and the caller have keys, else sc has none after.
 * Returns 0 or -PT_ENOMEM (sc unchanged).
 */
int static_calls_add(struct static_calls *sc, const uint64_t *site, const uint64_t *key,
		     uint32_t n);

/* The index of the site at addr in sc, or -1. */
int64_t static_calls_find(const struct static_calls *sc, uint64_t addr);

/*
 * Flags every instruction of c that a site's 5 bytes overlap with
 * CFG_IF_STATIC_CALL. Returns how many were flagged.
 */
uint32_t static_calls_mark(const struct static_calls *sc, struct cfg *c);

#endif
