#!/bin/sh
# A host test that crashes after its first case (a self-test of the runner,
# tests/plan.txt selftest-host-crash): the runner must count the crash, and
# the cases it never reached, as failures.
echo "KTAP version 1"
echo "1..2"
echo "ok 1 before_the_crash"
kill -SEGV $$
echo "ok 2 never_reached"
