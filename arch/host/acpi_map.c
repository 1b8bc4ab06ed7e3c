/*
 * acpi_os_map for host tests: "physical memory" is a set of regions, each a
 * buffer the test owns (usually one table, allocated to its exact size).
 * A mapping is served only when it lies inside one region, so a parser
 * that reads past a table's end either gets NULL here or trips ASan.
 */
#include <quire/acpi.h>
#include <quire/errno.h>
#include <quire/printk.h>

#define HOST_ACPI_REGIONS 64

static struct {
	phys_addr_t phys;
	const u8 *buf;
	size_t len;
} regions[HOST_ACPI_REGIONS];
static int nr_regions;

void host_acpi_map_reset(void)
{
	nr_regions = 0;
}

int host_acpi_map_add(phys_addr_t phys, const void *buf, size_t len)
{
	if (nr_regions == HOST_ACPI_REGIONS)
		return -ENOMEM;
	regions[nr_regions].phys = phys;
	regions[nr_regions].buf = buf;
	regions[nr_regions].len = len;
	nr_regions++;
	return 0;
}

const void *acpi_os_map(phys_addr_t phys, size_t len)
{
	for (int i = 0; i < nr_regions; i++) {
		if (phys >= regions[i].phys && phys - regions[i].phys <= regions[i].len &&
		    len <= regions[i].len - (phys - regions[i].phys))
			return regions[i].buf + (phys - regions[i].phys);
	}
	pr_warn("acpi: [mem %#llx+%zu] is not mapped (host)\n", (unsigned long long)phys, len);
	return NULL;
}
