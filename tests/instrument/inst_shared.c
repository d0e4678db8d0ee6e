/* inst_shared.c - a shared library the test program links (tests/instrument). */
static volatile int sink;

__attribute__((noinline)) int shared_helper(int x) { return x + sink; }

__attribute__((noinline)) int shared_work(int x) { return shared_helper(x) * 2; }
