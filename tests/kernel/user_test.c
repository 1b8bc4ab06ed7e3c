/*
 * Ring 3: the freestanding test program (tests/user/usertest.c, linked into
 * the kernel image) runs as a process. Its system calls and their errors,
 * deaths by SIGSEGV that leave the kernel running, exit statuses, malformed
 * ELF images refused with ENOEXEC, bad interpreters (PT_INTERP) with
 * Linux's errno, and no page lost over many processes.
 */
#include <quire/ktest.h>
#include <quire/process.h>
#include <quire/mm.h>
#include <quire/slab.h>
#include <quire/numa.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/mmap.h>
#include <quire/fs.h>
#include <quire/uapi/fcntl.h>
#include <asm/pgtable.h>

extern const char user_blob_usertest[], user_blob_usertest_end[];

/* Free pages per node, with no spare slab pages, to compare after a test. */
static void snapshot_free(unsigned long before[MAX_NUMNODES])
{
	slab_shrink_all();
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		before[nid] = node_has_memory(nid) ? node_page_state(nid, NR_FREE_PAGES) : 0;
}

/* Every page is back (to within slack pages per node), and mm_verify agrees. */
static void expect_free_back(struct ktest *t, const unsigned long before[MAX_NUMNODES],
			     long slack)
{
	slab_shrink_all();
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		if (node_has_memory(nid))
			KEXPECT_LE(t, (long)before[nid] - (long)node_page_state(nid, NR_FREE_PAGES), slack);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* DEBUG_MM builds check every address space as it exits, too. */
	KEXPECT_EQ(t, mm_exit_verify_failures, 0);
}

static int run(const char *mode, const void *image, size_t size)
{
	const char *argv[] = { "usertest", mode, NULL };
	const char *envp[] = { "QUIRE=1", NULL };
	struct task *t = process_spawn("usertest", image, size, argv, envp);

	if (!t)
		return -ENOMEM;
	return kthread_join(t);
}

static int run_usertest(const char *mode)
{
	return run(mode, user_blob_usertest, (size_t)(user_blob_usertest_end - user_blob_usertest));
}

static void syscalls_and_errors(struct ktest *t)
{
	int status = run_usertest("basic");

	KEXPECT_TRUE(t, WIFEXITED(status));
	KEXPECT_EQ(t, WEXITSTATUS(status), 0);	/* 1: a check failed (it says which) */
}

/* The checks' summary is 0 or 1, so a multiple of 256 failures cannot wrap to 0. */
static void many_failed_checks_are_not_a_pass(struct ktest *t)
{
	int status = run_usertest("fail-256");

	KEXPECT_TRUE(t, WIFEXITED(status));
	KEXPECT_EQ(t, WEXITSTATUS(status), 1);
}

static void exit_status_reaches_the_parent(struct ktest *t)
{
	int status = run_usertest("exit-7");

	KEXPECT_TRUE(t, WIFEXITED(status));
	KEXPECT_EQ(t, WEXITSTATUS(status), 7);
}

static void bad_accesses_kill_with_sigsegv(struct ktest *t)
{
	static const char *const modes[] = { "write-text", "read-hole", "null", "exec-stack" };

	for (unsigned int i = 0; i < ARRAY_SIZE(modes); i++) {
		u64 pos = printk_log_pos();
		int status = run_usertest(modes[i]);

		KEXPECT_TRUE(t, WIFSIGNALED(status));
		KEXPECT_EQ(t, WTERMSIG(status), SIGSEGV);
		KEXPECT_TRUE(t, printk_log_contains(pos, "killed by signal 11"));
	}
}

static void malformed_elf_is_enoexec(struct ktest *t)
{
	size_t size = (size_t)(user_blob_usertest_end - user_blob_usertest);
	u8 *copy = kmalloc(size, GFP_KERNEL);

	KASSERT_TRUE(t, copy != NULL);
	/* Truncated: shorter than the headers, then cut inside a segment. */
	KEXPECT_EQ(t, run("basic", user_blob_usertest, 10), -ENOEXEC);
	KEXPECT_EQ(t, run("basic", user_blob_usertest, 200), -ENOEXEC);
	/* Wrong machine (e_machine at offset 18). */
	memcpy(copy, user_blob_usertest, size);
	copy[18] = 3;
	KEXPECT_EQ(t, run("basic", copy, size), -ENOEXEC);
	/* Not ELF at all. */
	memcpy(copy, user_blob_usertest, size);
	copy[1] = 'X';
	KEXPECT_EQ(t, run("basic", copy, size), -ENOEXEC);
	/* A segment whose file part lies beyond the file (p_offset of phdr 0 at 64 + 8). */
	memcpy(copy, user_blob_usertest, size);
	*(u64 *)(copy + 64 + 8) = size * 4;
	KEXPECT_EQ(t, run("basic", copy, size), -ENOEXEC);
	/* Overlapping segments: the second PT_LOAD moved onto the first. */
	memcpy(copy, user_blob_usertest, size);
	{
		u16 phnum = *(u16 *)(copy + 56);
		u64 phoff = *(u64 *)(copy + 32);
		int first = -1;

		for (u16 i = 0; i < phnum; i++) {
			u8 *ph = copy + phoff + i * 56;

			if (*(u32 *)ph != 1)
				continue;
			if (first < 0) {
				first = i;
				continue;
			}
			*(u64 *)(ph + 16) = *(u64 *)(copy + phoff + first * 56 + 16);	/* p_vaddr */
			*(u64 *)(ph + 8) = *(u64 *)(copy + phoff + first * 56 + 8);	/* p_offset */
			break;
		}
	}
	KEXPECT_EQ(t, run("basic", copy, size), -ENOEXEC);
	kfree(copy);
}

/* A copy of the test program whose GNU_STACK header (the last) is a PT_INTERP naming path. */
static u8 *with_interp(const char *path, size_t *size)
{
	size_t base = (size_t)(user_blob_usertest_end - user_blob_usertest), len = strlen(path) + 1;
	u8 *copy = kmalloc(base + len, GFP_KERNEL);
	u8 *ph;

	if (!copy)
		return NULL;
	memcpy(copy, user_blob_usertest, base);
	memcpy(copy + base, path, len);
	ph = copy + *(u64 *)(copy + 32) + (*(u16 *)(copy + 56) - 1) * 56;
	*(u32 *)ph = 3;				/* p_type: PT_INTERP */
	*(u64 *)(ph + 8) = base;		/* p_offset */
	*(u64 *)(ph + 32) = len;		/* p_filesz */
	*size = base + len;
	return copy;
}

static int write_file(const char *path, const void *data, size_t len)
{
	struct file *f;
	int err = vfs_open(NULL, path, O_WRONLY | O_CREAT | O_TRUNC, 0755, &f);

	if (err)
		return err;
	if (vfs_write(f, data, len, NULL) != (ssize_t)len)
		err = -EIO;
	fput(f);
	return err;
}

/* execve with the interpreter path; the errno it fails with (the caller goes on). */
static int run_with_interp(const char *path)
{
	size_t size;
	u8 *img = with_interp(path, &size);
	int err = img ? run("basic", img, size) : -ENOMEM;

	kfree(img);
	return err;
}

/* Linux's errors for a bad PT_INTERP: the open's, -EIO (short), -ELIBBAD (not usable). */
static void bad_interpreter_fails_execve(struct ktest *t)
{
	static const char text[] = "#!/bin/sh\n# a script is not an ELF interpreter, whatever its length\n";
	size_t size = (size_t)(user_blob_usertest_end - user_blob_usertest);
	u8 *copy = kmalloc(size, GFP_KERNEL);

	KASSERT_TRUE(t, copy != NULL);
	KEXPECT_EQ(t, run_with_interp("/no/such/ld.so"), -ENOENT);
	KEXPECT_EQ(t, write_file("/tmp/ld-text", text, sizeof(text)), 0);
	KEXPECT_EQ(t, run_with_interp("/tmp/ld-text"), -ELIBBAD);
	KEXPECT_EQ(t, write_file("/tmp/ld-short", "\177ELF", 4), 0);
	KEXPECT_EQ(t, run_with_interp("/tmp/ld-short"), -EIO);
	memcpy(copy, user_blob_usertest, size);
	copy[18] = 3;				/* e_machine: i386 */
	KEXPECT_EQ(t, write_file("/tmp/ld-i386", copy, size), 0);
	KEXPECT_EQ(t, run_with_interp("/tmp/ld-i386"), -ELIBBAD);
	/* The program itself as its interpreter: ET_EXEC at the same addresses. */
	KEXPECT_EQ(t, write_file("/tmp/ld-overlap", user_blob_usertest, size), 0);
	KEXPECT_EQ(t, run_with_interp("/tmp/ld-overlap"), -ELIBBAD);
	/* A PT_INTERP path without its NUL is the program's fault: -ENOEXEC. */
	{
		size_t n;
		u8 *img = with_interp("/tmp/ld-overlap", &n);

		KASSERT_TRUE(t, img != NULL);
		img[n - 1] = 'x';
		KEXPECT_EQ(t, run("basic", img, n), -ENOEXEC);
		kfree(img);
	}
	vfs_unlink(NULL, "/tmp/ld-text");
	vfs_unlink(NULL, "/tmp/ld-short");
	vfs_unlink(NULL, "/tmp/ld-i386");
	vfs_unlink(NULL, "/tmp/ld-overlap");
	kfree(copy);
	/* And a good program still runs. */
	KEXPECT_EQ(t, run_usertest("basic"), 0);
}

static void fork_cow_wait_kill(struct ktest *t)
{
	int status = run_usertest("fork");

	KEXPECT_TRUE(t, WIFEXITED(status));
	KEXPECT_EQ(t, WEXITSTATUS(status), 0);
}

static void mprotect_and_madvise(struct ktest *t)
{
	int status = run_usertest("protect");

	KEXPECT_TRUE(t, WIFEXITED(status));
	KEXPECT_EQ(t, WEXITSTATUS(status), 0);
}

static void file_and_shared_mappings(struct ktest *t)
{
	unsigned long before[MAX_NUMNODES];
	int status;

	snapshot_free(before);
	status = run_usertest("filemap");
	KEXPECT_TRUE(t, WIFEXITED(status));
	KEXPECT_EQ(t, WEXITSTATUS(status), 0);
	/* The file was unlinked and every mapping is gone: its page cache too. */
	expect_free_back(t, before, 0);
}

/* 1000 fork/exit/wait cycles inside one process; every page comes back. */
static void no_pages_lost_over_1000_forks(struct ktest *t)
{
	unsigned long before[MAX_NUMNODES];
	int status;

	snapshot_free(before);
	status = run_usertest("fork-many");
	KEXPECT_TRUE(t, WIFEXITED(status));
	KEXPECT_EQ(t, WEXITSTATUS(status), 0);
	expect_free_back(t, before, 0);
}

/* Many processes come and go; every page comes back (invariant 1 of docs/design.md). */
static void no_pages_lost_over_1000_processes(struct ktest *t)
{
	unsigned long before[MAX_NUMNODES];

	snapshot_free(before);
	for (int i = 0; i < 1000; i++) {
		int status = run_usertest("exit-3");

		if (WEXITSTATUS(status) != 3) {
			KEXPECT_EQ(t, WEXITSTATUS(status), 3);
			break;
		}
	}
	expect_free_back(t, before, 0);
}

/*
 * munmap frees the page tables a range no longer needs: an address space
 * built and faulted from the kernel (no process needed), 16 blocks of
 * 2 MiB each touched once, then unmapped.
 */
static void munmap_frees_page_tables(struct ktest *t)
{
	const unsigned long base = 0x10000000UL, len = 16 * PMD_SIZE;
	struct mm_struct *mm = mm_alloc();
	unsigned long before[MAX_NUMNODES];

	KASSERT_TRUE(t, mm != NULL);
	snapshot_free(before);
	down_write(&mm->mmap_lock);
	KEXPECT_EQ(t, do_mmap(mm, base, len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0), (long)base);
	/* Small pages, so that every block has a page table (THP would map a PMD). */
	KEXPECT_EQ(t, do_madvise(mm, base, len, MADV_NOHUGEPAGE), 0);
	up_write(&mm->mmap_lock);
	for (unsigned long a = base; a < base + len; a += PMD_SIZE)
		KEXPECT_EQ(t, handle_mm_fault(mm, a + 8, FAULT_FLAG_WRITE), 0);
	KEXPECT_TRUE(t, pte_lookup(mm->pgd, base, false) != NULL);
	KEXPECT_EQ(t, atomic_long_read(&mm->rss), 16);
	down_write(&mm->mmap_lock);
	KEXPECT_EQ(t, do_munmap(mm, base, len), 0);
	up_write(&mm->mmap_lock);
	KEXPECT_EQ(t, mm->pgtables_freed, 16);
	KEXPECT_TRUE(t, pte_lookup(mm->pgd, base, false) == NULL);
	KEXPECT_EQ(t, atomic_long_read(&mm->rss), 0);
	/* What is left of the tables (upper levels) goes with the mm. */
	mmput(mm);
	expect_free_back(t, before, 0);	/* the mm's own pages come back too */
}

KTEST_SUITE(user,
	    KTEST_CASE(munmap_frees_page_tables),
	    KTEST_CASE(syscalls_and_errors),
	    KTEST_CASE(many_failed_checks_are_not_a_pass),
	    KTEST_CASE(exit_status_reaches_the_parent),
	    KTEST_CASE(bad_accesses_kill_with_sigsegv),
	    KTEST_CASE(malformed_elf_is_enoexec),
	    KTEST_CASE(bad_interpreter_fails_execve),
	    KTEST_CASE(no_pages_lost_over_1000_processes),
	    KTEST_CASE(fork_cow_wait_kill),
	    KTEST_CASE(mprotect_and_madvise),
	    KTEST_CASE(file_and_shared_mappings),
	    KTEST_CASE(no_pages_lost_over_1000_forks));
