/*
 * /dev/hmm_dmirror0..3 (drivers/hmm_dmirror.c, docs/mm/device-memory.md):
 * the ioctl interface of Linux 6.12's test_hmm driver (lib/test_hmm_uapi.h),
 * with Linux's command numbers, structure layout and snapshot byte values,
 * so that Linux's hmm-tests selftest runs on Quire unmodified. Written from
 * the interface's description; the layout is checked below.
 */
#ifndef QUIRE_UAPI_HMM_DMIRROR_H
#define QUIRE_UAPI_HMM_DMIRROR_H

#include <quire/types.h>
#include <quire/uapi/gup_test.h>	/* GUP_IOC: Linux's ioctl number layout */

/* One request: a range of the caller's address space and a buffer. */
struct hmm_dmirror_cmd {
	u64 addr;	/* in: start of the range (page aligned) */
	u64 ptr;	/* in: the user buffer the device's data goes to or comes from */
	u64 npages;	/* in: pages in the range */
	u64 cpages;	/* out: pages copied (or reported, or migrated) */
	u64 faults;	/* out: device page faults taken */
};
_Static_assert(sizeof(struct hmm_dmirror_cmd) == 40, "struct hmm_dmirror_cmd is Linux's 40 bytes");

#define HMM_DMIRROR_IOC(nr) \
	GUP_IOC(GUP_IOC_READ | GUP_IOC_WRITE, 'H', nr, sizeof(struct hmm_dmirror_cmd))
#define HMM_DMIRROR_READ		HMM_DMIRROR_IOC(0x00)	/* the device reads the range */
#define HMM_DMIRROR_WRITE		HMM_DMIRROR_IOC(0x01)	/* the device writes it */
#define HMM_DMIRROR_MIGRATE_TO_DEV	HMM_DMIRROR_IOC(0x02)	/* move it into device memory */
#define HMM_DMIRROR_MIGRATE_TO_SYS	HMM_DMIRROR_IOC(0x03)	/* move it back */
#define HMM_DMIRROR_SNAPSHOT		HMM_DMIRROR_IOC(0x04)	/* a byte per page: what is mapped */
#define HMM_DMIRROR_EXCLUSIVE		HMM_DMIRROR_IOC(0x05)	/* take exclusive (atomic) access */
#define HMM_DMIRROR_CHECK_EXCLUSIVE	HMM_DMIRROR_IOC(0x06)	/* EPERM while any is still held */
#define HMM_DMIRROR_RELEASE		HMM_DMIRROR_IOC(0x07)	/* evict all device memory */

/* The snapshot's byte for each page. */
enum {
	HMM_DMIRROR_PROT_ERROR			= 0xFF,	/* nothing valid (no VMA, no access) */
	HMM_DMIRROR_PROT_NONE			= 0x00,	/* not mapped */
	HMM_DMIRROR_PROT_READ			= 0x01,
	HMM_DMIRROR_PROT_WRITE			= 0x02,
	HMM_DMIRROR_PROT_PMD			= 0x04,	/* part of a PMD mapping */
	HMM_DMIRROR_PROT_PUD			= 0x08,
	HMM_DMIRROR_PROT_ZERO			= 0x10,	/* the zero page */
	HMM_DMIRROR_PROT_DEV_PRIVATE_LOCAL	= 0x20,	/* in this device's private memory */
	HMM_DMIRROR_PROT_DEV_PRIVATE_REMOTE	= 0x30,	/* in another's */
	HMM_DMIRROR_PROT_DEV_COHERENT_LOCAL	= 0x40,
	HMM_DMIRROR_PROT_DEV_COHERENT_REMOTE	= 0x50,
};

#endif
