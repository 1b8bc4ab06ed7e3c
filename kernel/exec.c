/*
 * Loading an ELF64 executable into a fresh address space (execve's core):
 * static or PIE (ET_EXEC, ET_DYN), and a dynamically linked one with the
 * interpreter its PT_INTERP names (docs/userspace.md). Every header field
 * is checked; a malformed file fails with -ENOEXEC (its interpreter with
 * Linux's errno, see load_interp_file) and leaves the caller as it was. The segments are copied into
 * anonymous pages (Linux maps them from the page cache; Quire does not
 * yet), the stack is built as the Linux x86-64 ABI says:
 * argc, argv[], NULL, envp[], NULL, auxv pairs, then the strings above.
 */
#define pr_fmt(fmt) "exec: " fmt
#include <quire/process.h>
#include <quire/signal.h>
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/uaccess.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include <quire/time.h>
#include <quire/slab.h>
#include <quire/fs.h>
#include <quire/fdtable.h>
#include <quire/uapi/fcntl.h>
#include <asm/pgtable.h>
#include <asm/cpu.h>

struct elf64_ehdr {
	u8 e_ident[16];
	u16 e_type, e_machine;
	u32 e_version;
	u64 e_entry, e_phoff, e_shoff;
	u32 e_flags;
	u16 e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx;
};

struct elf64_phdr {
	u32 p_type, p_flags;
	u64 p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align;
};

#define ET_EXEC		2
#define ET_DYN		3
#define EM_X86_64	62
#define PT_LOAD		1
#define PT_INTERP	3
#define PF_X		1
#define PF_W		2
#define PF_R		4
#define MAX_PHNUM	64
#define MAX_ARG_STRLEN	4096
#define MAX_ARGS	256

/* auxv keys */
#define AT_NULL		0
#define AT_PHDR		3
#define AT_PHENT	4
#define AT_PHNUM	5
#define AT_PAGESZ	6
#define AT_BASE		7
#define AT_FLAGS	8
#define AT_ENTRY	9
#define AT_UID		11
#define AT_EUID		12
#define AT_GID		13
#define AT_EGID		14
#define AT_PLATFORM	15
#define AT_HWCAP	16
#define AT_CLKTCK	17
#define AT_SECURE	23
#define AT_RANDOM	25
#define AT_EXECFN	31

/* Where a PIE goes: two thirds of the user address space, as on Linux x86-64. */
#define ELF_ET_DYN_BASE	(STACK_TOP / 3 * 2)
#define EXEC_IMAGE_MAX	(64UL << 20)

/*
 * One ELF file being loaded: the program or its interpreter. bias is added
 * to every p_vaddr (0 for ET_EXEC); [lo, hi) is the page-aligned span of
 * its PT_LOAD segments once biased.
 */
struct elf_file {
	const u8 *img;
	size_t size;
	const struct elf64_ehdr *eh;
	const struct elf64_phdr *ph;
	unsigned long bias, lo, hi;
};

/* The file's own structure (no addresses yet): 0 or -ENOEXEC. */
static int check_headers(struct elf_file *e)
{
	const struct elf64_ehdr *eh = (const void *)e->img;

	if (e->size < sizeof(*eh) || memcmp(eh->e_ident, "\177ELF", 4))
		return -ENOEXEC;
	if (eh->e_ident[4] != 2 || eh->e_ident[5] != 1 || eh->e_ident[6] != 1)
		return -ENOEXEC;		/* 64-bit, little endian, version 1 */
	if (eh->e_machine != EM_X86_64) {
		pr_info("not an x86-64 program (machine %u)\n", eh->e_machine);
		return -ENOEXEC;
	}
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) {
		pr_info("not an executable (ELF type %u)\n", eh->e_type);
		return -ENOEXEC;
	}
	if (eh->e_phentsize != sizeof(*e->ph) || eh->e_phnum == 0 || eh->e_phnum > MAX_PHNUM ||
	    eh->e_phoff > e->size || e->size - eh->e_phoff < (u64)eh->e_phnum * sizeof(*e->ph))
		return -ENOEXEC;
	e->eh = eh;
	e->ph = (const void *)(e->img + eh->e_phoff);
	return 0;
}

/* The first PT_LOAD's p_vaddr: what an ET_DYN's load base is relative to. */
static u64 first_vaddr(const struct elf_file *e)
{
	for (int i = 0; i < e->eh->e_phnum; i++)
		if (e->ph[i].p_type == PT_LOAD)
			return e->ph[i].p_vaddr;
	return 0;
}

/*
 * The PT_LOAD segments with e->bias applied: inside the file, in user
 * space below the stack, in increasing order without overlap, the entry
 * inside. Sets e->lo and e->hi; 0 or -ENOEXEC.
 */
static int check_segments(struct elf_file *e)
{
	u64 prev_end = 0, entry = e->eh->e_entry + e->bias;

	e->lo = 0;
	for (int i = 0; i < e->eh->e_phnum; i++) {
		const struct elf64_phdr *p = &e->ph[i];
		u64 va = p->p_vaddr + e->bias;

		if (p->p_type != PT_LOAD)
			continue;
		if (p->p_filesz > p->p_memsz || p->p_offset > e->size ||
		    e->size - p->p_offset < p->p_filesz || va < p->p_vaddr ||
		    va < MMAP_MIN_ADDR || va + p->p_memsz < va ||
		    va + p->p_memsz > STACK_TOP - STACK_SIZE_MAX ||
		    (p->p_vaddr & (PAGE_SIZE - 1)) != (p->p_offset & (PAGE_SIZE - 1)))
			return -ENOEXEC;
		if (ALIGN_DOWN(va, PAGE_SIZE) < prev_end)
			return -ENOEXEC;
		if (!prev_end)
			e->lo = ALIGN_DOWN(va, PAGE_SIZE);
		prev_end = ALIGN_UP(va + p->p_memsz, PAGE_SIZE);
	}
	if (!prev_end || entry < e->lo || entry >= prev_end)
		return -ENOEXEC;
	e->hi = prev_end;
	return 0;
}

/*
 * The interpreter named by the first PT_INTERP, as Linux takes it: a
 * NUL-terminated path of 2 to PATH_MAX bytes inside the file. *path is
 * NULL for a static program; 0 or -ENOEXEC.
 */
static int find_interp(const struct elf_file *e, const char **path)
{
	*path = NULL;
	for (int i = 0; i < e->eh->e_phnum; i++) {
		const struct elf64_phdr *p = &e->ph[i];

		if (p->p_type != PT_INTERP)
			continue;
		if (p->p_filesz < 2 || p->p_filesz > PATH_MAX || p->p_offset > e->size ||
		    e->size - p->p_offset < p->p_filesz || e->img[p->p_offset + p->p_filesz - 1])
			return -ENOEXEC;
		*path = (const char *)e->img + p->p_offset;
		return 0;
	}
	return 0;
}

/*
 * Read and check the interpreter, and place it: an ET_DYN interpreter
 * just below the mmap base (where Linux's first top-down mmap would put
 * it), an ET_EXEC one at its own addresses. Linux's errors: the open's
 * (-ENOENT), -EIO for a file shorter than an ELF header, -ELIBBAD for one
 * that is not an x86-64 ELF64 executable or shared object. Where Linux
 * finds the fault after the point of no return and kills the process
 * (bad segments, overlap with the program), Quire fails with -ELIBBAD and
 * the caller goes on. The interpreter's own PT_INTERP is ignored, as on
 * Linux. The caller kfree()s interp->img.
 */
static int load_interp_file(const char *path, const struct elf_file *prog,
			    struct elf_file *interp)
{
	void *img;
	int err = kernel_read_file(current->files ? current->files->cwd : NULL, path,
				   EXEC_IMAGE_MAX, &img, &interp->size);

	if (err)
		return err;
	interp->img = img;
	if (interp->size < sizeof(struct elf64_ehdr))
		return -EIO;
	if (check_headers(interp))
		return -ELIBBAD;
	interp->bias = 0;
	if (interp->eh->e_type == ET_DYN) {
		u64 lo = ALIGN_DOWN(first_vaddr(interp), PAGE_SIZE), hi = lo;

		for (int i = 0; i < interp->eh->e_phnum; i++)
			if (interp->ph[i].p_type == PT_LOAD)
				hi = max(hi, interp->ph[i].p_vaddr + interp->ph[i].p_memsz);
		hi = ALIGN_UP(hi, PAGE_SIZE);
		if (hi < lo || hi - lo > MMAP_BASE - MMAP_MIN_ADDR)
			return -ELIBBAD;
		interp->bias = MMAP_BASE - (hi - lo) - lo;
	}
	if (check_segments(interp))
		return -ELIBBAD;
	if (interp->lo < prog->hi && prog->lo < interp->hi)
		return -ELIBBAD;
	return 0;
}

/* Copy bytes into the (current) new address space; pages fault in as needed. */
static int put_user_bytes(unsigned long addr, const void *src, size_t len)
{
	return copy_to_user((void *)addr, src, len) ? -EFAULT : 0;
}

/* Map e's PT_LOAD segments at p_vaddr + e->bias, copied into anonymous pages. */
static int load_segments(struct mm_struct *mm, const struct elf_file *e)
{
	for (int i = 0; i < e->eh->e_phnum; i++) {
		const struct elf64_phdr *p = &e->ph[i];
		unsigned long va = p->p_vaddr + e->bias, start, end, flags;
		int err;

		if (p->p_type != PT_LOAD)
			continue;
		start = ALIGN_DOWN(va, PAGE_SIZE);
		end = ALIGN_UP(va + p->p_memsz, PAGE_SIZE);
		/* Writable while loading; the final protection is set below. */
		down_write(&mm->mmap_lock);
		err = insert_vma(mm, start, end, VM_READ | VM_WRITE | VM_SOFTDIRTY);
		up_write(&mm->mmap_lock);
		if (err)
			return err;
		err = put_user_bytes(va, e->img + p->p_offset, p->p_filesz);
		if (err)
			return err;
		flags = (p->p_flags & PF_R ? VM_READ : 0) | (p->p_flags & PF_W ? VM_WRITE : 0) |
			(p->p_flags & PF_X ? VM_EXEC : 0);
		down_write(&mm->mmap_lock);
		find_vma(mm, start)->vm_flags = flags | VM_SOFTDIRTY;
		change_protection(find_vma(mm, start), start, end);
		up_write(&mm->mmap_lock);
	}
	return 0;
}

static long count_strings(const char *const v[])
{
	long n = 0;

	while (v && v[n] && n <= MAX_ARGS)
		n++;
	return n;
}

/* Copy the strings v[0..n) to strs upward, their addresses into table; the end. */
static unsigned long put_strings(unsigned long strs, const char *const v[], long n,
				 u64 *table, int *err)
{
	for (long i = 0; i < n; i++) {
		size_t len = strnlen(v[i], MAX_ARG_STRLEN) + 1;

		table[i] = strs;
		*err |= put_user_bytes(strs, v[i], len - 1) | put_user_bytes(strs + len - 1, "", 1);
		strs += len;
	}
	return strs;
}

/* Where the program headers appear in memory: in the segment holding offset e_phoff. */
static unsigned long phdr_addr(const struct elf_file *e)
{
	for (int i = 0; i < e->eh->e_phnum; i++)
		if (e->ph[i].p_type == PT_LOAD && e->ph[i].p_offset <= e->eh->e_phoff &&
		    e->eh->e_phoff < e->ph[i].p_offset + e->ph[i].p_filesz)
			return e->ph[i].p_vaddr + e->bias + (e->eh->e_phoff - e->ph[i].p_offset);
	return 0;
}

static unsigned long cpu_hwcap(void)
{
	u32 a, b, c, d;

	cpuid(1, 0, &a, &b, &c, &d);
	return d;	/* Linux's AT_HWCAP on x86: CPUID leaf 1, EDX */
}

/*
 * Build argc/argv/envp/auxv on the new stack for prog, whose interpreter
 * (0: none) is mapped at at_base; returns the initial rsp or an errno.
 * From the top: execfn, the envp and argv strings, "x86_64" (AT_PLATFORM),
 * 16 random bytes (AT_RANDOM), then the vectors.
 */
static long build_stack(const struct elf_file *prog, unsigned long at_base, const char *execfn,
			const char *const argv[], const char *const envp[])
{
	static const char platform[] = "x86_64";
	long argc = count_strings(argv), envc = count_strings(envp);
	unsigned long sp = STACK_TOP, strs, at_execfn, at_platform, at_random;
	u64 random[2] = { rdtsc() * 0x9e3779b97f4a7c15ULL, ktime_get_ns() ^ 0x5157495245ULL };
	size_t fnlen = strnlen(execfn, MAX_ARG_STRLEN - 1) + 1;
	u64 *table;
	long n = 0, words;
	int err = 0;

	if (argc > MAX_ARGS || envc > MAX_ARGS)
		return -E2BIG;
	at_execfn = sp -= fnlen;
	for (long i = 0; i < envc; i++)
		sp -= strnlen(envp[i], MAX_ARG_STRLEN) + 1;
	for (long i = 0; i < argc; i++)
		sp -= strnlen(argv[i], MAX_ARG_STRLEN) + 1;
	strs = sp;
	at_platform = sp -= sizeof(platform);
	sp -= sizeof(random);
	at_random = sp = ALIGN_DOWN(sp, 16);

	words = 1 + argc + 1 + envc + 1 + 2 * 20;
	table = kmalloc(words * sizeof(u64), GFP_KERNEL);
	if (!table)
		return -ENOMEM;
	table[n++] = argc;
	current->mm->arg_start = strs;
	strs = put_strings(strs, argv, argc, &table[n], &err);
	current->mm->arg_end = current->mm->env_start = strs;
	n += argc;
	table[n++] = 0;
	current->mm->env_end = put_strings(strs, envp, envc, &table[n], &err);
	n += envc;
	table[n++] = 0;
#define AUX(k, v) do { table[n++] = (k); table[n++] = (v); } while (0)
	AUX(AT_HWCAP, cpu_hwcap());
	AUX(AT_PAGESZ, PAGE_SIZE);
	AUX(AT_CLKTCK, 100);
	AUX(AT_PHDR, phdr_addr(prog));
	AUX(AT_PHENT, sizeof(struct elf64_phdr));
	AUX(AT_PHNUM, prog->eh->e_phnum);
	AUX(AT_BASE, at_base);
	AUX(AT_FLAGS, 0);
	AUX(AT_ENTRY, prog->eh->e_entry + prog->bias);
	AUX(AT_UID, 0);
	AUX(AT_EUID, 0);
	AUX(AT_GID, 0);
	AUX(AT_EGID, 0);
	AUX(AT_SECURE, 0);
	AUX(AT_RANDOM, at_random);
	AUX(AT_EXECFN, at_execfn);
	AUX(AT_PLATFORM, at_platform);
	AUX(AT_NULL, 0);
#undef AUX
	err |= put_user_bytes(at_execfn, execfn, fnlen - 1) |
	       put_user_bytes(at_execfn + fnlen - 1, "", 1);
	err |= put_user_bytes(at_platform, platform, sizeof(platform));
	err |= put_user_bytes(at_random, random, sizeof(random));
	sp = ALIGN_DOWN(sp - n * sizeof(u64), 16);	/* rsp is 16-byte aligned at argc */
	err |= put_user_bytes(sp, table, n * sizeof(u64));
	kfree(table);
	return err ? -EFAULT : (long)sp;
}

/*
 * Check the program (and its interpreter, read here) before anything is
 * changed: 0 or the errno execve returns. A PIE (ET_DYN) is placed at
 * ELF_ET_DYN_BASE; Quire does not randomize.
 */
static int prepare(struct elf_file *prog, struct elf_file *interp)
{
	const char *interp_path;
	int err = check_headers(prog);

	if (err)
		return err;
	prog->bias = 0;
	if (prog->eh->e_type == ET_DYN)
		prog->bias = ALIGN_DOWN(ELF_ET_DYN_BASE - first_vaddr(prog), PAGE_SIZE);
	err = check_segments(prog);
	if (!err)
		err = find_interp(prog, &interp_path);
	if (!err && interp_path)
		err = load_interp_file(interp_path, prog, interp);
	return err;
}

/* Back to the caller's address space after a failed exec. */
static void exec_abort(struct task *t, struct mm_struct *mm, struct mm_struct *old)
{
	preempt_disable();
	set_task_mm(t, old);
	arch_switch_to(t, t);
	preempt_enable();
	if (!old)
		arch_load_kernel_pgd();
	mmput(mm);
}

int exec_image(const char *filename, const void *elf, size_t size,
	       const char *const argv[], const char *const envp[])
{
	struct elf_file prog = { .img = elf, .size = size }, interp = { 0 };
	struct task *t = current;
	struct mm_struct *mm, *old = t->mm;
	unsigned long entry;
	long sp;
	int err = t->sighand ? 0 : copy_sighand(t, NULL);
	char *exe = vfs_real_path(t->files ? t->files->cwd : NULL, filename);

	if (!err)
		err = prepare(&prog, &interp);
	if (!err)
		err = de_thread(t);	/* a valid image: the other threads end here, as Linux */
	if (err)
		goto out;
	err = -ENOMEM;
	mm = mm_alloc();
	if (!mm)
		goto out;
	/* Switch to the new address space to fill it; switch back on failure. */
	preempt_disable();
	set_task_mm(t, mm);
	arch_switch_to(t, t);
	preempt_enable();
	down_write(&mm->mmap_lock);
	err = insert_vma(mm, STACK_TOP - 128 * 1024, STACK_TOP,
			 VM_READ | VM_WRITE | VM_GROWSDOWN | VM_SOFTDIRTY);
	up_write(&mm->mmap_lock);
	if (!err)
		err = load_segments(mm, &prog);
	if (!err && interp.eh)
		err = load_segments(mm, &interp);
	sp = err ? err : build_stack(&prog, interp.eh ? interp.bias : 0, filename, argv, envp);
	if (sp < 0) {
		exec_abort(t, mm, old);
		err = (int)sp;
		goto out;
	}
	entry = interp.eh ? interp.eh->e_entry + interp.bias : prog.eh->e_entry + prog.bias;
	kfree((void *)interp.img);
	mm->start_brk = mm->brk = prog.hi;
	mm->start_stack = (unsigned long)sp;
	t->fs_base = 0;
	if (t->files)
		files_close_on_exec(t->files);	/* past the point of no return, as on Linux */
	flush_signal_handlers(t);
	kfree(t->exe_path);		/* de_thread made t the only thread, the leader */
	t->exe_path = exe;
	t->robust_list = 0;	/* it pointed into the old image (Linux walks it first: docs/futex.md) */
	process_list_add(t);
	if (old)
		mmput(old);
	fpu_reset_current();
	enter_user_mode(entry, (unsigned long)sp);
out:
	kfree((void *)interp.img);
	kfree(exe);
	return err;
}
