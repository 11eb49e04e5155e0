// SPDX-License-Identifier: GPL-2.0
/* elf_file - a plain or compressed ELF file for libelf (elf_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <pathtrace/error.h>

#include "elf_file.h"

#define IMAGE_MAX (1ull << 31)	/* a module decompressed: far below this */

enum packing { PLAIN, XZ, ZSTD, GZIP };

static enum packing packing_of(const uint8_t *m, size_t n)
{
	if (n >= 6 && !memcmp(m, "\xfd" "7zXZ\0", 6))
		return XZ;
	if (n >= 4 && !memcmp(m, "\x28\xb5\x2f\xfd", 4))
		return ZSTD;
	if (n >= 2 && m[0] == 0x1f && m[1] == 0x8b)
		return GZIP;
	return PLAIN;
}

/* The whole of fd into *buf (malloc'd), *len bytes. Returns 0, -PT_EIO (errno), -PT_ENOMEM. */
static int slurp(int fd, uint8_t **buf, size_t *len)
{
	size_t cap = 1 << 20, n = 0;
	uint8_t *b = malloc(cap), *grown;
	ssize_t got;

	if (!b)
		return -PT_ENOMEM;
	for (;;) {
		if (n == cap) {
			grown = cap < IMAGE_MAX ? realloc(b, cap * 2) : NULL;
			if (!grown) {
				free(b);
				return -PT_ENOMEM;
			}
			b = grown;
			cap *= 2;
		}
		got = read(fd, b + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			free(b);
			return -PT_EIO;
		}
		if (!got)
			break;
		n += got;
	}
	*buf = b;
	*len = n;
	return 0;
}

/* Room for more output: out grows to twice its size. Returns 0 or -PT_ENOMEM. */
static int grow(char **out, size_t *cap)
{
	char *g;

	if (*cap >= IMAGE_MAX)
		return -PT_ENOMEM;
	g = realloc(*out, *cap * 2);
	if (!g)
		return -PT_ENOMEM;
	*out = g;
	*cap *= 2;
	return 0;
}

static int unxz(const uint8_t *in, size_t n, char **out, size_t *cap, size_t *len)
{
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_ret r;
	int err = 0;

	if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
		return -PT_ENOMEM;
	s.next_in = in;
	s.avail_in = n;
	do {
		if (s.total_out == *cap && (err = grow(out, cap)))
			break;
		s.next_out = (uint8_t *)*out + s.total_out;
		s.avail_out = *cap - s.total_out;
		r = lzma_code(&s, LZMA_FINISH);
	} while (r == LZMA_OK);
	if (!err && r != LZMA_STREAM_END)
		err = r == LZMA_MEM_ERROR ? -PT_ENOMEM : -PT_EFORMAT;
	*len = s.total_out;
	lzma_end(&s);
	return err;
}

static int unzstd(const uint8_t *in, size_t n, char **out, size_t *cap, size_t *len)
{
	ZSTD_DStream *d = ZSTD_createDStream();
	ZSTD_inBuffer ib = { in, n, 0 };
	ZSTD_outBuffer ob = { *out, *cap, 0 };
	size_t r = 1;
	int err = 0;

	if (!d)
		return -PT_ENOMEM;
	while (ib.pos < ib.size || r) {
		if (ob.pos == ob.size) {
			err = grow(out, cap);
			if (err)
				break;
			ob.dst = *out;
			ob.size = *cap;
		}
		r = ZSTD_decompressStream(d, &ob, &ib);
		if (ZSTD_isError(r)) {
			err = -PT_EFORMAT;
			break;
		}
		if (ib.pos == ib.size && r && ob.pos < ob.size) {
			err = -PT_EFORMAT;	/* a frame cut short */
			break;
		}
	}
	*len = ob.pos;
	ZSTD_freeDStream(d);
	return err;
}

static int ungzip(const uint8_t *in, size_t n, char **out, size_t *cap, size_t *len)
{
	z_stream z;
	int r, err = 0;

	memset(&z, 0, sizeof(z));
	if (n > UINT32_MAX || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -PT_ENOMEM;
	z.next_in = (Bytef *)in;
	z.avail_in = n;
	do {
		if (z.total_out == *cap && (err = grow(out, cap)))
			break;
		z.next_out = (Bytef *)*out + z.total_out;
		z.avail_out = *cap - z.total_out;
		r = inflate(&z, Z_NO_FLUSH);
	} while (r == Z_OK);
	if (!err && r != Z_STREAM_END)
		err = r == Z_MEM_ERROR ? -PT_ENOMEM : -PT_EFORMAT;
	*len = z.total_out;
	inflateEnd(&z);
	return err;
}

/* Decompresses fd's file (packed p) into ef->image. */
static int decompress(struct elf_file *ef, enum packing p)
{
	uint8_t *in;
	size_t n, cap = 1 << 20;
	int err = slurp(ef->fd, &in, &n);

	if (err)
		return err;
	ef->image = malloc(cap);
	if (!ef->image) {
		free(in);
		return -PT_ENOMEM;
	}
	if (p == XZ)
		err = unxz(in, n, &ef->image, &cap, &ef->size);
	else if (p == ZSTD)
		err = unzstd(in, n, &ef->image, &cap, &ef->size);
	else
		err = ungzip(in, n, &ef->image, &cap, &ef->size);
	free(in);
	return err;
}

int elf_file_open(const char *path, struct elf_file *ef)
{
	uint8_t magic[6];
	ssize_t n;
	enum packing p;
	int err;

	memset(ef, 0, sizeof(*ef));
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0)
		return -PT_EIO;
	n = pread(ef->fd, magic, sizeof(magic), 0);
	if (n < 0)
		return -PT_EIO;
	p = packing_of(magic, n);
	if (p == PLAIN) {
		ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
		return ef->elf ? 0 : -PT_EFORMAT;
	}
	err = decompress(ef, p);
	close(ef->fd);
	ef->fd = -1;
	if (err)
		return err;
	ef->elf = elf_memory(ef->image, ef->size);
	return ef->elf ? 0 : -PT_EFORMAT;
}

void elf_file_close(struct elf_file *ef)
{
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
	free(ef->image);
	memset(ef, 0, sizeof(*ef));
	ef->fd = -1;
}
