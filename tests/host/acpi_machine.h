/*
 * A synthetic ACPI machine for host tests: a description (CPUs with their
 * APIC ids and domains, SRAT memory ranges, SLIT, HMAT, the firmware memory
 * map) turned into real tables (MADT, SRAT, SLIT, HMAT, RSDT or XSDT, and
 * the RSDP copy in boot_info). Each table lives in a heap buffer of its
 * exact size, served as "physical memory" by arch/host/acpi_map.c, so ASan
 * catches a parser reading past a table. Tests corrupt the buffers at will.
 */
#ifndef TESTS_HOST_ACPI_MACHINE_H
#define TESTS_HOST_ACPI_MACHINE_H

#include "ktap.h"
#include <quire/acpi.h>
#include <quire/bootinfo.h>
#include <quire/string.h>

/* ---- table builder ---- */

struct tb {
	u8 data[16384];
	size_t len;
};

static __unused void tb_put(struct tb *t, u64 v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		t->data[t->len++] = (u8)(v >> (8 * i));
}

static __unused void put_le(u8 *p, u64 v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (u8)(v >> (8 * i));
}

static __unused void tb_set(struct tb *t, size_t off, u64 v, int bytes)
{
	put_le(t->data + off, v, bytes);
}

static __unused u8 sum8(const u8 *p, size_t n)
{
	u8 s = 0;

	while (n--)
		s += *p++;
	return s;
}

static __unused void tb_header(struct tb *t, const char *sig, u8 rev)
{
	t->len = 0;
	for (int i = 0; i < 4; i++)
		tb_put(t, (u8)sig[i], 1);
	tb_put(t, 0, 4);		/* length, set by tb_finish */
	tb_put(t, rev, 1);
	tb_put(t, 0, 1);		/* checksum */
	for (int i = 0; i < 6; i++)
		tb_put(t, "QUIRE "[i], 1);
	for (int i = 0; i < 8; i++)
		tb_put(t, "TESTTBL "[i], 1);
	tb_put(t, 1, 4);
	tb_put(t, 0x51554952, 4);
	tb_put(t, 1, 4);
}

static __unused void tb_finish(struct tb *t)
{
	tb_set(t, 4, t->len, 4);
	t->data[9] = 0;
	t->data[9] = (u8)-sum8(t->data, t->len);
}

/* ---- "physical memory": one exact-size heap buffer per table ---- */

struct blob {
	char sig[5];
	phys_addr_t phys;
	u8 *buf;
	size_t len;
};

#define MAX_BLOBS 16
static struct blob blobs[MAX_BLOBS];
static int nr_blobs;

static __unused void blobs_free(void)
{
	for (int i = 0; i < nr_blobs; i++)
		free(blobs[i].buf);
	nr_blobs = 0;
	host_acpi_map_reset();
}

static __unused void blobs_map(void)
{
	host_acpi_map_reset();
	for (int i = 0; i < nr_blobs; i++)
		host_acpi_map_add(blobs[i].phys, blobs[i].buf, blobs[i].len);
}

static __unused struct blob *blob_add(const char *sig, phys_addr_t phys, const void *p, size_t len)
{
	struct blob *b = &blobs[nr_blobs++];

	__builtin_memcpy(b->sig, sig, 4);
	b->sig[4] = 0;
	b->phys = phys;
	b->buf = malloc(len ? len : 1);
	b->len = len;
	__builtin_memcpy(b->buf, p, len);
	return b;
}

static __unused struct blob *blob(const char *sig)
{
	for (int i = 0; i < nr_blobs; i++)
		if (!__builtin_memcmp(blobs[i].sig, sig, 4))
			return &blobs[i];
	return NULL;
}

/* Recompute a table's checksum after the test changed it. */
static __unused void blob_fix(struct blob *b)
{
	b->buf[9] = 0;
	b->buf[9] = (u8)-sum8(b->buf, b->len);
}

/* Cut a table to len bytes (a fresh exact-size buffer), header length untouched. */
static __unused void blob_truncate(struct blob *b, size_t len)
{
	u8 *p = malloc(len ? len : 1);

	__builtin_memcpy(p, b->buf, len);
	free(b->buf);
	b->buf = p;
	b->len = len;
	blobs_map();
}

/* ---- machine descriptions ---- */

struct mcpu {
	u32 apic;
	u32 pxm;
	bool x2apic;
	u32 madt_flags;
	u32 srat_flags;
	bool no_srat;
};

struct mmem {
	u64 base, len;
	u32 pxm;
	u32 flags;
};

struct machine {
	int nr_cpus;
	struct mcpu cpu[80];
	int nr_mem;
	struct mmem mem[48];
	bool no_madt, no_srat, xsdt;
	int slit_n;
	u8 slit[12][12];
	bool hmat;
	int nr_init, nr_targ;
	u32 init_pxm[8], targ_pxm[8];
	u16 lat[8][8], bw[8][8];
	u64 lat_base, bw_base;		/* ps, MB/s */
	int nr_mpda;
	u32 mpda_mem[8], mpda_init[8];
	u16 mpda_flags[8];
	int nr_mmap;
	struct boot_mem_region mmap[40];
	/* Raw bytes appended to the MADT / SRAT entries (malformed entries). */
	u8 madt_extra[64], srat_extra[64];
	int madt_extra_len, srat_extra_len;
};

static struct machine mach;

#define MB (1ULL << 20)

static __unused void add_cpu(u32 apic, u32 pxm)
{
	mach.cpu[mach.nr_cpus++] = (struct mcpu){ apic, pxm, false, 1, 1, false };
}

static __unused void add_mem(u64 base, u64 len, u32 pxm)
{
	mach.mem[mach.nr_mem++] = (struct mmem){ base, len, pxm, 1 };
}

static __unused void add_mmap(u64 base, u64 len, u32 type)
{
	mach.mmap[mach.nr_mmap++] = (struct boot_mem_region){ base, len, type };
}

/* QEMU's firmware map for a 2 GiB q35 machine, as SeaBIOS reports it. */
static __unused void mmap_2g(void)
{
	add_mmap(0, 0x9fc00, BOOT_MEM_AVAILABLE);
	add_mmap(0x9fc00, 0x400, BOOT_MEM_RESERVED);
	add_mmap(0xf0000, 0x10000, BOOT_MEM_RESERVED);
	add_mmap(0x100000, 0x7ffe0000 - 0x100000, BOOT_MEM_AVAILABLE);
	add_mmap(0x7ffe0000, 0x20000, BOOT_MEM_RESERVED);
	add_mmap(0xb0000000, 0x10000000, BOOT_MEM_RESERVED);
}

/*
 * numa3 as QEMU 7.2 describes it (tests/qemu/topologies/numa3.args):
 * CPUs 0-1 on node 0, 2-3 on node 1; 768M, 768M, 512M; SLIT 21/30/40;
 * HMAT latency base 10 ns, bandwidth base 1024 MB/s.
 */
static __unused void numa3(void)
{
	static const u16 lat[2][3] = { { 8, 13, 25 }, { 13, 8, 30 } };
	static const u16 bw[2][3] = { { 20, 10, 6 }, { 10, 20, 4 } };
	static const u8 slit[3][3] = { { 10, 21, 30 }, { 21, 10, 40 }, { 30, 40, 10 } };

	memset(&mach, 0, sizeof(mach));
	for (u32 i = 0; i < 4; i++)
		add_cpu(i, i / 2);
	add_mem(0, 0xa0000, 0);
	add_mem(0x100000, 0x30000000 - 0x100000, 0);
	add_mem(0x30000000, 0x30000000, 1);
	add_mem(0x60000000, 0x20000000, 2);
	mach.slit_n = 3;
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			mach.slit[i][j] = slit[i][j];
	mach.hmat = true;
	mach.nr_init = 2;
	mach.nr_targ = 3;
	for (int i = 0; i < 3; i++) {
		mach.init_pxm[i] = i;
		mach.targ_pxm[i] = i;
	}
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++) {
			mach.lat[i][j] = lat[i][j];
			mach.bw[i][j] = bw[i][j];
		}
	mach.lat_base = 10000;
	mach.bw_base = 1024;
	mach.nr_mpda = 3;
	for (int i = 0; i < 3; i++) {
		mach.mpda_mem[i] = i;
		mach.mpda_init[i] = i == 1 ? 1 : 0;
		mach.mpda_flags[i] = 1;
	}
	mmap_2g();
}

/* The memoryless topology: node 1 has CPUs 2-3 and no memory. */
static __unused void memoryless(void)
{
	numa3();
	mach.nr_mem = 0;
	add_mem(0, 0xa0000, 0);
	add_mem(0x100000, 0x40000000 - 0x100000, 0);
	add_mem(0x40000000, 0x20000000, 2);
	mach.nr_mmap = 0;
	add_mmap(0, 0x9fc00, BOOT_MEM_AVAILABLE);
	add_mmap(0x100000, 0x5ffe0000 - 0x100000, BOOT_MEM_AVAILABLE);
	/* HMAT: no numbers for target 1 (no memory), as QEMU leaves them 0. */
	for (int i = 0; i < 2; i++)
		mach.lat[i][1] = mach.bw[i][1] = 0;
	mach.mpda_flags[1] = 0;
}

static __unused void build_madt(struct tb *t)
{
	tb_header(t, "APIC", 5);
	tb_put(t, 0xfee00000, 4);
	tb_put(t, 1, 4);
	for (int i = 0; i < mach.nr_cpus; i++) {
		const struct mcpu *c = &mach.cpu[i];

		if (c->x2apic) {
			tb_put(t, ACPI_MADT_TYPE_LOCAL_X2APIC, 1);
			tb_put(t, 16, 1);
			tb_put(t, 0, 2);
			tb_put(t, c->apic, 4);
			tb_put(t, c->madt_flags, 4);
			tb_put(t, i, 4);
		} else {
			tb_put(t, ACPI_MADT_TYPE_LOCAL_APIC, 1);
			tb_put(t, 8, 1);
			tb_put(t, i, 1);
			tb_put(t, c->apic, 1);
			tb_put(t, c->madt_flags, 4);
		}
	}
	tb_put(t, ACPI_MADT_TYPE_IO_APIC, 1);
	tb_put(t, 12, 1);
	tb_put(t, 0, 2);
	tb_put(t, 0xfec00000, 4);
	tb_put(t, 0, 4);
	for (int i = 0; i < mach.madt_extra_len; i++)
		tb_put(t, mach.madt_extra[i], 1);
	tb_finish(t);
}

static __unused void build_srat(struct tb *t)
{
	tb_header(t, "SRAT", 1);
	tb_put(t, 1, 4);
	tb_put(t, 0, 8);
	for (int i = 0; i < mach.nr_cpus; i++) {
		const struct mcpu *c = &mach.cpu[i];

		if (c->no_srat)
			continue;
		if (c->x2apic) {
			tb_put(t, ACPI_SRAT_TYPE_X2APIC_CPU_AFFINITY, 1);
			tb_put(t, 24, 1);
			tb_put(t, 0, 2);
			tb_put(t, c->pxm, 4);
			tb_put(t, c->apic, 4);
			tb_put(t, c->srat_flags, 4);
			tb_put(t, 0, 8);
		} else {
			tb_put(t, ACPI_SRAT_TYPE_CPU_AFFINITY, 1);
			tb_put(t, 16, 1);
			tb_put(t, c->pxm & 0xff, 1);
			tb_put(t, c->apic, 1);
			tb_put(t, c->srat_flags, 4);
			tb_put(t, 0, 8);
		}
	}
	for (int i = 0; i < mach.nr_mem; i++) {
		const struct mmem *m = &mach.mem[i];

		tb_put(t, ACPI_SRAT_TYPE_MEMORY_AFFINITY, 1);
		tb_put(t, 40, 1);
		tb_put(t, m->pxm, 4);
		tb_put(t, 0, 2);
		tb_put(t, m->base, 8);
		tb_put(t, m->len, 8);
		tb_put(t, 0, 4);
		tb_put(t, m->flags, 4);
		tb_put(t, 0, 8);
	}
	for (int i = 0; i < mach.srat_extra_len; i++)
		tb_put(t, mach.srat_extra[i], 1);
	tb_finish(t);
}

static __unused void build_slit(struct tb *t)
{
	tb_header(t, "SLIT", 1);
	tb_put(t, mach.slit_n, 8);
	for (int i = 0; i < mach.slit_n; i++)
		for (int j = 0; j < mach.slit_n; j++)
			tb_put(t, mach.slit[i][j], 1);
	tb_finish(t);
}

static __unused void hmat_lb(struct tb *t, u8 type, u64 base, u16 v[8][8])
{
	tb_put(t, ACPI_HMAT_TYPE_LOCALITY, 2);
	tb_put(t, 0, 2);
	tb_put(t, 32 + 4 * mach.nr_init + 4 * mach.nr_targ + 2 * mach.nr_init * mach.nr_targ, 4);
	tb_put(t, ACPI_HMAT_MEMORY, 1);
	tb_put(t, type, 1);
	tb_put(t, 0, 2);
	tb_put(t, mach.nr_init, 4);
	tb_put(t, mach.nr_targ, 4);
	tb_put(t, 0, 4);
	tb_put(t, base, 8);
	for (int i = 0; i < mach.nr_init; i++)
		tb_put(t, mach.init_pxm[i], 4);
	for (int i = 0; i < mach.nr_targ; i++)
		tb_put(t, mach.targ_pxm[i], 4);
	for (int i = 0; i < mach.nr_init; i++)
		for (int j = 0; j < mach.nr_targ; j++)
			tb_put(t, v[i][j], 2);
}

static __unused void build_hmat(struct tb *t)
{
	tb_header(t, "HMAT", 2);
	tb_put(t, 0, 4);
	for (int i = 0; i < mach.nr_mpda; i++) {
		tb_put(t, ACPI_HMAT_TYPE_PROXIMITY, 2);
		tb_put(t, 0, 2);
		tb_put(t, 40, 4);
		tb_put(t, mach.mpda_flags[i], 2);
		tb_put(t, 0, 2);
		tb_put(t, mach.mpda_init[i], 4);
		tb_put(t, mach.mpda_mem[i], 4);
		tb_put(t, 0, 4);
		tb_put(t, 0, 8);
		tb_put(t, 0, 8);
	}
	hmat_lb(t, ACPI_HMAT_ACCESS_LATENCY, mach.lat_base, mach.lat);
	hmat_lb(t, ACPI_HMAT_ACCESS_BANDWIDTH, mach.bw_base, mach.bw);
	tb_finish(t);
}

#define TABLE_BASE	0x7ffe0000ULL
#define TABLE_STRIDE	0x4000ULL

/* Build the tables, the RSDP copy and the memory map into boot_info. */
static __unused void install(void)
{
	static struct tb t;
	phys_addr_t addr[8];
	int n = 0;
	struct acpi_rsdp rsdp;

	blobs_free();
	if (!mach.no_madt) {
		build_madt(&t);
		addr[n] = TABLE_BASE + TABLE_STRIDE * (n + 1);
		blob_add("APIC", addr[n++], t.data, t.len);
	}
	if (!mach.no_srat) {
		build_srat(&t);
		addr[n] = TABLE_BASE + TABLE_STRIDE * (n + 1);
		blob_add("SRAT", addr[n++], t.data, t.len);
	}
	if (mach.slit_n) {
		build_slit(&t);
		addr[n] = TABLE_BASE + TABLE_STRIDE * (n + 1);
		blob_add("SLIT", addr[n++], t.data, t.len);
	}
	if (mach.hmat) {
		build_hmat(&t);
		addr[n] = TABLE_BASE + TABLE_STRIDE * (n + 1);
		blob_add("HMAT", addr[n++], t.data, t.len);
	}
	tb_header(&t, mach.xsdt ? "XSDT" : "RSDT", 1);
	for (int i = 0; i < n; i++)
		tb_put(&t, addr[i], mach.xsdt ? 8 : 4);
	tb_finish(&t);
	blob_add(mach.xsdt ? "XSDT" : "RSDT", TABLE_BASE, t.data, t.len);
	blobs_map();

	memset(&rsdp, 0, sizeof(rsdp));
	__builtin_memcpy(rsdp.signature, "RSD PTR ", 8);
	__builtin_memcpy(rsdp.oem_id, "QUIRE ", 6);
	rsdp.revision = mach.xsdt ? 2 : 0;
	/* Like OVMF: a v2 RSDP has both; the RSDT is a copy of the XSDT's list. */
	rsdp.rsdt_address = mach.xsdt ? 0 : (u32)TABLE_BASE;
	rsdp.checksum = (u8)-sum8((const u8 *)&rsdp, 20);
	if (mach.xsdt) {
		rsdp.length = 36;
		rsdp.xsdt_address = TABLE_BASE;
		rsdp.extended_checksum = (u8)-sum8((const u8 *)&rsdp, 36);
	}
	memset(&boot_info, 0, sizeof(boot_info));
	__builtin_memcpy(boot_info.rsdp, &rsdp, 36);
	boot_info.rsdp_len = mach.xsdt ? 36 : 20;
	for (int i = 0; i < mach.nr_mmap; i++)
		boot_info.mmap[i] = mach.mmap[i];
	boot_info.nr_mmap = mach.nr_mmap;
}


#endif
