/*
 * caliper/cali_macros.h - Caliper's annotation macros and C++ classes over
 * the functions of caliper/cali.h (libscopeprofiler_caliper). Included by
 * cali.h; may be included on its own after it.
 *
 * C macros (Caliper's names and arguments):
 *   CALI_MARK_BEGIN(name) / CALI_MARK_END(name)        a region
 *   CALI_MARK_FUNCTION_BEGIN / CALI_MARK_FUNCTION_END  a region named __func__
 *   CALI_MARK_LOOP_BEGIN(id, name) / CALI_MARK_LOOP_END(id)
 *   CALI_MARK_ITERATION_BEGIN(id, i) / CALI_MARK_ITERATION_END(id)
 *                                 one call of "iteration#<name>" per iteration
 *   CALI_WRAP_STATEMENT(name, statement)
 *   CALI_MARK_PHASE_BEGIN/END(name), CALI_MARK_COMM_REGION_BEGIN/END(name)
 * C++ macros (the call closes when the scope ends, on every exit path):
 *   CALI_CXX_MARK_FUNCTION, CALI_CXX_MARK_SCOPE(name),
 *   CALI_CXX_MARK_LOOP_BEGIN(id, name), CALI_CXX_MARK_LOOP_END(id),
 *   CALI_CXX_MARK_LOOP_ITERATION(id, i)
 * C++ classes: cali::ScopeAnnotation, cali::Function, cali::Loop (with
 * Loop::Iteration), cali::Annotation, and cali::ConfigManager, whose every
 * member is accepted and ignored (one message per process; error() is
 * false, so code that checks it goes on).
 *
 * Thread-safety: as the functions they call (any thread).
 */
#ifndef CALI_CALI_MACROS_H
#define CALI_CALI_MACROS_H

#include "cali.h"

#define CALI_MARK_BEGIN(name) cali_begin_region(name)
#define CALI_MARK_END(name) cali_end_region(name)
#define CALI_MARK_FUNCTION_BEGIN cali_begin_region(__func__)
#define CALI_MARK_FUNCTION_END cali_end_region(__func__)
#define CALI_MARK_PHASE_BEGIN(name) cali_begin_phase(name)
#define CALI_MARK_PHASE_END(name) cali_end_phase(name)
#define CALI_MARK_COMM_REGION_BEGIN(name) cali_begin_comm_region(name)
#define CALI_MARK_COMM_REGION_END(name) cali_end_comm_region(name)

/* A loop: its region, and the attribute its iterations are recorded under
 * (a variable named after loop_id, as in Caliper). */
#define CALI_MARK_LOOP_BEGIN(loop_id, name)      \
    cali_begin_string(cali_loop_attr_id, (name)); \
    cali_id_t sp_cali_iter_##loop_id = cali_make_loop_iteration_attribute(name)
#define CALI_MARK_LOOP_END(loop_id) cali_end(cali_loop_attr_id)
#define CALI_MARK_ITERATION_BEGIN(loop_id, iter) \
    cali_begin_int(sp_cali_iter_##loop_id, ((int)(iter)))
#define CALI_MARK_ITERATION_END(loop_id) cali_end(sp_cali_iter_##loop_id)

#define CALI_WRAP_STATEMENT(name, statement) \
    cali_begin_region((name));               \
    statement;                               \
    cali_end_region((name))

#ifdef __cplusplus

#include <string>

namespace cali {

/** A region open for the lifetime of the object (CALI_CXX_MARK_SCOPE). */
class ScopeAnnotation {
public:
    explicit ScopeAnnotation(const char *name) { cali_begin_region(name); }
    ~ScopeAnnotation() { cali_end(cali_annotation_attr_id); }
    ScopeAnnotation(const ScopeAnnotation &) = delete;
    ScopeAnnotation &operator=(const ScopeAnnotation &) = delete;
};

/** A function's region for the lifetime of the object (CALI_CXX_MARK_FUNCTION). */
class Function {
public:
    explicit Function(const char *name) { cali_begin_string(cali_function_attr_id, name); }
    ~Function() { cali_end(cali_function_attr_id); }
    Function(const Function &) = delete;
    Function &operator=(const Function &) = delete;
};

/** A loop's region, and its iterations (CALI_CXX_MARK_LOOP_*). */
class Loop {
public:
    /** One iteration: a call of "iteration#<loop>" for the object's lifetime. */
    class Iteration {
    public:
        Iteration(cali_id_t attr, int i) : attr_(attr) { cali_begin_int(attr_, i); }
        ~Iteration() { cali_end(attr_); }
        Iteration(const Iteration &) = delete;
        Iteration &operator=(const Iteration &) = delete;
    private:
        cali_id_t attr_;
    };
    explicit Loop(const char *name)
        : iteration_attr_(cali_make_loop_iteration_attribute(name)), open_(true) {
        cali_begin_string(cali_loop_attr_id, name);
    }
    ~Loop() { end(); }
    /** The attribute of this loop's iterations (for Iteration). */
    cali_id_t iteration_attribute() const { return iteration_attr_; }
    /** Close the loop's region now (the destructor then does nothing). */
    void end() {
        if (open_) cali_end(cali_loop_attr_id);
        open_ = false;
    }
    Loop(const Loop &) = delete;
    Loop &operator=(const Loop &) = delete;
private:
    cali_id_t iteration_attr_;
    bool open_;
};

/** A user attribute (Caliper's cali::Annotation): begin opens a region as
 *  the cali_begin* functions do, end closes it; set is not recorded. */
class Annotation {
public:
    explicit Annotation(const char *name, int properties = 0)
        : attr_(cali_create_attribute(name, CALI_TYPE_STRING, properties)) {}
    Annotation &begin() { cali_begin(attr_); return *this; }
    Annotation &begin(int value) { cali_begin_int(attr_, value); return *this; }
    Annotation &begin(double value) { cali_begin_double(attr_, value); return *this; }
    Annotation &begin(const char *value) { cali_begin_string(attr_, value); return *this; }
    Annotation &set(int value) { cali_set_int(attr_, value); return *this; }
    Annotation &set(double value) { cali_set_double(attr_, value); return *this; }
    Annotation &set(const char *value) { cali_set_string(attr_, value); return *this; }
    void end() { cali_end(attr_); }
private:
    cali_id_t attr_;
};

/** Caliper's configuration manager: accepted and ignored (one message);
 *  the profile goes where scope-profiler's settings say. */
class ConfigManager {
public:
    ConfigManager() {}
    explicit ConfigManager(const char *config) { add(config); }
    bool add(const char *) { ignored(); return true; }
    void add_option_spec(const char *) { ignored(); }
    void add_config_spec(const char *) { ignored(); }
    void set_default_parameter(const char *, const char *) { ignored(); }
    bool error() const { return false; }
    std::string error_msg() const { return std::string(); }
    std::string check(const char *, bool = false) const { return std::string(); }
    void start() { ignored(); }
    void stop() { ignored(); }
    void flush() { ignored(); }
private:
    static void ignored() { sp_caliper_config_ignored("cali::ConfigManager"); }
};

} // namespace cali

#define SP_CALI_CAT_(a, b) a##b
#define SP_CALI_CAT(a, b) SP_CALI_CAT_(a, b)
#define CALI_CXX_MARK_FUNCTION cali::Function SP_CALI_CAT(sp_cali_function_, __LINE__)(__func__)
#define CALI_CXX_MARK_SCOPE(name) \
    cali::ScopeAnnotation SP_CALI_CAT(sp_cali_scope_, __LINE__)(name)
#define CALI_CXX_MARK_LOOP_BEGIN(loop_id, name) cali::Loop sp_cali_loop_##loop_id(name)
#define CALI_CXX_MARK_LOOP_END(loop_id) sp_cali_loop_##loop_id.end()
#define CALI_CXX_MARK_LOOP_ITERATION(loop_id, iter)                      \
    cali::Loop::Iteration sp_cali_iter_##loop_id(                        \
        sp_cali_loop_##loop_id.iteration_attribute(), static_cast<int>(iter))

#endif /* __cplusplus */

#endif /* CALI_CALI_MACROS_H */
