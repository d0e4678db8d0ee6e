!> gptl - the GPTL timing API for Fortran, over scope-profiler
!> (libscopeprofiler_gptl). `use gptl` in a GPTL-annotated code builds
!> unchanged against this module and links our library instead of libgptl.
!>
!>     use gptl
!>     integer :: ret, handle = 0
!>     ret = gptlinitialize()               ! starts a session (SCOPE_PROFILER_FILE)
!>     ret = gptlstart('total')
!>     ret = gptlstart_handle('step', handle)
!>     ret = gptlstop_handle('step', handle)
!>     ret = gptlstop('total')
!>     ret = gptlpr(rank)                   ! our summary table into timing.<rank>
!>     ret = gptlfinalize()                 ! writes the file
!>
!> Every function returns 0 on success and -1 on failure (GPTL's
!> convention); nothing stops the program. The meaning of each function,
!> option and return value is documented once, in gptl.h.
!>
!> Like GPTL's own module, this one declares external procedures (their
!> names with one trailing underscore, implemented in C in
!> gptl_fortran.c): a program built against GPTL's module, or one that
!> declares `integer gptlstart; external gptlstart`, calls the very same
!> symbols, so it too links (or runs under LD_PRELOAD) against this library.
!> Names: trailing blanks are not part of a name.
!>
!> Thread-safety: as gptl.h (start/stop from any thread, OpenMP included).
module gptl
   implicit none
   private

   ! GPTLsetoption options, with GPTL's values (gptl.h: GPTL_Option)
   integer, parameter, public :: gptlsync_mpi = 0, gptlwall = 1, gptlcpu = 2, &
      gptlabort_on_error = 3, gptloverhead = 4, gptldepthlimit = 5, gptlverbose = 6, &
      gptlnarrowprint = 7, gptlpercent = 9, gptlpersec = 10, gptlmultiplex = 11, &
      gptldopr_preamble = 12, gptldopr_threadsort = 13, gptldopr_multparent = 14, &
      gptldopr_collision = 15, gptlprint_method = 16, gptldopr_memusage = 27, &
      gptltablesize = 50, gptlmaxthreads = 51, gptlonlyprint_rank0 = 52
   integer, parameter, public :: gptl_ipc = 17, gptl_lstpi = 21, gptl_dcmrt = 22, &
      gptl_lstpdcm = 23, gptl_l2mrt = 24, gptl_lstpl2m = 25, gptl_l3mrt = 26
   ! GPTLsetutr timers (GPTL_Funcoption) and print methods (GPTL_Method)
   integer, parameter, public :: gptlgettimeofday = 1, gptlnanotime = 2, &
      gptlread_real_time = 3, gptlmpiwtime = 4, gptlclockgettime = 5, gptlpapitime = 6, &
      gptlplacebo = 7
   integer, parameter, public :: gptlfirst_parent = 1, gptllast_parent = 2, &
      gptlmost_frequent = 3, gptlfull_tree = 4

   public :: gptlinitialize, gptlfinalize, gptlsetoption, gptlsetutr
   public :: gptlstart, gptlstop, gptlinit_handle, gptlstart_handle, gptlstop_handle
   public :: gptlpr, gptlpr_file, gptlpr_summary, gptlpr_summary_file
   public :: gptlreset, gptlenable, gptldisable
   public :: gptlget_wallclock, gptlquery, gptlstamp

   interface
      integer function gptlinitialize()
      end function gptlinitialize

      integer function gptlfinalize()
      end function gptlfinalize

      integer function gptlsetoption(option, val)
         integer, intent(in) :: option, val
      end function gptlsetoption

      integer function gptlsetutr(option)
         integer, intent(in) :: option
      end function gptlsetutr

      integer function gptlstart(name)
         character(len=*), intent(in) :: name
      end function gptlstart

      integer function gptlstop(name)
         character(len=*), intent(in) :: name
      end function gptlstop

      integer function gptlinit_handle(name, handle)
         character(len=*), intent(in) :: name
         integer, intent(inout) :: handle
      end function gptlinit_handle

      integer function gptlstart_handle(name, handle)
         character(len=*), intent(in) :: name
         integer, intent(inout) :: handle
      end function gptlstart_handle

      integer function gptlstop_handle(name, handle)
         character(len=*), intent(in) :: name
         integer, intent(inout) :: handle
      end function gptlstop_handle

      integer function gptlpr(procid)
         integer, intent(in) :: procid
      end function gptlpr

      integer function gptlpr_file(file)
         character(len=*), intent(in) :: file
      end function gptlpr_file

      !> fcomm: a Fortran MPI communicator handle (`use mpi`), or 0 for
      !> MPI_COMM_WORLD; ignored in a build without MPI.
      integer function gptlpr_summary(fcomm)
         integer, intent(in) :: fcomm
      end function gptlpr_summary

      integer function gptlpr_summary_file(fcomm, file)
         integer, intent(in) :: fcomm
         character(len=*), intent(in) :: file
      end function gptlpr_summary_file

      integer function gptlreset()
      end function gptlreset

      integer function gptlenable()
      end function gptlenable

      integer function gptldisable()
      end function gptldisable

      integer function gptlget_wallclock(name, t, value)
         character(len=*), intent(in) :: name
         integer, intent(in) :: t
         real(8), intent(out) :: value
      end function gptlget_wallclock

      integer function gptlquery(name, t, count, onflg, wallclock, usr, sys, &
                                 papicounters_out, maxcounters)
         character(len=*), intent(in) :: name
         integer, intent(in) :: t
         integer, intent(out) :: count, onflg
         real(8), intent(out) :: wallclock, usr, sys
         integer(8), intent(out) :: papicounters_out
         integer, intent(in) :: maxcounters
      end function gptlquery

      integer function gptlstamp(wall, usr, sys)
         real(8), intent(out) :: wall, usr, sys
      end function gptlstamp
   end interface
end module gptl
