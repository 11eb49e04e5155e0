// SPDX-License-Identifier: GPL-2.0
/* funcstore - per-function metadata kept from enable to record (see funcstore.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/funcstore.h>

const char *funcstore_dir(void)
{
	const char *d = getenv("PATHTRACE_STATE");

	return d && *d ? d : "/run/pathtrace";
}

/*
 * Creates dir and every missing parent (mode 0700: plans name kernel
 * addresses). Returns 0, or -PT_EIO with errno set.
 */
static int make_dirs(const char *dir)
{
	char buf[4096];
	size_t i, n = strlen(dir);

	if (!n || n >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -PT_EIO;
	}
	memcpy(buf, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		if (buf[i - 1] == '/')
			continue;	/* "//" */
		buf[i] = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -PT_EIO;
		buf[i] = i == n ? '\0' : '/';
	}
	return 0;
}

static void path_of(uint32_t func_id, char *buf, size_t n, const char *suffix)
{
	snprintf(buf, n, "%s/func-%u.bin%s", funcstore_dir(), func_id, suffix);
}

int funcstore_save(const struct tf_function *fn)
{
	char tmp[4096], final[4096];
	struct tf_writer w;
	int err;

	if (make_dirs(funcstore_dir()))
		return -PT_EIO;
	path_of(fn->func_id, tmp, sizeof(tmp), ".tmp");
	path_of(fn->func_id, final, sizeof(final), "");
	err = tfw_open(&w, tmp);
	if (!err)
		err = tfw_function(&w, fn);
	if (w.f) {
		int cerr = tfw_close(&w);

		if (!err)
			err = cerr;
	}
	if (!err && rename(tmp, final))
		err = -PT_EIO;
	if (err)
		unlink(tmp);
	return err;
}

int funcstore_load(uint32_t func_id, struct tracefile *tf)
{
	char path[4096];
	int err;

	path_of(func_id, path, sizeof(path), "");
	if (access(path, R_OK)) {
		memset(tf, 0, sizeof(*tf));
		return errno == ENOENT ? -PT_ENOENT : -PT_EIO;
	}
	err = tracefile_read(path, tf);
	if (err)
		return err;
	if (tf->nfuncs != 1 || tf->funcs[0].func_id != func_id)
		return -PT_EFORMAT;
	return 0;
}

int funcstore_remove(uint32_t func_id)
{
	char path[4096];

	path_of(func_id, path, sizeof(path), "");
	return unlink(path) && errno != ENOENT ? -PT_EIO : 0;
}
