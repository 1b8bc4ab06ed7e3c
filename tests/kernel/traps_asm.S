/* Instructions that fault on purpose, at known addresses, for traps_test.c. */
	.text
	.globl test_ud2, test_ud2_site
	.type test_ud2, @function
test_ud2:
test_ud2_site:
	ud2
	ret
	.size test_ud2, . - test_ud2

/*
 * Switch to an unmapped stack and fault: delivering the #UD needs the stack,
 * which page-faults, and delivering that #PF page-faults again: a double
 * fault, which only an IST stack can handle. The fault_catch longjmp puts
 * the real stack back.
 */
	.globl test_stack_overflow
	.type test_stack_overflow, @function
test_stack_overflow:
	movabsq $0x40000000000, %rsp	/* 4 TiB: not mapped by the early tables */
	ud2
	.size test_stack_overflow, . - test_stack_overflow
