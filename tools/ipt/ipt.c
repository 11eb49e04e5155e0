// SPDX-License-Identifier: GPL-2.0
/* ipt - libipt's encoder and block decoder for tools/bench-pt (ipt.h). */
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "ipt.h"

static void config(struct pt_config *cfg, uint8_t *begin, uint8_t *end)
{
	pt_config_init(cfg);
	cfg->begin = begin;
	cfg->end = end;
	cfg->cpu.vendor = pcv_intel;
	cfg->cpu.family = 6;
	cfg->cpu.model = 0x55;	/* Skylake server */
	pt_cpu_errata(&cfg->errata, &cfg->cpu);
}

/* One packet through libipt's encoder into out (32 bytes of room). */
static int encode(uint8_t *out, struct pt_packet *pk)
{
	struct pt_config cfg;
	struct pt_encoder *en;
	uint64_t off = 0;
	int n;

	config(&cfg, out, out + 32);
	en = pt_alloc_encoder(&cfg);
	if (!en)
		return -pte_nomem;
	n = pt_enc_next(en, pk);
	if (n >= 0 && pt_enc_get_offset(en, &off) >= 0)
		n = (int)off;
	pt_free_encoder(en);
	return n;
}

int ipt_tnt8(uint8_t *out, uint64_t bits, unsigned int n)
{
	struct pt_packet pk = { .type = ppt_tnt_8 };

	pk.payload.tnt.bit_size = (uint8_t)n;
	pk.payload.tnt.payload = bits;
	return encode(out, &pk);
}

int ipt_ip(uint8_t *out, enum ipt_ip_packet type, enum ipt_ipc ipc, uint64_t ip)
{
	static const enum pt_packet_type types[] = {
		[IPT_TIP] = ppt_tip, [IPT_TIP_PGE] = ppt_tip_pge, [IPT_TIP_PGD] = ppt_tip_pgd,
		[IPT_FUP] = ppt_fup,
	};
	static const enum pt_ip_compression ipcs[] = {
		[IPT_SUPPRESSED] = pt_ipc_suppressed, [IPT_UPDATE_16] = pt_ipc_update_16,
		[IPT_UPDATE_32] = pt_ipc_update_32, [IPT_SEXT_48] = pt_ipc_sext_48,
		[IPT_UPDATE_48] = pt_ipc_update_48, [IPT_FULL] = pt_ipc_full,
	};
	struct pt_packet pk = { .type = types[type] };

	pk.payload.ip.ipc = ipcs[ipc];
	pk.payload.ip.ip = ip;
	return encode(out, &pk);
}

int ipt_psb(uint8_t *out)
{
	struct pt_packet pk = { .type = ppt_psb };

	return encode(out, &pk);
}

int ipt_mode_exec64(uint8_t *out)
{
	struct pt_packet pk = { .type = ppt_mode };

	pk.payload.mode.leaf = pt_mol_exec;
	pk.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	return encode(out, &pk);
}

int ipt_psbend(uint8_t *out)
{
	struct pt_packet pk = { .type = ppt_psbend };

	return encode(out, &pk);
}

struct ipt_image {
	struct pt_image_section_cache *iscache;
	struct pt_image *image;
};

int ipt_image_open(struct ipt_image **out, const char *file, const struct ipt_section *s,
		   size_t n)
{
	struct ipt_image *img = calloc(1, sizeof(*img));
	size_t i;
	int err = 0;

	*out = NULL;
	if (!img)
		return -pte_nomem;
	img->iscache = pt_iscache_alloc(NULL);
	img->image = pt_image_alloc(NULL);
	if (!img->iscache || !img->image)
		err = -pte_nomem;
	for (i = 0; !err && i < n; i++) {
		int isid = pt_iscache_add_file(img->iscache, file, s[i].offset, s[i].size,
					       s[i].vaddr);

		err = isid < 0 ? isid : pt_image_add_cached(img->image, img->iscache, isid, NULL);
	}
	if (err) {
		ipt_image_close(img);
		return err;
	}
	*out = img;
	return 0;
}

void ipt_image_close(struct ipt_image *img)
{
	if (!img)
		return;
	pt_image_free(img->image);
	pt_iscache_free(img->iscache);
	free(img);
}

int ipt_decode(const uint8_t *buf, size_t len, struct ipt_image *img, ipt_block_fn block,
	       void *block_ctx, uint64_t *blocks, uint64_t *insns)
{
	struct pt_block_decoder *dec;
	struct pt_config cfg;
	int status, rc = 0;

	config(&cfg, (uint8_t *)buf, (uint8_t *)buf + len);
	dec = pt_blk_alloc_decoder(&cfg);
	if (!dec)
		return -pte_nomem;
	status = pt_blk_set_image(dec, img->image);
	while (status >= 0) {
		status = pt_blk_sync_forward(dec);
		while (status >= 0) {
			struct pt_block b;

			while (status & pts_event_pending) {
				struct pt_event ev;

				status = pt_blk_event(dec, &ev, sizeof(ev));
				if (status < 0)
					break;
			}
			if (status < 0)
				break;
			memset(&b, 0, sizeof(b));
			status = pt_blk_next(dec, &b, sizeof(b));
			if (b.ninsn) {
				(*blocks)++;
				*insns += b.ninsn;
				rc = block ? block(b.ip, b.ninsn, block_ctx) : 0;
				if (rc) {
					status = -pte_eos;
					break;
				}
			}
		}
	}
	pt_blk_free_decoder(dec);
	if (rc)
		return rc;
	return status == -pte_eos ? 0 : status;
}

const char *ipt_errstr(int err)
{
	return pt_errstr(pt_errcode(err));
}
