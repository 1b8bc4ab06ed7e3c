/*
 * A device with private memory for the kernel tests (tests/kernel/
 * test_device.c): what a driver of device memory does, in its smallest
 * form, for the migrate_device suite and the random mm sequence. Its
 * memory is a share of what was kept at boot (devmem=; on the host,
 * HOST_DEVMEM), claimed once per machine; a CPU fault on one of its pages
 * moves that page back to RAM.
 */
#ifndef TESTS_KERNEL_TEST_DEVICE_H
#define TESTS_KERNEL_TEST_DEVICE_H

#include <quire/memremap.h>
#include <quire/spinlock.h>

#define TEST_DEVICE_MAX_PAGES	1024

struct test_device {
	struct dev_pagemap pgmap;	/* pgmap.owner is the device itself */
	unsigned long nr_pages;
	spinlock_t lock;		/* free */
	struct page *free[TEST_DEVICE_MAX_PAGES];	/* nr_free free pages */
	unsigned long nr_free;
	unsigned long faults_back;	/* pages a CPU fault brought back */
};

/* The device's memory, nr_pages (at most TEST_DEVICE_MAX_PAGES) of it: true when it is there (made now, or before on this machine). */
bool test_device_up(struct test_device *d, unsigned long nr_pages);
/* A free page (referenced, locked), or NULL when all are in use. */
struct page *test_device_alloc(struct test_device *d);
/* The page of mpfn's (or zeroes, for an empty slot) into page, and page's word in *dstw. */
void test_device_fill(struct page *page, unsigned long mpfn, unsigned long *dstw);

#endif
