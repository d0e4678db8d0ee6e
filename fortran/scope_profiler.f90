!> scope_profiler - the Fortran 2008 interface to libscopeprofiler.
!>
!> One page of documentation serves both languages: every public name here
!> is the C name of scope_profiler.h with the same meaning and status codes.
!>
!>     use scope_profiler
!>     integer :: solve
!>     call sp_setup('run.h5')             ! $SCOPE_PROFILER_FILE overrides it
!>     solve = sp_region('solve')          ! resolve a handle once ...
!>     do step = 1, n
!>        call sp_begin(solve)             ! ... and use it in hot loops
!>        call sp_region_begin('assemble') ! or record by name
!>        call sp_region_end('assemble')
!>        call sp_end(solve)
!>     end do
!>     call sp_finalize()
!>
!> Strings cross the C ABI as the characters of the actual argument plus
!> len_trim of it (the *_n entry points of the C core), so a name is never
!> copied, never truncated and needs no NUL; trailing blanks are not part of
!> a name. Nothing here allocates on the recording path.
!>
!> Errors: every fallible procedure ends with optional `stat` and `errmsg`,
!> the way Fortran's own statements do. When either is present the status is
!> returned and this module prints nothing (errmsg is assigned only on error).
!> When both are absent a failure prints one line on stderr and the program
!> continues: a profiler must never stop the simulation it measures, so this
!> module never calls `stop` or `error stop`.
!>
!> Thread-safety: as the C API. Recording calls may be made from any thread
!> (inside OpenMP parallel regions); sp_setup and sp_finalize from one
!> thread outside parallel regions.
module scope_profiler
   use, intrinsic :: iso_c_binding, only: c_char, c_int, c_int64_t, c_size_t, &
      c_ptr, c_associated, c_f_pointer
   use, intrinsic :: iso_fortran_env, only: error_unit
   implicit none
   private

   public :: sp_setup, sp_setup_mpi, sp_finalize, sp_is_active, sp_now_ns
   public :: sp_region_begin, sp_region_end
   public :: sp_region, sp_begin, sp_end, sp_region_name
   public :: sp_pause, sp_resume, sp_is_paused
   public :: sp_last_error, sp_clear_error, sp_error_string, sp_status_name

   include 'scope_profiler_status.inc'

   ! The raw C entry points. They stay private: they take characters as
   ! assumed-size c_char arrays plus a length, which is an ABI detail the
   ! friendly wrappers below hide.
   interface
      ! fortran/scope_profiler_fortran_shim.c: sp_setup_with_options without
      ! mirroring struct sp_options in Fortran (its layout may grow).
      function c_spf_setup(file_path, file_path_len, label, label_len, mode) &
         bind(C, name='spf_setup') result(status)
         import :: c_char, c_size_t, c_int
         character(kind=c_char), intent(in) :: file_path(*)
         integer(c_size_t), value, intent(in) :: file_path_len
         character(kind=c_char), intent(in) :: label(*)
         integer(c_size_t), value, intent(in) :: label_len
         integer(c_int), value, intent(in) :: mode
         integer(c_int) :: status
      end function c_spf_setup

      function c_spf_setup_mpi(comm, file_path, file_path_len, label, label_len, mode) &
         bind(C, name='spf_setup_mpi') result(status)
         import :: c_char, c_size_t, c_int
         integer(c_int), value, intent(in) :: comm
         character(kind=c_char), intent(in) :: file_path(*)
         integer(c_size_t), value, intent(in) :: file_path_len
         character(kind=c_char), intent(in) :: label(*)
         integer(c_size_t), value, intent(in) :: label_len
         integer(c_int), value, intent(in) :: mode
         integer(c_int) :: status
      end function c_spf_setup_mpi

      subroutine c_sp_set_thread_diagnostics(enabled) bind(C, name='sp_set_thread_diagnostics')
         import :: c_int
         integer(c_int), value, intent(in) :: enabled
      end subroutine c_sp_set_thread_diagnostics

      function c_sp_last_error_message() bind(C, name='sp_last_error_message') result(message)
         import :: c_ptr
         type(c_ptr) :: message
      end function c_sp_last_error_message

      function c_sp_finalize() bind(C, name='sp_finalize') result(status)
         import :: c_int
         integer(c_int) :: status
      end function c_sp_finalize

      function c_sp_is_active() bind(C, name='sp_is_active') result(active)
         import :: c_int
         integer(c_int) :: active
      end function c_sp_is_active

      function c_sp_now_ns() bind(C, name='sp_now_ns') result(now_ns)
         import :: c_int64_t
         integer(c_int64_t) :: now_ns
      end function c_sp_now_ns

      function c_sp_region_begin_n(name, name_len) &
         bind(C, name='sp_region_begin_n') result(status)
         import :: c_char, c_size_t, c_int
         character(kind=c_char), intent(in) :: name(*)
         integer(c_size_t), value, intent(in) :: name_len
         integer(c_int) :: status
      end function c_sp_region_begin_n

      function c_sp_region_end_n(name, name_len) &
         bind(C, name='sp_region_end_n') result(status)
         import :: c_char, c_size_t, c_int
         character(kind=c_char), intent(in) :: name(*)
         integer(c_size_t), value, intent(in) :: name_len
         integer(c_int) :: status
      end function c_sp_region_end_n

      function c_sp_region_n(name, name_len) &
         bind(C, name='sp_region_n') result(region)
         import :: c_char, c_size_t, c_int
         character(kind=c_char), intent(in) :: name(*)
         integer(c_size_t), value, intent(in) :: name_len
         integer(c_int) :: region
      end function c_sp_region_n

      subroutine c_sp_begin(region) bind(C, name='sp_begin')
         import :: c_int
         integer(c_int), value, intent(in) :: region
      end subroutine c_sp_begin

      subroutine c_sp_end(region) bind(C, name='sp_end')
         import :: c_int
         integer(c_int), value, intent(in) :: region
      end subroutine c_sp_end

      function c_sp_region_name(region) bind(C, name='sp_region_name') result(name)
         import :: c_int, c_ptr
         integer(c_int), value, intent(in) :: region
         type(c_ptr) :: name
      end function c_sp_region_name

      subroutine c_sp_pause() bind(C, name='sp_pause')
      end subroutine c_sp_pause

      subroutine c_sp_resume() bind(C, name='sp_resume')
      end subroutine c_sp_resume

      function c_sp_is_paused() bind(C, name='sp_is_paused') result(paused)
         import :: c_int
         integer(c_int) :: paused
      end function c_sp_is_paused

      function c_sp_last_error() bind(C, name='sp_last_error') result(status)
         import :: c_int
         integer(c_int) :: status
      end function c_sp_last_error

      subroutine c_sp_clear_error() bind(C, name='sp_clear_error')
      end subroutine c_sp_clear_error

      function c_sp_error_string(status) bind(C, name='sp_error_string') result(message)
         import :: c_int, c_ptr
         integer(c_int), value, intent(in) :: status
         type(c_ptr) :: message
      end function c_sp_error_string

      function c_sp_status_name(status) bind(C, name='sp_status_name') result(name)
         import :: c_int, c_ptr
         integer(c_int), value, intent(in) :: status
         type(c_ptr) :: name
      end function c_sp_status_name

      function c_strlen(text) bind(C, name='strlen') result(length)
         import :: c_ptr, c_size_t
         type(c_ptr), value, intent(in) :: text
         integer(c_size_t) :: length
      end function c_strlen
   end interface

   !> sp_setup over an MPI communicator. A generic name, so that module
   !> scope_profiler_mpi_f08 can add the type(MPI_Comm) form to it.
   interface sp_setup_mpi
      module procedure sp_setup_mpi_integer
   end interface sp_setup_mpi

contains

   ! ---- lifecycle ---------------------------------------------------------

   !> Start profiling. file_path: the HDF5 file sp_finalize writes; absent or
   !> blank means "profiling_data.h5"; $SCOPE_PROFILER_FILE overrides it, and
   !> %r/%j/%p expand to rank, batch job id, process id as in C (so the
   !> result of get_command_argument can be passed as is). label: the run's
   !> label in the metadata; absent or blank means $SCOPE_PROFILER_LABEL or
   !> none. mode (after stat and errmsg, so positional calls of earlier
   !> versions keep working; pass it by keyword): SP_MODE_TRACE or
   !> SP_MODE_AGGREGATE (per call path, constant memory); absent means
   !> SP_MODE_AUTO ($SCOPE_PROFILER_MODE, else a trace).
   !> stat: SP_OK, SP_ERR_ALREADY_ACTIVE (the running session is unchanged),
   !> SP_ERR_INVALID_ARGUMENT (an unknown mode) or SP_ERR_OUT_OF_MEMORY.
   subroutine sp_setup(file_path, label, stat, errmsg, mode)
      character(len=*), intent(in), optional :: file_path
      character(len=*), intent(in), optional :: label
      integer, intent(out), optional :: stat
      character(len=*), intent(inout), optional :: errmsg
      integer, intent(in), optional :: mode
      integer(c_int) :: status, c_mode

      c_mode = SP_MODE_AUTO
      if (present(mode)) c_mode = int(mode, c_int)

      ! Length 0 tells the shim "not given"; the blank actual argument is
      ! only there because Fortran 2008 cannot pass an absent optional to C.
      if (present(file_path) .and. present(label)) then
         status = c_spf_setup(file_path, c_len(file_path), label, c_len(label), c_mode)
      else if (present(file_path)) then
         status = c_spf_setup(file_path, c_len(file_path), ' ', 0_c_size_t, c_mode)
      else if (present(label)) then
         status = c_spf_setup(' ', 0_c_size_t, label, c_len(label), c_mode)
      else
         status = c_spf_setup(' ', 0_c_size_t, ' ', 0_c_size_t, c_mode)
      end if
      call deliver('sp_setup', status, stat, errmsg)
   end subroutine sp_setup

   !> sp_setup over the ranks of an MPI communicator, collective over it.
   !> comm: the integer handle of `use mpi` (or comm%MPI_VAL of a
   !> `use mpi_f08` type(MPI_Comm)). sp_finalize then writes ONE file for all
   !> ranks. stat: as sp_setup, plus SP_ERR_MPI (MPI not initialised) and
   !> SP_ERR_UNSUPPORTED (a library built without MPI). mode: as sp_setup.
   subroutine sp_setup_mpi_integer(comm, file_path, label, stat, errmsg, mode)
      integer, intent(in) :: comm
      character(len=*), intent(in), optional :: file_path
      character(len=*), intent(in), optional :: label
      integer, intent(out), optional :: stat
      character(len=*), intent(inout), optional :: errmsg
      integer, intent(in), optional :: mode
      integer(c_int) :: status, c_mode
      integer(c_int) :: c_comm

      c_mode = SP_MODE_AUTO
      if (present(mode)) c_mode = int(mode, c_int)

      c_comm = int(comm, c_int)
      if (present(file_path) .and. present(label)) then
         status = c_spf_setup_mpi(c_comm, file_path, c_len(file_path), label, c_len(label), c_mode)
      else if (present(file_path)) then
         status = c_spf_setup_mpi(c_comm, file_path, c_len(file_path), ' ', 0_c_size_t, c_mode)
      else if (present(label)) then
         status = c_spf_setup_mpi(c_comm, ' ', 0_c_size_t, label, c_len(label), c_mode)
      else
         status = c_spf_setup_mpi(c_comm, ' ', 0_c_size_t, ' ', 0_c_size_t, c_mode)
      end if
      call deliver('sp_setup_mpi', status, stat, errmsg)
   end subroutine sp_setup_mpi_integer

   !> Stop profiling, write the file (atomically: on failure no file is left
   !> behind) and release the buffers; handles stay valid. stat: SP_OK,
   !> SP_ERR_NOT_ACTIVE (harmless, never printed), SP_ERR_OUTPUT (e.g. a
   !> missing directory), SP_ERR_HDF5, SP_ERR_OUT_OF_MEMORY, or, when the file
   !> was written but calls were lost, SP_ERR_OPEN_AT_FINALIZE or
   !> SP_ERR_BUFFER_LIMIT.
   subroutine sp_finalize(stat, errmsg)
      integer, intent(out), optional :: stat
      character(len=*), intent(inout), optional :: errmsg
      integer(c_int) :: status
      logical :: caller_reports

      caller_reports = present(stat) .or. present(errmsg)
      if (caller_reports) call c_sp_set_thread_diagnostics(0_c_int)
      status = c_sp_finalize()
      if (caller_reports) call c_sp_set_thread_diagnostics(1_c_int)
      ! Finalizing an inactive profiler is documented as harmless (an
      ! unprofiled run, SCOPE_PROFILER_DISABLE=1): report it only on request.
      if (status == SP_ERR_NOT_ACTIVE .and. .not. (present(stat) .or. present(errmsg))) return
      call deliver('sp_finalize', status, stat, errmsg, core_reported=status /= SP_ERR_NOT_ACTIVE)
   end subroutine sp_finalize

   !> .true. between sp_setup and sp_finalize when not disabled.
   logical function sp_is_active()
      sp_is_active = c_sp_is_active() /= 0
   end function sp_is_active

   !> The current time in ns on the recording clock (CLOCK_MONOTONIC).
   integer(c_int64_t) function sp_now_ns()
      sp_now_ns = c_sp_now_ns()
   end function sp_now_ns

   ! ---- recording by name -------------------------------------------------

   !> Open a call of region `name` (trailing blanks ignored) on this thread.
   !> stat: SP_OK (also when not active), SP_ERR_INVALID_ARGUMENT (blank
   !> name) or SP_ERR_OUT_OF_MEMORY.
   subroutine sp_region_begin(name, stat, errmsg)
      character(len=*), intent(in) :: name
      integer, intent(out), optional :: stat
      character(len=*), intent(inout), optional :: errmsg
      integer(c_int) :: status

      ! The common call (no stat, no errmsg, success) is one call into the
      ! core and one compare: the optional arguments are looked at before
      ! the call and not needed after it, so nothing is kept across it.
      if (present(stat) .or. present(errmsg)) then
         call region_reported(.true., name, stat, errmsg)
         return
      end if
      status = c_sp_region_begin_n(name, name_len(name))
      if (status /= SP_OK) call deliver('sp_region_begin', status)
   end subroutine sp_region_begin

   !> Close the innermost open call of this thread, which must be of `name`.
   !> stat: SP_OK (also when not active), SP_ERR_INVALID_ARGUMENT,
   !> SP_ERR_NESTING (`name` is open further out, a region begun inside it
   !> is still open: nothing changes), SP_ERR_UNMATCHED_END (`name` is not
   !> open: nothing changes) or SP_ERR_BUFFER_LIMIT.
   subroutine sp_region_end(name, stat, errmsg)
      character(len=*), intent(in) :: name
      integer, intent(out), optional :: stat
      character(len=*), intent(inout), optional :: errmsg
      integer(c_int) :: status

      if (present(stat) .or. present(errmsg)) then
         call region_reported(.false., name, stat, errmsg)
         return
      end if
      status = c_sp_region_end_n(name, name_len(name))
      if (status /= SP_OK) call deliver('sp_region_end', status, &
                                        core_reported=status == SP_ERR_UNMATCHED_END .or. &
                                        status == SP_ERR_NESTING)
   end subroutine sp_region_end

   ! ---- recording by handle -----------------------------------------------

   !> The handle of region `name` (trailing blanks ignored), registering it
   !> if new; SP_INVALID_REGION for a blank name or when memory ran out
   !> (sp_last_error tells which). Valid before sp_setup and after
   !> sp_finalize; the same name always gives the same handle.
   integer(c_int) function sp_region(name)
      character(len=*), intent(in) :: name
      sp_region = c_sp_region_n(name, c_len(name))
   end function sp_region

   !> Open a call of the region with handle `region`. An invalid handle
   !> records nothing, prints one line (unless quiet) and sets sp_last_error
   !> to SP_ERR_INVALID_REGION.
   subroutine sp_begin(region)
      integer(c_int), intent(in) :: region
      call c_sp_begin(region)
   end subroutine sp_begin

   !> Close the innermost open call of this thread, which must be of
   !> `region`; a mismatch changes nothing, prints one line (unless quiet)
   !> and sets sp_last_error (SP_ERR_NESTING, SP_ERR_UNMATCHED_END or
   !> SP_ERR_INVALID_REGION).
   subroutine sp_end(region)
      integer(c_int), intent(in) :: region
      call c_sp_end(region)
   end subroutine sp_end

   !> The name of a region handle, or '' for an invalid handle.
   function sp_region_name(region) result(name)
      integer(c_int), intent(in) :: region
      character(len=:), allocatable :: name
      name = fortran_string(c_sp_region_name(region))
   end function sp_region_name

   !> Stop recording on every thread until sp_resume: calls begun from now
   !> on record nothing, calls already open end cleanly (see sp_pause in
   !> scope_profiler.h). Never fails.
   subroutine sp_pause()
      call c_sp_pause()
   end subroutine sp_pause

   !> Record again after sp_pause. Never fails.
   subroutine sp_resume()
      call c_sp_resume()
   end subroutine sp_resume

   !> .true. while recording is paused (sp_pause, SCOPE_PROFILER_START=paused).
   logical function sp_is_paused()
      sp_is_paused = c_sp_is_paused() /= 0_c_int
   end function sp_is_paused

   ! ---- status ------------------------------------------------------------

   !> The last non-SP_OK status of this thread (also from sp_begin/sp_end).
   integer(c_int) function sp_last_error()
      sp_last_error = c_sp_last_error()
   end function sp_last_error

   !> Reset this thread's sp_last_error to SP_OK.
   subroutine sp_clear_error()
      call c_sp_clear_error()
   end subroutine sp_clear_error

   !> The English message of a status code ("unknown status" outside the table).
   function sp_error_string(status) result(message)
      integer, intent(in) :: status
      character(len=:), allocatable :: message
      message = fortran_string(c_sp_error_string(int(status, c_int)))
   end function sp_error_string

   !> The name of a status code ("SP_ERR_OUTPUT"), or "SP_UNKNOWN".
   function sp_status_name(status) result(name)
      integer, intent(in) :: status
      character(len=:), allocatable :: name
      name = fortran_string(c_sp_status_name(int(status, c_int)))
   end function sp_status_name

   ! ---- private helpers -----------------------------------------------------

   !> The length the C core sees: trailing blanks are Fortran padding, not
   !> part of a name.
   !> len_trim(name) written out for the by-name calls, which take it on
   !> every call: gfortran's len_trim is a call into libgfortran, which costs
   !> more than this loop over a name's few (usually no) trailing blanks
   !> (bench/side_by_side, Fortran by name).
   pure integer(c_size_t) function name_len(name)
      character(len=*), intent(in) :: name
      integer :: n
      n = len(name)
      do while (n > 0)
         if (iachar(name(n:n)) /= 32) exit ! a blank; a character compare would call libgfortran
         n = n - 1
      end do
      name_len = int(n, c_size_t)
   end function name_len

   !> sp_region_begin (begin true) or sp_region_end with stat or errmsg:
   !> the status goes to the caller, and for an end the core must not print
   !> its own line. One procedure for both, big enough and called twice, so
   !> that the compiler keeps it out of line: inlined, its registers would be
   !> saved on every by-name call.
   subroutine region_reported(begin, name, stat, errmsg)
      logical, intent(in) :: begin
      character(len=*), intent(in) :: name
      integer, intent(out), optional :: stat
      character(len=*), intent(inout), optional :: errmsg
      integer(c_int) :: status

      if (begin) then
         call deliver('sp_region_begin', c_sp_region_begin_n(name, name_len(name)), stat, errmsg)
         return
      end if
      call c_sp_set_thread_diagnostics(0_c_int)
      status = c_sp_region_end_n(name, name_len(name))
      call c_sp_set_thread_diagnostics(1_c_int)
      call deliver('sp_region_end', status, stat, errmsg, &
                   core_reported=status == SP_ERR_UNMATCHED_END .or. status == SP_ERR_NESTING)
   end subroutine region_reported

   pure integer(c_size_t) function c_len(text)
      character(len=*), intent(in) :: text
      c_len = int(len_trim(text), c_size_t)
   end function c_len

   !> Hand a status to the caller the way Fortran statements do: through
   !> stat/errmsg when the caller asked for it, else one line on stderr.
   !> core_reported: the C core has already printed its own, more precise
   !> line for this status (sp_finalize's write errors name the file and the
   !> reason; an unmatched end names both regions), so a second line would
   !> only repeat it.
   !> (status by value: the by-name calls then keep theirs in a register.)
   subroutine deliver(procedure_name, status, stat, errmsg, core_reported)
      character(len=*), intent(in) :: procedure_name
      integer(c_int), value, intent(in) :: status
      integer, intent(out), optional :: stat
      character(len=*), intent(inout), optional :: errmsg
      logical, intent(in), optional :: core_reported
      character(len=:), allocatable :: detail

      if (present(stat)) stat = int(status)
      if (status == SP_OK) return
      if (present(errmsg)) then
         ! The core's own message names the file or region; fall back to the
         ! generic text of the status when it left none.
         detail = ''
         if (present(core_reported)) then
            if (core_reported) detail = fortran_string(c_sp_last_error_message())
         end if
         if (len(detail) == 0) detail = sp_error_string(int(status))
         errmsg = procedure_name//': '//detail
      end if
      if (present(stat) .or. present(errmsg)) return
      if (present(core_reported)) then
         if (core_reported) return
      end if
      if (quiet_requested()) return
      write (error_unit, '(a)') 'scope-profiler: '//procedure_name//': '// &
         sp_error_string(int(status))
   end subroutine deliver

   !> SCOPE_PROFILER_QUIET silences the core's diagnostics; it silences this
   !> module's too, with the values the core accepts. (Read on the error
   !> path only; quiet=1 given to sp_setup_with_options from C is not
   !> visible here.)
   logical function quiet_requested()
      character(len=8) :: value
      integer :: env_status
      call get_environment_variable('SCOPE_PROFILER_QUIET', value, status=env_status)
      quiet_requested = env_status == 0 .and. (value == '1' .or. value == 'true' .or. &
                                               value == 'yes' .or. value == 'on')
   end function quiet_requested

   !> Copy a NUL-terminated C string owned by the library ('' for NULL).
   function fortran_string(text) result(copy)
      type(c_ptr), intent(in) :: text
      character(len=:), allocatable :: copy
      character(kind=c_char), pointer :: chars(:)
      integer :: i, length

      if (.not. c_associated(text)) then
         copy = ''
         return
      end if
      length = int(c_strlen(text))
      call c_f_pointer(text, chars, [length])
      allocate (character(len=length) :: copy)
      do i = 1, length
         copy(i:i) = chars(i)
      end do
   end function fortran_string

end module scope_profiler
