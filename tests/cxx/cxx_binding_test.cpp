/*
 * cxx_binding_test.cpp - tests of the C++ binding (scope_profiler.hpp).
 *
 * One test function per ctest entry: `cxx_binding_test <test> <file>` runs
 * one session writing <file>, and ctest then reads the file back with
 * tests/package/profile_check.py to count the calls of each region.
 *
 * Two kinds of evidence that every scope closed exactly once:
 *   - in process: sp_finalize returns SP_ERR_OPEN_AT_FINALIZE when a call
 *     was left open, and an extra end (e.g. a moved-from scope ending too)
 *     sets sp_last_error to SP_ERR_UNMATCHED_END;
 *   - in the file: each region has exactly the expected number of calls.
 */
#include <scope_profiler.hpp>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace sp = scope_profiler;

static int failures = 0;

/* A check records the failure with its expression and values, and the test
 * continues, so one run shows every broken expectation. */
#define CHECK_EQ_INT(actual, expected)                                                   \
    do {                                                                                 \
        long long a_ = (long long)(actual), e_ = (long long)(expected);                  \
        if (a_ != e_) {                                                                  \
            std::fprintf(stderr, "%s:%d: CHECK_EQ_INT(%s, %s) failed: %lld != %lld\n",   \
                         __FILE__, __LINE__, #actual, #expected, a_, e_);                \
            ++failures;                                                                  \
        }                                                                                \
    } while (0)

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                                  \
        }                                                                                \
    } while (0)

/* Error status of the thread after a test body, naming the code. */
static void check_no_error(const char *where) {
    int status = sp_last_error();
    if (status != SP_OK) {
        std::fprintf(stderr, "%s: sp_last_error() = %s (%s)\n", where, sp_status_name(status),
                     sp_error_string(status));
        ++failures;
    }
}

/* ---- normal exit ------------------------------------------------------- */

static int function_under_test(int n) {
    SP_FUNCTION();
    if (n > 1) {
        SP_SCOPE("cxx_normal_early_return");
        return n; // both scopes end on this path
    }
    return 0;
}

static void test_normal_exit() {
    for (int i = 0; i < 2; ++i) {
        SP_SCOPE("cxx_normal_outer");
        {
            SP_SCOPE("cxx_normal_inner");
        }
        // Two macros on one line must not collide (__COUNTER__ names).
        SP_SCOPE("cxx_normal_a"); SP_SCOPE("cxx_normal_b");
    }
    for (int i = 0; i < 3; ++i) CHECK_EQ_INT(function_under_test(i), i > 1 ? i : 0);
    check_no_error("normal_exit");
}

/* ---- exceptions -------------------------------------------------------- */

static void thrower() {
    SP_FUNCTION();
    SP_SCOPE("cxx_exc_in_thrower");
    throw std::runtime_error("expected by the test");
}

static void test_exception() {
    bool caught = false;
    try {
        sp::scope outer("cxx_exc_outer");
        sp::scope inner("cxx_exc_inner");
        thrower();
    } catch (const std::runtime_error &) {
        caught = true;
    }
    CHECK(caught);
    // The unwinding closed all four calls: a new root call works and no
    // error was recorded on the way.
    {
        SP_SCOPE("cxx_exc_after");
    }
    check_no_error("exception");
}

/* ---- moves and early end ----------------------------------------------- */

static sp::scope make_scope(const char *name) {
    sp::scope s(name);
    return s; // moved (or elided) into the caller; must not end here
}

static void test_move() {
    {
        sp::scope a("cxx_move");
        CHECK(a.active());
        {
            sp::scope b(std::move(a));
            CHECK(!a.active());
            CHECK(b.active());
        } // b ends the call
        // a is destroyed at the end of this block; it must end nothing. An
        // extra sp_end would set SP_ERR_UNMATCHED_END.
    }
    check_no_error("move: moved-from object");
    {
        sp::scope f = make_scope("cxx_move_factory");
        CHECK(f.active());
    }
    {
        sp::scope e("cxx_early_end");
        e.end();
        CHECK(!e.active());
        e.end(); // idempotent
    }
    check_no_error("move");
}

/* ---- region handles and name forms ------------------------------------- */

static void test_region() {
    sp::region none;
    CHECK(!none.valid());
    CHECK(none.name() == nullptr);
    {
        sp::scope nothing(none); // records nothing, ends nothing
        CHECK(!nothing.active());
    }
    check_no_error("region: invalid handle scope");

    sp::region r("cxx_region");
    CHECK(r.valid());
    CHECK(r.name() != nullptr && std::strcmp(r.name(), "cxx_region") == 0);
    CHECK_EQ_INT(sp::region("cxx_region").id(), r.id());
    CHECK_EQ_INT(sp::region::from_id(r.id()).id(), r.id());
    {
        SP_SCOPE(r);
    }
    {
        sp::scope s(r);
    }
    std::string name("cxx_string");
    {
        SP_SCOPE(name);
    }
#if __cplusplus >= 201703L
    // A view that is not NUL-terminated at its end: only its bytes count.
    std::string_view view("cxx_view_and_more", 8);
    {
        SP_SCOPE(view);
    }
#else
    { SP_SCOPE("cxx_view"); }
#endif
    // The C header's call-site macros compile in C++ (-Wpedantic, no GNU
    // mode) and record the literal's region each time.
    for (int i = 0; i < 3; ++i) {
        SP_REGION_BEGIN("cxx_site");
        SP_REGION_END("cxx_site");
    }
    check_no_error("region");
}

/* ---- SP_SCOPE's call-site memo ----------------------------------------- */

// The macro gives a literal (a const char array of up to 128 bytes) a
// name_site and every other argument nothing.
static_assert(std::is_same<sp::detail::site_for<decltype(("cxx"))>::type,
                           sp::detail::name_site<4>>::value,
              "a literal gets a name_site of its size");
static_assert(std::is_same<sp::detail::site_for<char (&)[4]>::type, sp::detail::no_site>::value,
              "a writable buffer is looked up every time");
static_assert(std::is_same<sp::detail::site_for<const char *&>::type, sp::detail::no_site>::value,
              "a pointer is looked up every time");
static_assert(std::is_same<sp::detail::site_for<const char (&)[129]>::type,
                           sp::detail::no_site>::value,
              "past 128 bytes there is no memo");

static void site_thread(std::atomic<int> *arrived, int threads) {
    // Every thread executes the site for the first time together.
    arrived->fetch_add(1);
    while (arrived->load() < threads) std::this_thread::yield();
    for (int i = 0; i < 10; ++i) {
        SP_SCOPE("cxx_site_threads");
    }
}

static void test_site() {
    // The memo itself: filled by the first resolution, then kept; other
    // bytes of the same size at the same site are looked up, not stored.
    sp::detail::name_site<sizeof "cxx_site_memo"> site;
    CHECK_EQ_INT(site.stored(), SP_INVALID_REGION);
    for (int i = 0; i < 3; ++i) {
        sp::scope s(site, "cxx_site_memo");
        CHECK(s.active());
    }
    const int memo = sp::region("cxx_site_memo").id();
    CHECK(memo >= 0);
    CHECK_EQ_INT(site.stored(), memo);
    {
        sp::scope s(site, "cxx_site_othr");
        CHECK(s.active());
    }
    CHECK_EQ_INT(site.stored(), memo);

    for (int i = 0; i < 5; ++i) {
        SP_SCOPE("cxx_site_loop");
    }
    // A const array is not always a literal: rebuilt at run time at the
    // same address, it names another region on every other execution. A
    // memo that trusted the address (or its first bytes) would record
    // cxx_site_a four times.
    for (int i = 0; i < 4; ++i) {
        const char name[] = {'c', 'x', 'x', '_', 's', 'i', 't', 'e', '_',
                             static_cast<char>('a' + i % 2), '\0'};
        SP_SCOPE(name);
    }
    // A const array longer than its string: its bytes past the NUL take part
    // in the compare, the name ends at the NUL.
    const char padded[16] = "cxx_site_padded";
    const char short_name[16] = "cxx_site_pad";
    for (int i = 0; i < 2; ++i) {
        SP_SCOPE(i == 0 ? padded : short_name);
    }
    // A writable buffer: looked up every time, whatever it holds.
    char buffer[16];
    for (int i = 0; i < 4; ++i) {
        std::snprintf(buffer, sizeof buffer, "cxx_site_buf%d", i % 2);
        SP_SCOPE(buffer);
    }
    const int threads = 4;
    std::atomic<int> arrived{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) workers.emplace_back(site_thread, &arrived, threads);
    for (std::thread &w : workers) w.join();
    check_no_error("site");
}

/* ---- invalid names ----------------------------------------------------- */

static void test_invalid_name() {
    sp_clear_error();
    {
        SP_SCOPE(""); // rejected by sp_region: nothing begins
        CHECK_EQ_INT(sp_last_error(), SP_ERR_INVALID_ARGUMENT);
        sp_clear_error();
        SP_SCOPE("cxx_valid_after_invalid");
    }
    // Leaving the block ended only the valid call: no unmatched end.
    check_no_error("invalid_name");
}

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <test> <output.h5>\n", argv[0]);
        return 2;
    }
    const std::string test = argv[1];
    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[2];
    options.quiet = 1;

    int finalize_status = SP_OK;
    {
        sp::session run(options);
        CHECK_EQ_INT(run.setup_status(), SP_OK);
        if (test == "normal_exit") {
            test_normal_exit();
        } else if (test == "exception") {
            test_exception();
        } else if (test == "move") {
            test_move();
        } else if (test == "region") {
            test_region();
        } else if (test == "site") {
            test_site();
        } else if (test == "invalid_name") {
            test_invalid_name();
        } else {
            std::fprintf(stderr, "unknown test %s\n", test.c_str());
            return 2;
        }
        finalize_status = run.finish();
        CHECK_EQ_INT(run.finish(), finalize_status); // finish() is idempotent
    } // the session destructor must not finalize a second time
    if (finalize_status != SP_OK) {
        std::fprintf(stderr, "sp_finalize: %s (%s)\n", sp_status_name(finalize_status),
                     sp_error_string(finalize_status));
        ++failures;
    }
    CHECK_EQ_INT(sp_is_active(), 0);
    return failures == 0 ? 0 : 1;
}
