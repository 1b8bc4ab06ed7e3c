/*
 * Loading a static ELF64 executable into a fresh address space (execve's
 * core). Every header field is checked; a malformed file fails with
 * -ENOEXEC and leaves the caller as it was. The segments are copied into
 * anonymous pages (Linux maps them from the page cache; Quire does not
 * yet), the stack is built as the Linux x86-64 ABI says:
 * argc, argv[], NULL, envp[], NULL, auxv pairs, then the strings above.
 */
#define pr_fmt(fmt) "exec: " fmt
#include <quire/process.h>
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/uaccess.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include <quire/time.h>
#include <quire/slab.h>
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
#define AT_ENTRY	9
#define AT_UID		11
#define AT_EUID		12
#define AT_GID		13
#define AT_EGID		14
#define AT_HWCAP	16
#define AT_CLKTCK	17
#define AT_SECURE	23
#define AT_RANDOM	25

static int check_headers(const u8 *img, size_t size, const struct elf64_ehdr **out)
{
	const struct elf64_ehdr *eh = (const void *)img;
	const struct elf64_phdr *ph;
	u64 prev_end = 0;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, "\177ELF", 4))
		return -ENOEXEC;
	if (eh->e_ident[4] != 2 || eh->e_ident[5] != 1 || eh->e_ident[6] != 1)
		return -ENOEXEC;		/* 64-bit, little endian, version 1 */
	if (eh->e_machine != EM_X86_64) {
		pr_info("not an x86-64 program (machine %u)\n", eh->e_machine);
		return -ENOEXEC;
	}
	if (eh->e_type != ET_EXEC) {
		pr_info("only static non-PIE executables are supported (ELF type %u)\n", eh->e_type);
		return -ENOEXEC;
	}
	if (eh->e_phentsize != sizeof(*ph) || eh->e_phnum == 0 || eh->e_phnum > MAX_PHNUM ||
	    eh->e_phoff > size || size - eh->e_phoff < (u64)eh->e_phnum * sizeof(*ph))
		return -ENOEXEC;
	ph = (const void *)(img + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_INTERP) {
			pr_info("dynamically linked programs are not supported\n");
			return -ENOEXEC;
		}
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_filesz > ph[i].p_memsz || ph[i].p_offset > size ||
		    size - ph[i].p_offset < ph[i].p_filesz ||
		    ph[i].p_vaddr < MMAP_MIN_ADDR || ph[i].p_vaddr + ph[i].p_memsz < ph[i].p_vaddr ||
		    ph[i].p_vaddr + ph[i].p_memsz > STACK_TOP - STACK_SIZE_MAX ||
		    (ph[i].p_vaddr & (PAGE_SIZE - 1)) != (ph[i].p_offset & (PAGE_SIZE - 1)))
			return -ENOEXEC;
		/* Segments in increasing order, not overlapping (page granular). */
		if (ALIGN_DOWN(ph[i].p_vaddr, PAGE_SIZE) < prev_end)
			return -ENOEXEC;
		prev_end = ALIGN_UP(ph[i].p_vaddr + ph[i].p_memsz, PAGE_SIZE);
	}
	if (!prev_end || eh->e_entry < MMAP_MIN_ADDR || eh->e_entry >= prev_end)
		return -ENOEXEC;
	*out = eh;
	return 0;
}

/* Copy bytes into the (current) new address space; pages fault in as needed. */
static int put_user_bytes(unsigned long addr, const void *src, size_t len)
{
	return copy_to_user((void *)addr, src, len) ? -EFAULT : 0;
}

static int load_segments(struct mm_struct *mm, const u8 *img, const struct elf64_ehdr *eh,
			 unsigned long *brk)
{
	const struct elf64_phdr *ph = (const void *)(img + eh->e_phoff);

	for (int i = 0; i < eh->e_phnum; i++) {
		unsigned long start, end, flags;
		int err;

		if (ph[i].p_type != PT_LOAD)
			continue;
		start = ALIGN_DOWN(ph[i].p_vaddr, PAGE_SIZE);
		end = ALIGN_UP(ph[i].p_vaddr + ph[i].p_memsz, PAGE_SIZE);
		/* Writable while loading; the final protection is set below. */
		down_write(&mm->mmap_lock);
		err = insert_vma(mm, start, end, VM_READ | VM_WRITE);
		up_write(&mm->mmap_lock);
		if (err)
			return err;
		err = put_user_bytes(ph[i].p_vaddr, img + ph[i].p_offset, ph[i].p_filesz);
		if (err)
			return err;
		flags = (ph[i].p_flags & PF_R ? VM_READ : 0) | (ph[i].p_flags & PF_W ? VM_WRITE : 0) |
			(ph[i].p_flags & PF_X ? VM_EXEC : 0);
		down_write(&mm->mmap_lock);
		find_vma(mm, start)->vm_flags = flags;
		change_protection(find_vma(mm, start), start, end);
		up_write(&mm->mmap_lock);
		*brk = max(*brk, end);
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

/* Build argc/argv/envp/auxv on the new stack; returns the initial rsp or an errno. */
static long build_stack(const struct elf64_ehdr *eh, const u8 *img,
			const char *const argv[], const char *const envp[])
{
	long argc = count_strings(argv), envc = count_strings(envp);
	unsigned long sp = STACK_TOP, strs;
	u64 random[2] = { rdtsc() * 0x9e3779b97f4a7c15ULL, ktime_get_ns() ^ 0x5157495245ULL };
	u64 *table;
	unsigned long at_random, phdr = 0;
	const struct elf64_phdr *ph = (const void *)(img + eh->e_phoff);
	long n = 0, words;
	int err = 0;

	if (argc > MAX_ARGS || envc > MAX_ARGS)
		return -E2BIG;
	/* The strings, at the very top. */
	for (long i = 0; i < envc; i++)
		sp -= strnlen(envp[i], MAX_ARG_STRLEN) + 1;
	for (long i = 0; i < argc; i++)
		sp -= strnlen(argv[i], MAX_ARG_STRLEN) + 1;
	strs = sp;
	sp -= sizeof(random);
	at_random = sp = ALIGN_DOWN(sp, 16);
	/* Where the program headers appear in memory: in the segment holding offset e_phoff. */
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset <= eh->e_phoff &&
		    eh->e_phoff < ph[i].p_offset + ph[i].p_filesz)
			phdr = ph[i].p_vaddr + (eh->e_phoff - ph[i].p_offset);

	words = 1 + argc + 1 + envc + 1 + 2 * 14;
	table = kmalloc(words * sizeof(u64), GFP_KERNEL);
	if (!table)
		return -ENOMEM;
	table[n++] = argc;
	for (long i = 0; i < argc; i++) {
		size_t len = strnlen(argv[i], MAX_ARG_STRLEN) + 1;

		table[n++] = strs;
		err |= put_user_bytes(strs, argv[i], len - 1) | put_user_bytes(strs + len - 1, "", 1);
		strs += len;
	}
	table[n++] = 0;
	for (long i = 0; i < envc; i++) {
		size_t len = strnlen(envp[i], MAX_ARG_STRLEN) + 1;

		table[n++] = strs;
		err |= put_user_bytes(strs, envp[i], len - 1) | put_user_bytes(strs + len - 1, "", 1);
		strs += len;
	}
	table[n++] = 0;
#define AUX(k, v) do { table[n++] = (k); table[n++] = (v); } while (0)
	AUX(AT_PHDR, phdr);
	AUX(AT_PHENT, sizeof(struct elf64_phdr));
	AUX(AT_PHNUM, eh->e_phnum);
	AUX(AT_PAGESZ, PAGE_SIZE);
	AUX(AT_ENTRY, eh->e_entry);
	AUX(AT_UID, 0);
	AUX(AT_EUID, 0);
	AUX(AT_GID, 0);
	AUX(AT_EGID, 0);
	AUX(AT_HWCAP, 0);
	AUX(AT_CLKTCK, 100);
	AUX(AT_SECURE, 0);
	AUX(AT_RANDOM, at_random);
	AUX(AT_NULL, 0);
#undef AUX
	err |= put_user_bytes(at_random, random, sizeof(random));
	sp = ALIGN_DOWN(sp - n * sizeof(u64), 16);	/* rsp is 16-byte aligned at argc */
	err |= put_user_bytes(sp, table, n * sizeof(u64));
	kfree(table);
	return err ? -EFAULT : (long)sp;
}

int exec_image(const void *elf, size_t size, const char *const argv[], const char *const envp[])
{
	const struct elf64_ehdr *eh;
	struct task *t = current;
	struct mm_struct *mm, *old = t->mm;
	unsigned long brk = 0;
	long sp;
	int err = check_headers(elf, size, &eh);

	if (err)
		return err;
	mm = mm_alloc();
	if (!mm)
		return -ENOMEM;
	/* Switch to the new address space to fill it; switch back on failure. */
	preempt_disable();
	t->mm = mm;
	arch_switch_to(t, t);
	preempt_enable();
	down_write(&mm->mmap_lock);
	err = insert_vma(mm, STACK_TOP - 128 * 1024, STACK_TOP, VM_READ | VM_WRITE | VM_GROWSDOWN);
	up_write(&mm->mmap_lock);
	if (!err)
		err = load_segments(mm, elf, eh, &brk);
	sp = err ? err : build_stack(eh, elf, argv, envp);
	if (sp < 0) {
		preempt_disable();
		t->mm = old;
		arch_switch_to(t, t);
		preempt_enable();
		if (!old)
			arch_load_kernel_pgd();
		mmput(mm);
		return (int)sp;
	}
	mm->start_brk = mm->brk = brk;
	mm->start_stack = (unsigned long)sp;
	t->fs_base = 0;
	if (old)
		mmput(old);
	fpu_reset_current();
	enter_user_mode(eh->e_entry, (unsigned long)sp);
}
