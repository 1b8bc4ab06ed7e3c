/*
 * truncate against a fault on another address space, 20,000 times: after
 * a truncate to 0 returns, no PTE maps a page of the file and the page
 * cache holds nothing beyond the end (truncate sets the size first, unmaps,
 * drops the pages, unmaps again; the fault rechecks the size under the
 * page-table lock).
 */
#include "ktap.h"
#include <pthread.h>
#include <quire/mm.h>
#include <quire/mmap.h>
#include <quire/rmap.h>
#include <quire/mm_internal.h>
#include <quire/fs.h>
#include <quire/pagemap.h>
#include <quire/uapi/fcntl.h>
#include <quire/errno.h>
#include <quire/percpu.h>
#include "host_setup.h"
#include <asm/pgtable.h>

#define NPAGES 64
/*
 * Under ThreadSanitizer (host-truncate-race-tsan) every access costs ten
 * times more; TSan finds a race between two accesses whether or not they
 * collide, so fewer rounds do.
 */
#ifdef __SANITIZE_THREAD__
#define ROUNDS 2500
#else
#define ROUNDS 20000
#endif
#define A 0x10000000UL

static struct file *f;
static struct mm_struct *mm2;
static int stop;		/* (atomic: the faulter polls it) */
static unsigned long faults, eio;

static void *faulter(void *arg)
{
	unsigned long k = 0;
	struct percpu cpu = { .self = &cpu, .cpu = 1, .online = true };

	host_this_cpu = &cpu;	/* a CPU of its own: its preempt count, its lock records */
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int r = handle_mm_fault(mm2, A + (k % NPAGES) * 4096, FAULT_FLAG_WRITE);

		if (r == -EIO)
			eio++;
		faults++;
		k++;
		if (k % NPAGES == 0) {
			down_read(&mm2->mmap_lock);
			unmap_region(find_vma(mm2, A), A, A + NPAGES * 4096);	/* refault next round */
			up_read(&mm2->mmap_lock);
		}
	}
	return NULL;
}

HOST_TEST(truncate_races_fault)
{
	pthread_t th;
	long ret;
	int bad_pte = 0, bad_cache = 0, rounds = ROUNDS;

	host_setup(16, 32, HOST_ROOTFS | HOST_ZERO_PAGE);
	EXPECT_EQ(vfs_open(NULL, "/t", O_RDWR | O_CREAT, 0600, &f), 0);
	EXPECT_EQ(vfs_ftruncate(f, NPAGES * 4096), 0);
	mm2 = mm_alloc();
	down_write(&mm2->mmap_lock);
	ret = do_mmap(mm2, A, NPAGES * 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, f, 0);
	up_write(&mm2->mmap_lock);
	EXPECT_EQ(ret, (long)A);
	pthread_create(&th, NULL, faulter, NULL);
	for (int i = 0; i < rounds; i++) {
		vfs_ftruncate(f, 0);
		/* Quiesce the faulter: its in-flight fault ends; later ones see i_size 0. */
		down_write(&mm2->mmap_lock);
		for (unsigned long a = A; a < A + NPAGES * 4096; a += 4096) {
			pte_t *p = pte_lookup(mm2->pgd, a, false);

			if (p && pte_present(*p)) {
				bad_pte++;
			}
		}
		unmap_region(find_vma(mm2, A), A, A + NPAGES * 4096);
		if (f->f_mapping->nrpages)
			bad_cache++;
		up_write(&mm2->mmap_lock);
		vfs_ftruncate(f, NPAGES * 4096);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	printf("# %d rounds, %lu faults (%lu -EIO): %d PTEs still mapping a page after truncate to 0, "
	       "%d times the page cache held pages beyond EOF\n", rounds, faults, eio, bad_pte, bad_cache);
	EXPECT_EQ(bad_pte, 0);
	EXPECT_EQ(bad_cache, 0);
}

HOST_TEST_MAIN(truncate_race, HOST_CASE(truncate_races_fault));
