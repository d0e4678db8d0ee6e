/* inst_plugin.c - a library the test program dlopens (tests/instrument):
 * built twice, as is (plugin_entry -> plugin_helper, a static function
 * named by .symtab) and stripped (stripped_entry -> a static function no
 * symbol table names: recorded as 0x<offset>@<library>). */
static volatile int sink;

static __attribute__((noinline)) int hidden_helper(int x) { return x + sink; }

#ifdef INST_STRIPPED
__attribute__((noinline)) int stripped_entry(int x) { return hidden_helper(x) + 1; }
#else
static __attribute__((noinline)) int plugin_helper(int x) { return hidden_helper(x) * 3; }
__attribute__((noinline)) int plugin_entry(int x) { return plugin_helper(x) + 1; }
#endif
