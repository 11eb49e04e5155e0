// SPDX-License-Identifier: GPL-2.0
#include <pathtrace/error.h>

static const char *const pt_error_text[PT_ERROR_MAX] = {
	[PT_OK] = "success",
	[PT_ENOMEM] = "out of memory",
	[PT_EINVAL] = "invalid argument",
	[PT_EIO] = "input/output error",
	[PT_EFORMAT] = "malformed input",
	[PT_ETRUNC] = "input is truncated",
	[PT_EVERSION] = "unsupported version",
	[PT_EREFUSED] = "function cannot be modelled exactly",
	[PT_EOVERFLOW] = "value overflows its type",
	[PT_ENOENT] = "not found",
	[PT_EKERNEL] = "the kernel module refused the request",
	[PT_EMISMATCH] = "regenerated execution differs from the recorded one",
	[PT_ENOTSUP] = "not supported",
};

const char *pt_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err >= PT_ERROR_MAX || !pt_error_text[err])
		return "unknown error";
	return pt_error_text[err];
}
