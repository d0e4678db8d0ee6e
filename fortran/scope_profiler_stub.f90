!> scope_profiler (stub) - module scope_profiler with every procedure empty,
!> for building a program with the profiler compiled out and no source change.
!>
!> The same module name, public names, argument lists and status values as
!> fortran/scope_profiler.f90, so `use scope_profiler` and every call compile
!> unchanged; nothing here records, prints, allocates or touches a file, and
!> nothing links libscopeprofiler. Use it through the CMake target
!> ScopeProfiler::scopeprofiler_fortran_stub (an INTERFACE target whose only
!> content is this source: the program compiles it into itself) or, without
!> CMake, by compiling this file (and scope_profiler_status.inc beside it,
!> which it includes) with the program:
!>
!>     gfortran $(pkg-config --variable=fortran_stub scopeprofiler-fortran) app.f90
!>
!> What the procedures report: sp_setup and the other fallible procedures set
!> stat = SP_OK and leave errmsg alone; sp_is_active is .false.; sp_region
!> returns 0; sp_now_ns 0; sp_last_error SP_OK; sp_region_name ''.
!> Every procedure body is empty or one assignment, so with -flto (or the
!> stub in the program's own compilation unit) the calls vanish entirely.
!>
!> The `if (...) continue` lines only mark dummy arguments as used (gfortran
!> -Wall warns about unused ones, and programs build with -Werror); they
!> compile to nothing.
!>
!> The public list is checked against the real module's by the test
!> fortran_stub_interface, so the two cannot drift apart.
module scope_profiler
   use, intrinsic :: iso_c_binding, only: c_int, c_int64_t
   implicit none
   private

   public :: sp_setup, sp_setup_mpi, sp_finalize, sp_is_active, sp_now_ns
   public :: sp_region_begin, sp_region_end
   public :: sp_region, sp_begin, sp_end, sp_region_name
   public :: sp_pause, sp_resume, sp_is_paused
   public :: sp_last_error, sp_clear_error, sp_error_string, sp_status_name

   include 'scope_profiler_status.inc'

   interface sp_setup_mpi
      module procedure sp_setup_mpi_integer
   end interface sp_setup_mpi

contains

   subroutine sp_setup(file_path, label, stat, errmsg, mode)
      character(len=*), intent(in), optional :: file_path
      character(len=*), intent(in), optional :: label
      integer, intent(out), optional :: stat
      character(len=*), intent(inout), optional :: errmsg
      integer, intent(in), optional :: mode
      if (present(stat)) stat = SP_OK
      if (present(file_path) .or. present(label) .or. present(errmsg) .or. present(mode)) continue
   end subroutine sp_setup

   subroutine sp_setup_mpi_integer(comm, file_path, label, stat, errmsg, mode)
      integer, intent(in) :: comm
      character(len=*), intent(in), optional :: file_path
      character(len=*), intent(in), optional :: label
      integer, intent(out), optional :: stat
      character(len=*), intent(inout), optional :: errmsg
      integer, intent(in), optional :: mode
      if (present(stat)) stat = SP_OK
      if (comm < -huge(comm) .or. present(file_path) .or. present(label) .or. &
          present(errmsg) .or. present(mode)) continue
   end subroutine sp_setup_mpi_integer

   subroutine sp_finalize(stat, errmsg)
      integer, intent(out), optional :: stat
      character(len=*), intent(inout), optional :: errmsg
      if (present(stat)) stat = SP_OK
      if (present(errmsg)) continue
   end subroutine sp_finalize

   logical function sp_is_active()
      sp_is_active = .false.
   end function sp_is_active

   integer(c_int64_t) function sp_now_ns()
      sp_now_ns = 0_c_int64_t
   end function sp_now_ns

   subroutine sp_region_begin(name, stat, errmsg)
      character(len=*), intent(in) :: name
      integer, intent(out), optional :: stat
      character(len=*), intent(inout), optional :: errmsg
      if (present(stat)) stat = SP_OK
      if (len(name) < 0 .or. present(errmsg)) continue
   end subroutine sp_region_begin

   subroutine sp_region_end(name, stat, errmsg)
      character(len=*), intent(in) :: name
      integer, intent(out), optional :: stat
      character(len=*), intent(inout), optional :: errmsg
      if (present(stat)) stat = SP_OK
      if (len(name) < 0 .or. present(errmsg)) continue
   end subroutine sp_region_end

   integer(c_int) function sp_region(name)
      character(len=*), intent(in) :: name
      sp_region = 0_c_int
      if (len(name) < 0) continue
   end function sp_region

   subroutine sp_begin(region)
      integer(c_int), intent(in) :: region
      if (region < -huge(region)) continue
   end subroutine sp_begin

   subroutine sp_end(region)
      integer(c_int), intent(in) :: region
      if (region < -huge(region)) continue
   end subroutine sp_end

   function sp_region_name(region) result(name)
      integer(c_int), intent(in) :: region
      character(len=:), allocatable :: name
      name = ''
      if (region < -huge(region)) continue
   end function sp_region_name

   subroutine sp_pause()
   end subroutine sp_pause

   subroutine sp_resume()
   end subroutine sp_resume

   logical function sp_is_paused()
      sp_is_paused = .false.
   end function sp_is_paused

   integer(c_int) function sp_last_error()
      sp_last_error = SP_OK
   end function sp_last_error

   subroutine sp_clear_error()
   end subroutine sp_clear_error

   function sp_error_string(status) result(message)
      integer, intent(in) :: status
      character(len=:), allocatable :: message
      message = 'profiling compiled out (scope_profiler stub)'
      if (status < -huge(status)) continue
   end function sp_error_string

   function sp_status_name(status) result(name)
      integer, intent(in) :: status
      character(len=:), allocatable :: name
      name = 'SP_UNKNOWN'
      if (status == SP_OK) name = 'SP_OK'
   end function sp_status_name

end module scope_profiler
