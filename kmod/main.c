// SPDX-License-Identifier: GPL-2.0
/*
 * pathtrace.ko - control device.
 *
 * /dev/pathtrace (0600; opening it needs CAP_SYS_ADMIN or CAP_PERFMON) takes
 * the ioctls of trace-format/pathtrace_abi.h. An open descriptor holds a
 * reference on the module (fops.owner), so the module cannot be unloaded
 * under a tracer that is still talking to it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>

#include "pathtrace_abi.h"

/*
 * Copy a size-prefixed struct from userspace (as copy_struct_from_user does):
 * a smaller user size reads the missing tail as zero; a larger one must have
 * a zero tail. Returns 0, -EFAULT or -E2BIG; -EINVAL if size is too small to
 * hold even the size field.
 */
static int pt_copy_arg(void *dst, size_t ksize, const void __user *src)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)src))
		return -EFAULT;
	if (usize < sizeof(u32))
		return -EINVAL;
	return copy_struct_from_user(dst, ksize, src, usize);
}

static long pt_ioctl_version(void __user *uarg)
{
	struct pt_version v;
	int err;

	err = pt_copy_arg(&v, sizeof(v), uarg);
	if (err)
		return err;
	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	v.major = PT_ABI_MAJOR;
	v.minor = PT_ABI_MINOR;
	v.nr_cpus = num_possible_cpus();
	v.page_size = PAGE_SIZE;
	if (copy_to_user(uarg, &v, sizeof(v)))
		return -EFAULT;
	return 0;
}

static long pt_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case PT_IOC_GET_VERSION:
		return pt_ioctl_version(uarg);
	default:
		return -ENOTTY;
	}
}

static int pt_open(struct inode *inode, struct file *file)
{
	if (!capable(CAP_SYS_ADMIN) && !perfmon_capable())
		return -EPERM;
	return 0;
}

static const struct file_operations pt_fops = {
	.owner = THIS_MODULE,
	.open = pt_open,
	.unlocked_ioctl = pt_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice pt_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = PT_DEVICE_NAME,
	.fops = &pt_fops,
	.mode = 0600,
};

static int __init pt_init(void)
{
	int err;

	err = misc_register(&pt_misc);
	if (err) {
		pr_err("cannot register /dev/%s: %d\n", PT_DEVICE_NAME, err);
		return err;
	}
	pr_info("loaded, ABI %u.%u\n", PT_ABI_MAJOR, PT_ABI_MINOR);
	return 0;
}

static void __exit pt_exit(void)
{
	misc_deregister(&pt_misc);
	pr_info("unloaded\n");
}

module_init(pt_init);
module_exit(pt_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pathtrace: Ball-Larus path and witness tracing of kernel functions");
MODULE_AUTHOR("pathtrace developers");
