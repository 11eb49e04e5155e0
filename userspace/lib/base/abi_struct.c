// SPDX-License-Identifier: GPL-2.0
/* abi_struct - the ABI growth rules for one self-sized struct. */
#include <stdint.h>
#include <string.h>

#include <pathtrace/error.h>

#include "abi_struct.h"

int abi_struct_load(void *dst, size_t dst_size, const void *src, size_t in_size)
{
	const uint8_t *extra = (const uint8_t *)src + dst_size;
	size_t i;

	memset(dst, 0, dst_size);
	memcpy(dst, src, in_size < dst_size ? in_size : dst_size);
	for (i = 0; dst_size + i < in_size; i++)
		if (extra[i])
			return -PT_EFORMAT;
	return 0;
}
