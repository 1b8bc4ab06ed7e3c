/*
 * A private file mapping of a hole maps a page-cache page, as ramfs on
 * Linux: a later write(2) to the file shows through it until the process
 * writes the page itself (then copy-on-write keeps what it saw).
 */
#include "ktap.h"
#include <quire/mm.h>
#include <quire/mmap.h>
#include <quire/rmap.h>
#include <quire/huge_mm.h>
#include <quire/mm_internal.h>
#include <quire/fs.h>
#include <quire/uapi/fcntl.h>
#include <quire/errno.h>
#include "host_setup.h"
#include <asm/pgtable.h>

static void setup(void)
{
	host_setup(16, 32, HOST_ROOTFS | HOST_ZERO_PAGE);
}

static pte_t entry_of(struct mm_struct *mm, unsigned long a)
{
	pte_t *pmd = pmd_lookup(mm->pgd, a, false), *p;

	if (!pmd || !*pmd)
		return 0;
	if (pmd_leaf(*pmd))
		return *pmd;
	p = pte_offset(pmd, a);
	return *p;
}

static char *byte_at(struct mm_struct *mm, unsigned long a)
{
	pte_t e = entry_of(mm, a);
	unsigned long pfn;

	if (!pte_has_page(e))
		return NULL;
	pfn = pmd_leaf(e) ? pmd_pfn(e) + ((a >> 12) & 511) : pte_pfn(e);
	return (char *)page_address(pfn_to_page(pfn)) + (a & 4095);
}

/* MAP_PRIVATE file: a hole read maps the zero page; a later write() must show through (Linux). */
HOST_TEST(private_hole_sees_later_write)
{
	struct file *f;
	struct mm_struct *mm;
	unsigned long a = 0x10000000UL;
	loff_t pos = 0;
	long ret;
	char *b;

	setup();
	EXPECT_EQ(vfs_open(NULL, "/hole", O_RDWR | O_CREAT, 0600, &f), 0);
	EXPECT_EQ(vfs_ftruncate(f, 4096), 0);
	mm = mm_alloc();
	down_write(&mm->mmap_lock);
	ret = do_mmap(mm, a, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, f, 0);
	up_write(&mm->mmap_lock);
	EXPECT_EQ(ret, (long)a);
	EXPECT_EQ(handle_mm_fault(mm, a, 0), 0);		/* read: hole */
	EXPECT_EQ(vfs_write(f, "hello", 5, &pos), 5);
	b = byte_at(mm, a);
	printf("# after write(): mapping reads %#x (file has 'h' = 0x68); zero page mapped: %d\n",
	       b ? *b : -1, is_zero_pfn(pte_pfn(entry_of(mm, a))));
	EXPECT_EQ(handle_mm_fault(mm, a + 1, FAULT_FLAG_WRITE), 0);	/* COW */
	b = byte_at(mm, a);
	printf("# after COW: private page reads '%c%c' (Linux: 'he')\n", b[0] ?: '0', b[1] ?: '0');
	EXPECT_EQ(b[0], 'h');
	EXPECT_EQ(mm_verify(), 0);
	mmput(mm);
	fput(f);
}

HOST_TEST_MAIN(private_file_hole, HOST_CASE(private_hole_sees_later_write));
