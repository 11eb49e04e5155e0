/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ipt - the libipt side of tools/bench-pt, apart because libipt's
 * intel-pt.h and pathtrace_abi.h both name a struct pt_config and a
 * struct pt_version. Packets go through libipt's encoder, segments
 * through its block decoder; nothing here knows pathtrace's types.
 */
#ifndef PATHTRACE_TOOLS_IPT_H
#define PATHTRACE_TOOLS_IPT_H

#include <stddef.h>
#include <stdint.h>

/* IP compressions (Intel SDM "IP Compression"), as libipt's pt_ipc_*. */
enum ipt_ipc { IPT_SUPPRESSED, IPT_UPDATE_16, IPT_UPDATE_32, IPT_SEXT_48, IPT_UPDATE_48,
	       IPT_FULL };

enum ipt_ip_packet { IPT_TIP, IPT_TIP_PGE, IPT_TIP_PGD, IPT_FUP };

/*
 * Each encodes one packet into out (at least 16 bytes) and returns its
 * size; a negative value is libipt's error (ipt_errstr says which).
 */
int ipt_tnt8(uint8_t *out, uint64_t bits, unsigned int n);	/* first bit most significant */
int ipt_ip(uint8_t *out, enum ipt_ip_packet type, enum ipt_ipc ipc, uint64_t ip);
int ipt_psb(uint8_t *out);	/* 16 bytes */
int ipt_mode_exec64(uint8_t *out);
int ipt_psbend(uint8_t *out);

/*
 * The traced code as libipt's ptxed loads it (--raw FILE:OFFSET-SIZE:VADDR):
 * file sections in an image section cache (pt_iscache_add_file), added to
 * one image (pt_image_add_cached) that every segment's decoder uses.
 */
struct ipt_section {
	uint64_t offset, size, vaddr;
};

struct ipt_image;

/*
 * An image of n sections of file. Returns 0 and *img, libipt's negative
 * error (a section it refuses), or -pte_nomem.
 */
int ipt_image_open(struct ipt_image **img, const char *file, const struct ipt_section *s,
		   size_t n);
void ipt_image_close(struct ipt_image *img);

/* Called for each decoded block: its first instruction and instruction count. */
typedef int (*ipt_block_fn)(uint64_t ip, uint32_t ninsn, void *ctx);

/*
 * Decodes len bytes of PT with libipt's block decoder on img (a decoder
 * allocated and freed here); block (may be NULL) is called for every block
 * with instructions, and *blocks and *insns count them. Returns 0 at the
 * end of the buffer, a block callback's non-zero value, or libipt's
 * negative error.
 */
int ipt_decode(const uint8_t *buf, size_t len, struct ipt_image *img, ipt_block_fn block,
	       void *block_ctx, uint64_t *blocks, uint64_t *insns);

const char *ipt_errstr(int err);

#endif
