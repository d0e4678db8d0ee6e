!> scope_profiler_mpi_f08 - sp_setup_mpi for codes that `use mpi_f08`.
!>
!>     use mpi_f08
!>     use scope_profiler
!>     use scope_profiler_mpi_f08
!>     call sp_setup_mpi(MPI_COMM_WORLD, 'run.h5')   ! a type(MPI_Comm)
!>
!> Adds the type(MPI_Comm) form to the generic sp_setup_mpi of module
!> scope_profiler (which takes the integer handle of `use mpi`). It uses only
!> the type's MPI_VAL component, so the library itself calls no MPI routine
!> here. Built only when the MPI installation provides mpi_f08.
module scope_profiler_mpi_f08
   use mpi_f08, only: MPI_Comm
   use scope_profiler, only: sp_setup_mpi
   implicit none
   private

   public :: sp_setup_mpi

   interface sp_setup_mpi
      module procedure sp_setup_mpi_f08
   end interface sp_setup_mpi

contains

   !> sp_setup over the ranks of `comm` (collective); arguments and stat
   !> values as sp_setup_mpi of module scope_profiler.
   subroutine sp_setup_mpi_f08(comm, file_path, label, stat, errmsg, mode)
      type(MPI_Comm), intent(in) :: comm
      character(len=*), intent(in), optional :: file_path
      character(len=*), intent(in), optional :: label
      integer, intent(out), optional :: stat
      character(len=*), intent(inout), optional :: errmsg
      integer, intent(in), optional :: mode

      call sp_setup_mpi(comm%MPI_VAL, file_path=file_path, label=label, mode=mode, stat=stat, &
                        errmsg=errmsg)
   end subroutine sp_setup_mpi_f08

end module scope_profiler_mpi_f08
