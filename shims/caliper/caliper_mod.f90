!> caliper_mod - Caliper's Fortran annotation API over scope-profiler
!> (libscopeprofiler_caliper). `use caliper_mod` in a Caliper-annotated code
!> builds unchanged against this module and links our library instead of
!> libcaliper.
!>
!>     use caliper_mod
!>     type(ConfigManager) :: mgr
!>     mgr = ConfigManager_new()          ! accepted and ignored (one message)
!>     call mgr%add('runtime-report')
!>     call mgr%start()
!>     call cali_begin_region('main')     ! the first annotation starts a session
!>     call cali_end_region('main')
!>     call mgr%flush()                   ! the file is written at exit or in MPI_Finalize
!>     call mgr%delete()
!>
!> Regions, mismatches and sessions behave as documented in caliper/cali.h.
!> Names: trailing blanks are not part of a name; the characters go to C
!> with their length, never copied.
!>
!> The module procedures have Caliper's names, so their linker symbols are
!> those of Caliper's own caliper_mod compiled by the same compiler: a
!> program built against either module links against this library.
!>
!> Thread-safety: as the C API (regions from any thread, OpenMP included).
!>
!> The configuration procedures ignore their arguments by design; the build
!> compiles this file with -Wno-unused-dummy-argument for that reason.
module caliper_mod
   use, intrinsic :: iso_c_binding, only: c_char, c_int, c_size_t, c_null_char
   implicit none
   private

   public :: cali_begin_region, cali_end_region, cali_begin_phase, cali_end_phase
   public :: cali_init, cali_config_set, cali_config_preset
   public :: configmanager, configmanager_new, configmanager_delete

   ! Caliper's attribute types and properties (caliper/cali.h)
   integer(c_int), parameter, public :: cali_type_inv = 0, cali_type_usr = 1, &
      cali_type_int = 2, cali_type_uint = 3, cali_type_string = 4, cali_type_addr = 5, &
      cali_type_double = 6, cali_type_bool = 7, cali_type_type = 8, cali_type_ptr = 9
   integer(c_int), parameter, public :: cali_attr_default = 0, cali_attr_asvalue = 1, &
      cali_attr_nomerge = 2, cali_attr_scope_process = 12, cali_attr_scope_thread = 20, &
      cali_attr_scope_task = 24, cali_attr_skip_events = 64, cali_attr_hidden = 128, &
      cali_attr_nested = 256, cali_attr_global = 512, cali_attr_unaligned = 1024

   !> Caliper's configuration manager: every member is accepted and ignored
   !> (one message per process); error() is .false. so checking code goes on.
   type :: configmanager
      integer(c_int), private :: unused = 0
   contains
      procedure :: add => configmanager_add
      procedure :: set_default_parameter => configmanager_set_default_parameter
      procedure :: error => configmanager_error
      procedure :: error_msg => configmanager_error_msg
      procedure :: start => configmanager_start
      procedure :: stop => configmanager_stop
      procedure :: flush => configmanager_flush
      procedure :: delete => configmanager_delete
   end type configmanager

   interface
      subroutine c_begin_region(name, len) bind(C, name='spc_fortran_begin_region')
         import :: c_char, c_size_t
         character(kind=c_char), intent(in) :: name(*)
         integer(c_size_t), value, intent(in) :: len
      end subroutine c_begin_region

      subroutine c_end_region(name, len) bind(C, name='spc_fortran_end_region')
         import :: c_char, c_size_t
         character(kind=c_char), intent(in) :: name(*)
         integer(c_size_t), value, intent(in) :: len
      end subroutine c_end_region

      subroutine c_init() bind(C, name='spc_fortran_init')
      end subroutine c_init

      subroutine c_config_ignored(call) bind(C, name='sp_caliper_config_ignored')
         import :: c_char
         character(kind=c_char), intent(in) :: call(*)
      end subroutine c_config_ignored
   end interface

contains

   !> Open a call of region `name` (cali.h: cali_begin_region).
   subroutine cali_begin_region(name)
      character(len=*), intent(in) :: name
      call c_begin_region(name, int(len(name), c_size_t))
   end subroutine cali_begin_region

   !> Close the innermost region (cali.h: cali_end_region).
   subroutine cali_end_region(name)
      character(len=*), intent(in) :: name
      call c_end_region(name, int(len(name), c_size_t))
   end subroutine cali_end_region

   !> A phase: a region like any other.
   subroutine cali_begin_phase(name)
      character(len=*), intent(in) :: name
      call c_begin_region(name, int(len(name), c_size_t))
   end subroutine cali_begin_phase

   !> Close a phase, as cali_end_region.
   subroutine cali_end_phase(name)
      character(len=*), intent(in) :: name
      call c_end_region(name, int(len(name), c_size_t))
   end subroutine cali_end_phase

   !> Start the session now (otherwise the first annotation does).
   subroutine cali_init()
      call c_init()
   end subroutine cali_init

   !> Accepted and ignored (one message), as in C.
   subroutine cali_config_set(key, value)
      character(len=*), intent(in) :: key, value
      call c_config_ignored('cali_config_set'//c_null_char)
   end subroutine cali_config_set

   !> Accepted and ignored (one message), as in C.
   subroutine cali_config_preset(key, value)
      character(len=*), intent(in) :: key, value
      call c_config_ignored('cali_config_preset'//c_null_char)
   end subroutine cali_config_preset

   !> A configuration manager (ignored, one message).
   function configmanager_new() result(mgr)
      type(configmanager) :: mgr
      mgr%unused = 0
      call c_config_ignored('ConfigManager'//c_null_char)
   end function configmanager_new

   subroutine configmanager_add(self, config)
      class(configmanager), intent(inout) :: self
      character(len=*), intent(in) :: config
      call c_config_ignored('ConfigManager%add'//c_null_char)
   end subroutine configmanager_add

   subroutine configmanager_set_default_parameter(self, key, value)
      class(configmanager), intent(inout) :: self
      character(len=*), intent(in) :: key, value
      call c_config_ignored('ConfigManager%set_default_parameter'//c_null_char)
   end subroutine configmanager_set_default_parameter

   !> Always .false.: nothing can go wrong with a configuration that is ignored.
   logical function configmanager_error(self)
      class(configmanager), intent(in) :: self
      configmanager_error = .false.
   end function configmanager_error

   !> Always empty.
   function configmanager_error_msg(self) result(msg)
      class(configmanager), intent(in) :: self
      character(len=:), allocatable :: msg
      msg = ''
   end function configmanager_error_msg

   subroutine configmanager_start(self)
      class(configmanager), intent(inout) :: self
      call c_config_ignored('ConfigManager%start'//c_null_char)
   end subroutine configmanager_start

   subroutine configmanager_stop(self)
      class(configmanager), intent(inout) :: self
   end subroutine configmanager_stop

   !> Ignored: the file is written when the session ends.
   subroutine configmanager_flush(self)
      class(configmanager), intent(inout) :: self
   end subroutine configmanager_flush

   subroutine configmanager_delete(self)
      class(configmanager), intent(inout) :: self
      self%unused = 0
   end subroutine configmanager_delete
end module caliper_mod
