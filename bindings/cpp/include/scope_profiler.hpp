/*
 * scope_profiler.hpp - the C++ binding of libscopeprofiler (header only).
 *
 * Overview
 * --------
 * A thin inline layer over the C API of scope_profiler.h that ties a
 * recorded call to a C++ scope, so that every begin has its end on every
 * path out of the scope: normal exit, return, break and exceptions.
 *
 *     #include <scope_profiler.hpp>
 *
 *     void step() {
 *         SP_FUNCTION();                        // records "step"
 *         {
 *             SP_SCOPE("assemble");             // records "assemble"
 *             assemble();
 *         }                                     // ... ends here
 *         static const scope_profiler::region solve("solve");
 *         for (int i = 0; i < n; ++i) {
 *             scope_profiler::scope s(solve);   // handle resolved once
 *             solve_once();
 *         }
 *     }
 *
 *     int main() {
 *         scope_profiler::session run("run.h5"); // sp_setup ... sp_finalize
 *         step();
 *     }
 *
 * Pieces:
 *   region   a region handle: a name resolved once to the library's id
 *   scope    RAII guard: opens a call in its constructor, closes it in its
 *            destructor (movable, not copyable)
 *   session  RAII guard for sp_setup / sp_finalize (optional; the C calls
 *            work just as well)
 *   SP_SCOPE(name_or_region), SP_FUNCTION()
 *            macros declaring a uniquely named scope in the current block
 *
 * Compile-time switch
 * -------------------
 * Define SCOPE_PROFILER_DISABLE_MACROS (any value, before including this
 * header, typically -DSCOPE_PROFILER_DISABLE_MACROS) to make SP_SCOPE and
 * SP_FUNCTION expand to a no-op expression: their arguments are not
 * evaluated and no profiler symbol is referenced, so code that uses only the
 * macros builds and links without the library. The classes stay declared;
 * code naming them directly still needs the library. The run-time switch
 * SCOPE_PROFILER_DISABLE=1 (see scope_profiler.h) needs no rebuild instead.
 *
 * Thread-safety
 * -------------
 * Everything here may be used from any thread, with the rules of the C API:
 * a call must end on the thread that began it, so a scope must be destroyed
 * (or ended) on the thread that constructed it, even when it was moved; and
 * session must not overlap recording on other threads at its start and end.
 * region objects are immutable after construction and may be shared freely;
 * a function-local static region (what SP_FUNCTION uses) is initialised
 * exactly once even when several threads reach it together.
 *
 * Errors
 * ------
 * Nothing here throws and nothing allocates (apart from the library's own
 * registration of a new name). Failures are reported the C way: through
 * sp_last_error() on the calling thread and one line on stderr. A scope
 * whose region could not be resolved (empty name, out of memory) records
 * nothing and ends nothing.
 */
#ifndef SCOPE_PROFILER_HPP
#define SCOPE_PROFILER_HPP

#include <atomic>
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#if __cplusplus >= 201703L
#include <string_view>
#endif

#include "scope_profiler.h"

namespace scope_profiler {

/**
 * A region handle: a region name resolved once (sp_region) to the id that
 * the fast recording calls take. Cheap to copy (one int). The same name
 * always gives the same handle for the life of the process; a region may be
 * constructed before the session starts and stays valid after it ends.
 * Thread-safety: construction is safe from any thread (the library takes a
 * lock only for names it has not seen); the object is immutable after.
 */
class region {
public:
    /** The invalid handle (valid() is false); scopes on it record nothing. */
    region() noexcept : id_(SP_INVALID_REGION) {}

    /** Resolve a NUL-terminated name. NULL or "" gives an invalid handle
     *  and sets sp_last_error to SP_ERR_INVALID_ARGUMENT. The name is copied
     *  by the library; the pointer need not outlive the call. */
    explicit region(const char *name) noexcept : id_(sp_region(name)) {}

#if __cplusplus >= 201703L
    /** Resolve a sized name (no NUL needed, any length; copied). An empty
     *  view gives an invalid handle, as for region(const char *). */
    explicit region(std::string_view name) noexcept
        : id_(sp_region_n(name.data(), name.size())) {}
#else
    /** Resolve a std::string name (pre-C++17 form of the string_view one). */
    explicit region(const std::string &name) noexcept
        : id_(sp_region_n(name.data(), name.size())) {}
#endif

    /** Adopt a raw handle from the C API (sp_region); not checked here. */
    static region from_id(int id) noexcept { return region(id, adopt_tag()); }

    /** The raw handle for the C API, or SP_INVALID_REGION. */
    int id() const noexcept { return id_; }

    /** true when the handle names a region (resolution succeeded). */
    bool valid() const noexcept { return id_ >= 0; }

    /** The region's name, owned by the library and valid for the life of
     *  the process; NULL for an invalid handle. */
    const char *name() const noexcept { return sp_region_name(id_); }

private:
    struct adopt_tag {};
    region(int id, adopt_tag) noexcept : id_(id) {}

    int id_;
};

namespace detail {

/**
 * What SP_SCOPE keeps at a call site whose argument is a const char array
 * of N bytes (a string literal, or any const array): the bytes it resolved
 * first and their handle, so that a later execution with the same bytes
 * costs a compare of N bytes (a few word compares for a literal) instead
 * of sp_region's lookup. The bytes are compared on every execution, not
 * the address, because a const array need not be a literal: a local one
 * initialised at run time can hold other bytes at the same address on the
 * next execution. A site stores one name, the first one it resolved; other
 * bytes at the same site take the lookup. The object is a function-local
 * static, zero-initialised at compile time (no guard variable).
 * Thread-safety: any thread. One thread fills the site (state_ from empty
 * to filling by compare-exchange), writes the bytes and the handle, then
 * publishes them with a release store; readers use them only after an
 * acquire load sees them published, and they never change after that.
 */
template <std::size_t N>
class name_site {
public:
    constexpr name_site() noexcept = default;

    /** The handle of `name`: the stored one when the bytes match, else
     *  sp_region's (which reports errors as sp_region does). */
    int resolve(const char (&name)[N]) noexcept {
        if (state_.load(std::memory_order_acquire) == published &&
            std::memcmp(bytes_, name, N) == 0)
            return handle_;
        return resolve_and_store(name);
    }

    /** The stored handle, or SP_INVALID_REGION before the site is filled
     *  (for tests and diagnostics). */
    int stored() const noexcept {
        return state_.load(std::memory_order_acquire) == published ? handle_ : SP_INVALID_REGION;
    }

private:
    enum : int { empty = 0, filling = 1, published = 2 };

    int resolve_and_store(const char (&name)[N]) noexcept {
        int handle = sp_region(name);
        int expected = empty;
        if (handle >= 0 &&
            state_.compare_exchange_strong(expected, filling, std::memory_order_acquire)) {
            std::memcpy(bytes_, name, N);
            handle_ = handle;
            state_.store(published, std::memory_order_release);
        }
        return handle;
    }

    std::atomic<int> state_{empty};
    int handle_{SP_INVALID_REGION};
    char bytes_[N]{};
};

/** The site of an argument that is not a const char array: nothing kept. */
struct no_site {};

/* The site SP_SCOPE keeps for an argument of type T (decltype((argument)),
 * so a named array is an lvalue reference to it). Const arrays up to 128
 * bytes keep a name_site; a longer one would cost its own size in static
 * storage and in every compare, for a lookup that hashes no more bytes.
 * (A literal, not a constant: a namespace-scope constant is a symbol in
 * unoptimised builds, and the disabled macros must leave none.) */
template <class T>
struct site_for {
    using type = no_site;
};

template <std::size_t N>
struct site_for<const char (&)[N]> {
    using type = typename std::conditional<(N <= 128), name_site<N>, no_site>::type;
};

} // namespace detail

/**
 * RAII guard for one recorded call: the constructor opens a call of the
 * region on the calling thread (sp_begin), the destructor closes it
 * (sp_end). The destructor is noexcept and also runs during stack
 * unwinding, so an exception leaving the scope still ends the call.
 *
 * Movable, not copyable: moving transfers the open call to the new object;
 * the moved-from object ends nothing. Assignment is deleted because it would
 * end the assigned-to call at a point that is not a scope exit, possibly out
 * of nesting order. Calls must nest: destroy scopes in reverse order of
 * construction on each thread (automatic variables do so by themselves).
 *
 * Thread-safety: a scope must be constructed and destroyed (or ended) on the
 * same thread; distinct scopes on distinct threads need no synchronisation.
 */
class scope {
public:
    /** Open a call of `r`. An invalid region records nothing. */
    explicit scope(region r) noexcept : id_(r.id()) {
        if (id_ >= 0) sp_begin(id_);
    }

    /** Resolve `name` (as region(const char *)) and open a call of it.
     *  This resolves on every construction (a lookup, no lock for known
     *  names); in hot loops prefer a region resolved once. */
    explicit scope(const char *name) noexcept : scope(region(name)) {}

#if __cplusplus >= 201703L
    /** Resolve a sized name and open a call of it (see scope(const char *)). */
    explicit scope(std::string_view name) noexcept : scope(region(name)) {}
#else
    /** Resolve a std::string name and open a call of it. */
    explicit scope(const std::string &name) noexcept : scope(region(name)) {}
#endif

    /** Open a call of `name` through SP_SCOPE's call-site memo: the
     *  site's stored handle when `name` holds the bytes the site stored,
     *  else sp_region (as scope(const char *)). Meant for SP_SCOPE, which
     *  declares the site as a static beside the scope. */
    template <std::size_t N>
    scope(detail::name_site<N> &site, const char (&name)[N]) noexcept : id_(site.resolve(name)) {
        if (id_ >= 0) sp_begin(id_);
    }

    /** SP_SCOPE's form for every other argument: no memo, the matching
     *  constructor above. */
    template <class T>
    scope(detail::no_site &, T &&name_or_region) noexcept
        : scope(std::forward<T>(name_or_region)) {}

    /** Take over the open call of `other`, which then ends nothing. */
    scope(scope &&other) noexcept : id_(other.id_) { other.id_ = SP_INVALID_REGION; }

    scope(const scope &) = delete;
    scope &operator=(const scope &) = delete;
    scope &operator=(scope &&) = delete;

    /** Close the call, unless it was moved away or already ended. */
    ~scope() noexcept { end(); }

    /** Close the call now, before the end of the scope (e.g. to leave a
     *  region before a long tail of code). Later calls and the destructor
     *  do nothing. A call that is not the innermost open call of this thread
     *  is not closed: sp_last_error becomes SP_ERR_UNMATCHED_END. */
    void end() noexcept {
        if (id_ >= 0) {
            sp_end(id_);
            id_ = SP_INVALID_REGION;
        }
    }

    /** true while this object still owns an open call. */
    bool active() const noexcept { return id_ >= 0; }

private:
    int id_;
};

/**
 * RAII guard for a profiling session: sp_setup in the constructor,
 * sp_finalize in the destructor (which writes the file). Use it in main()
 * or an equivalent outermost scope; it must outlive every scope.
 * Not copyable, not movable (there is one session per process).
 *
 * Thread-safety: as sp_setup / sp_finalize: construct and destroy it on one
 * thread while no other thread records.
 */
class session {
public:
    /** sp_setup(file_path); NULL means $SCOPE_PROFILER_FILE, else
     *  "profiling_data.h5". setup_status() tells the result. */
    explicit session(const char *file_path = nullptr) noexcept
        : setup_status_(sp_setup(file_path)), finalize_status_(SP_ERR_NOT_ACTIVE), open_(true) {}

    /** sp_setup_with_options(&options) (see sp_options in scope_profiler.h). */
    explicit session(const sp_options &options) noexcept
        : setup_status_(sp_setup_with_options(&options)), finalize_status_(SP_ERR_NOT_ACTIVE),
          open_(true) {}

    session(const session &) = delete;
    session &operator=(const session &) = delete;

    /** finish(), unless it was already called. */
    ~session() noexcept { finish(); }

    /** sp_finalize now (write the file) and return its status; later calls
     *  return the same status without finalizing again. The returns are
     *  those of sp_finalize, e.g. SP_OK, SP_ERR_OUTPUT,
     *  SP_ERR_OPEN_AT_FINALIZE; SP_ERR_NOT_ACTIVE when setup had failed. */
    int finish() noexcept {
        if (open_) {
            open_ = false;
            // A failed setup started nothing: finalizing would end a session
            // that someone else set up.
            if (setup_status_ == SP_OK) finalize_status_ = sp_finalize();
        }
        return finalize_status_;
    }

    /** The status sp_setup returned: SP_OK, SP_ERR_ALREADY_ACTIVE,
     *  SP_ERR_INVALID_ARGUMENT or SP_ERR_OUT_OF_MEMORY. */
    int setup_status() const noexcept { return setup_status_; }

private:
    int setup_status_;
    int finalize_status_;
    bool open_;
};

/** sp_pause: stop recording on every thread until resume(); calls already
 *  open end cleanly. Never fails; safe from any thread. */
inline void pause() noexcept { sp_pause(); }

/** sp_resume: record again after pause(). Never fails; any thread. */
inline void resume() noexcept { sp_resume(); }

/** sp_is_paused: true while recording is paused. */
inline bool paused() noexcept { return sp_is_paused() != 0; }

/**
 * RAII pause: recording paused for the life of the object (e.g. around
 * I/O or a warm-up), resumed by the destructor. Not nestable with other
 * pauses (the inner one's destructor resumes). Not copyable.
 */
class pause_scope {
public:
    pause_scope() noexcept { sp_pause(); }
    pause_scope(const pause_scope &) = delete;
    pause_scope &operator=(const pause_scope &) = delete;
    ~pause_scope() noexcept { sp_resume(); }
};

} // namespace scope_profiler

/* ---------------------------------------------------------------------------
 * Macros
 *
 * SP_SCOPE(x)     declares a scope on x (a name: const char *, std::string
 *                 or std::string_view; or a scope_profiler::region) that
 *                 lasts to the end of the enclosing block. Several may appear
 *                 in one block, even on one line. A string literal (any
 *                 const char array up to 128 bytes) is looked up on the
 *                 site's first execution only: later ones compare its bytes
 *                 with those the site stored (detail::name_site), about
 *                 what a handle costs.
 * SP_FUNCTION()   declares a scope named after the enclosing function
 *                 (__func__, the unqualified name); its region is resolved
 *                 once, on the first call, through a function-local static.
 *
 * Both are statements (end them with a semicolon) and must appear at block
 * scope. With SCOPE_PROFILER_DISABLE_MACROS defined, both expand to a
 * no-op expression: no argument is evaluated, nothing is referenced.
 * ------------------------------------------------------------------------- */

#define SP_CONCAT_IMPL_(a, b) a##b
#define SP_CONCAT_(a, b) SP_CONCAT_IMPL_(a, b)
/* __COUNTER__ (GCC, Clang, MSVC, Intel) keeps names unique even for two
 * macros on one line; __LINE__ is the portable fallback. */
#ifdef __COUNTER__
#define SP_UNIQUE_(base) SP_CONCAT_(base, __COUNTER__)
#else
#define SP_UNIQUE_(base) SP_CONCAT_(base, __LINE__)
#endif

#ifdef SCOPE_PROFILER_DISABLE_MACROS
/* sizeof: the argument is type-checked but not evaluated and not odr-used,
 * so nothing is called or linked, while helpers used only in the argument
 * draw no unused warnings and both builds keep compiling the same code. */
#define SP_SCOPE(name_or_region) static_cast<void>(sizeof(name_or_region))
#define SP_FUNCTION() static_cast<void>(0)
#else
/* Both macros declare a static and a scope from one unique stem (expanding
 * SP_UNIQUE_ twice would give two different numbers). SP_SCOPE's static is
 * the site detail::site_for picks for the argument's type; decltype
 * evaluates nothing, so the argument is still evaluated once. */
#define SP_SCOPE(name_or_region) SP_SCOPE_IMPL_(SP_UNIQUE_(sp_scope_), name_or_region)
#define SP_SCOPE_IMPL_(stem, name_or_region)                                             \
    static typename ::scope_profiler::detail::site_for<decltype((name_or_region))>::type \
        SP_CONCAT_(stem, _site);                                                         \
    ::scope_profiler::scope SP_CONCAT_(stem, _scope)(SP_CONCAT_(stem, _site), name_or_region)
#define SP_FUNCTION() SP_FUNCTION_IMPL_(SP_UNIQUE_(sp_function_))
#define SP_FUNCTION_IMPL_(stem)                                            \
    static const ::scope_profiler::region SP_CONCAT_(stem, _region)(__func__); \
    ::scope_profiler::scope SP_CONCAT_(stem, _scope)(SP_CONCAT_(stem, _region))
#endif

#endif /* SCOPE_PROFILER_HPP */
